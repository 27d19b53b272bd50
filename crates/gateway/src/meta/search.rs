//! `search_tools`: lexical search over the catalogs, one flat page.

use std::sync::Arc;

use connecta_core::error::{ToolError, clamp_text};
use connecta_core::policy::Safety;
use connecta_core::search::{CatalogIndex, MatchMode, SearchQuery, search};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{MetaOutput, parse_args};
use crate::Gateway;

const DEFAULT_LIMIT: usize = 8;
const MAX_LIMIT: usize = 100;
const SHORT_DESCRIPTION_CHARS: usize = 200;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SearchArgs {
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub connector: Option<String>,
    #[serde(default)]
    pub safety: Option<Safety>,
    #[serde(default)]
    pub limit: Option<u64>,
    #[serde(default)]
    pub offset: Option<u64>,
    #[serde(default)]
    pub include_schemas: Option<SchemaFormat>,
    #[serde(default)]
    pub full_descriptions: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) enum SchemaFormat {
    Compact,
    Json,
}

impl Gateway {
    /// The indexes of the catalogs a search covers, plus the connectors whose
    /// catalog could not be loaded (reported on the page, never hidden).
    pub(crate) async fn search_indexes(
        &self,
        connector: Option<&str>,
    ) -> Result<(Vec<Arc<CatalogIndex>>, Vec<Value>), ToolError> {
        let handles: Vec<_> = match connector {
            Some(id) => match self.connector(id) {
                Some(h) => vec![h],
                None => {
                    let known: Vec<&str> = self
                        .connectors()
                        .iter()
                        .map(|h| h.config.id.as_str())
                        .collect();
                    return Err(ToolError::invalid_args(format!(
                        "no connector \"{}\"; connectors: {}",
                        clamp_text(id, 128),
                        known.join(", ")
                    )));
                }
            },
            None => self.connectors().iter().collect(),
        };
        let loads = futures::future::join_all(handles.iter().map(|h| h.catalog.get())).await;
        let mut indexes = Vec::with_capacity(handles.len());
        let mut unavailable = Vec::new();
        for (h, r) in handles.iter().zip(loads) {
            match r {
                Ok(l) => indexes.push(l.index()),
                Err(e) => unavailable.push(json!({
                    "connector": h.config.id,
                    "error": self.scrub(e).to_envelope()["error"],
                })),
            }
        }
        Ok((indexes, unavailable))
    }

    pub(crate) async fn search_tools(
        &self,
        args: Map<String, Value>,
    ) -> Result<MetaOutput, ToolError> {
        let a: SearchArgs = parse_args("search_tools", args)?;
        let limit = match a.limit {
            None => DEFAULT_LIMIT,
            Some(l) if (1..=MAX_LIMIT as u64).contains(&l) => l as usize,
            Some(_) => {
                return Err(ToolError::invalid_args(
                    "limit must be between 1 and 100; page with offset for more",
                ));
            }
        };
        let offset = a.offset.unwrap_or(0).min(usize::MAX as u64) as usize;
        let (indexes, unavailable) = self.search_indexes(a.connector.as_deref()).await?;
        let query = a.query.as_deref().unwrap_or("");
        let hits = search(
            &indexes,
            &SearchQuery {
                query,
                safety: a.safety.unwrap_or_default(),
                limit,
                offset,
            },
        );
        let full = a.full_descriptions.unwrap_or(false);
        let tools: Vec<Value> = hits
            .hits
            .iter()
            .map(|h| {
                let mut e = json!({
                    "address": format!("{}.{}", h.connector, h.tool.name),
                    "name": h.tool.name,
                    "description": if full { h.tool.description().to_owned() } else { short(h.tool.description()) },
                    "safety": if h.tool.read_only() { "readOnly" } else { "approvalRequired" },
                });
                if a.include_schemas.is_some() {
                    e["inputSchema"] = (*h.tool.input_schema).clone();
                    if let Some(o) = &h.tool.output_schema {
                        e["outputSchema"] = (**o).clone();
                    }
                }
                e
            })
            .collect();
        let has_more = offset + tools.len() < hits.total;
        let mut page = json!({
            "tools": tools,
            "total": hits.total,
            "offset": offset,
            "limit": limit,
            "hasMore": has_more,
        });
        if has_more {
            page["nextOffset"] = json!(offset + limit);
        }
        match hits.mode {
            MatchMode::Partial => {
                page["matchMode"] = json!("partial");
                page["queryAnalysis"] = json!({
                    "represented": hits.analysis.represented,
                    "unmatched": hits.analysis.unmatched,
                });
            }
            MatchMode::None if !query.trim().is_empty() => {
                page["matchMode"] = json!("none");
            }
            _ => {}
        }
        if !unavailable.is_empty() {
            page["unavailableConnectors"] = Value::Array(unavailable);
        }
        Ok(MetaOutput::value(page))
    }
}

fn short(description: &str) -> String {
    let first = description
        .split_inclusive(". ")
        .next()
        .unwrap_or(description)
        .trim();
    if first.chars().count() <= SHORT_DESCRIPTION_CHARS {
        return first.to_owned();
    }
    let cut: String = first.chars().take(SHORT_DESCRIPTION_CHARS - 1).collect();
    format!("{cut}…")
}
