//! `connecta.describe` (contract S4): exact shapes for up to 100 addresses,
//! in the order asked, one entry per address. An unknown address, or one
//! whose connector's catalog could not be loaded, becomes an entry carrying
//! `error` (with up to three "did you mean" addresses); it never fails the
//! whole call. More than 100 addresses is `invalid_args`; the 256,000-byte
//! ceiling of search pages applies.
//!
//! Defaults: `format: "json"` (exact schemas — describe is where exact
//! constraints live), short descriptions unless `fullDescriptions`, key lists
//! on (describe is a code-mode surface), annotations always.

use serde_json::{Map, Value, json};

use connecta_core::address::{Address, format_address};
use connecta_core::error::{MAX_ECHO_BYTES, ToolError, clamp_text};

use super::entry::{EntryOptions, Schemas, entry};
use super::page::check_size;
use super::source::Source;
use super::suggest::nearest;

pub const MAX_DESCRIBE_ADDRESSES: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DescribeFormat {
    Compact,
    #[default]
    Json,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribeRequest {
    pub addresses: Vec<String>,
    pub format: DescribeFormat,
    pub full_descriptions: bool,
}

/// Validate `connecta.describe` arguments.
pub fn parse_describe_args(args: &Value) -> Result<DescribeRequest, ToolError> {
    let Some(map) = args.as_object() else {
        return Err(ToolError::invalid_args(
            "describe takes {addresses: [\"<connector>.<tool>\", …], format?, fullDescriptions?}",
        ));
    };
    let mut req = DescribeRequest {
        addresses: Vec::new(),
        format: DescribeFormat::Json,
        full_descriptions: false,
    };
    for (key, value) in map {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "addresses" => {
                let list = value.as_array().ok_or_else(|| {
                    ToolError::invalid_args("addresses must be an array of address strings")
                })?;
                if list.len() > MAX_DESCRIBE_ADDRESSES {
                    return Err(ToolError::invalid_args(format!(
                        "describe takes at most {MAX_DESCRIBE_ADDRESSES} addresses, got {}; split the list into several calls",
                        list.len()
                    )));
                }
                for a in list {
                    let s = a.as_str().ok_or_else(|| {
                        ToolError::invalid_args("addresses must be an array of address strings")
                    })?;
                    req.addresses.push(s.to_owned());
                }
            }
            "format" => {
                req.format = match value.as_str() {
                    Some("compact") => DescribeFormat::Compact,
                    Some("json") => DescribeFormat::Json,
                    _ => {
                        return Err(ToolError::invalid_args(
                            "format must be \"compact\" or \"json\"",
                        ));
                    }
                }
            }
            "fullDescriptions" => {
                req.full_descriptions = value.as_bool().ok_or_else(|| {
                    ToolError::invalid_args("fullDescriptions must be true or false")
                })?
            }
            other => {
                return Err(ToolError::invalid_args(format!(
                    "unknown argument \"{}\" for connecta.describe; it takes addresses, format, fullDescriptions",
                    clamp_text(other, 64)
                )));
            }
        }
    }
    Ok(req)
}

/// Describe every address of `req` against `sources`.
pub fn describe(req: &DescribeRequest, sources: &[Source<'_>]) -> Result<Value, ToolError> {
    if req.addresses.len() > MAX_DESCRIBE_ADDRESSES {
        return Err(ToolError::invalid_args(format!(
            "describe takes at most {MAX_DESCRIBE_ADDRESSES} addresses, got {}",
            req.addresses.len()
        )));
    }
    let opts = EntryOptions {
        schemas: match req.format {
            DescribeFormat::Compact => Schemas::Compact,
            DescribeFormat::Json => Schemas::Json,
        },
        full_descriptions: req.full_descriptions,
        keys: true,
        annotations: true,
    };
    let mut guided: Vec<&str> = Vec::new();
    let mut tools = Vec::with_capacity(req.addresses.len());
    for address in &req.addresses {
        let parsed = Address::parse(address);
        let source = parsed.and_then(|a| sources.iter().find(|s| s.connector() == a.connector));
        let value = match (parsed, source) {
            (Some(a), Some(Source::Ready { index, guide })) => match index.tool_id(a.tool) {
                Some(id) => {
                    let guide = guide.filter(|_| {
                        let first = !guided.contains(&a.connector);
                        guided.push(a.connector);
                        first
                    });
                    entry(index, id, guide, opts)
                }
                None => {
                    let candidates: Vec<String> = index
                        .catalog()
                        .tools()
                        .iter()
                        .map(|t| format_address(a.connector, &t.name))
                        .collect();
                    let e = ToolError::unknown_tool(a.connector, a.tool);
                    failed(address, with_suggestions(e, address, &candidates))
                }
            },
            (Some(_), Some(Source::Failed { error, .. })) => failed(address, (*error).clone()),
            _ => {
                let candidates: Vec<String> = sources
                    .iter()
                    .filter_map(|s| match s {
                        Source::Ready { index, .. } => Some(index),
                        Source::Failed { .. } => None,
                    })
                    .flat_map(|ix| {
                        ix.catalog()
                            .tools()
                            .iter()
                            .map(|t| format_address(ix.connector(), &t.name))
                    })
                    .collect();
                let e = ToolError::unknown_address(address);
                failed(address, with_suggestions(e, address, &candidates))
            }
        };
        tools.push(value);
    }
    let page = json!({ "tools": tools });
    check_size(
        &page,
        "connecta.describe",
        "fewer addresses per call, format \"compact\", or fullDescriptions false",
    )?;
    Ok(page)
}

fn with_suggestions(e: ToolError, wanted: &str, candidates: &[String]) -> ToolError {
    let near = nearest(wanted, candidates.iter().map(String::as_str), 3);
    if near.is_empty() {
        return e;
    }
    let message = format!("{}; did you mean {}?", e.message, near.join(", "));
    let mut e = e.detail("suggestions", json!(near));
    e.message = message;
    e
}

fn failed(address: &str, error: ToolError) -> Value {
    let mut m = Map::new();
    m.insert(
        "address".into(),
        Value::String(clamp_text(address, MAX_ECHO_BYTES).into_owned()),
    );
    m.insert(
        "error".into(),
        serde_json::to_value(&error).unwrap_or(Value::Null),
    );
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CatalogIndex;
    use connecta_core::catalog::{Catalog, ToolDef};
    use connecta_core::error::ErrorCode;
    use connecta_core::policy::Annotations;
    use std::sync::Arc;

    fn index() -> CatalogIndex {
        let tools = ["list_issues", "get_issue", "create_issue"]
            .iter()
            .map(|n| ToolDef {
                name: (*n).into(),
                title: None,
                description: Some(format!("{n} does things. More.")),
                input_schema: connecta_core::Schema::from(json!({"type":"object","properties":{"id":{"type":"string"}},"required":["id"]})),
                output_schema: Some(connecta_core::Schema::from(json!({"type":"object","properties":{"ok":{"type":"boolean"}}}))),
                annotations: Annotations {
                    read_only_hint: Some(n.starts_with("get") || n.starts_with("list")),
                    ..Annotations::default()
                },
            })
            .collect();
        CatalogIndex::build(Arc::new(Catalog::new("gh", tools)))
    }

    fn req(addresses: &[&str], format: DescribeFormat) -> DescribeRequest {
        DescribeRequest {
            addresses: addresses.iter().map(|s| (*s).to_owned()).collect(),
            format,
            full_descriptions: false,
        }
    }

    #[test]
    fn s4_entries_come_back_in_order_with_per_entry_errors() {
        let ix = index();
        let down = ToolError::new(ErrorCode::CatalogLookupFailed, "jira is down");
        let sources = [Source::ready(&ix), Source::failed("jira", &down)];
        let out = describe(
            &req(
                &[
                    "gh.get_issue",
                    "gh.get_isue",
                    "jira.x",
                    "nope",
                    "gh.list_issues",
                ],
                DescribeFormat::Json,
            ),
            &sources,
        )
        .expect("describes");
        let tools = out["tools"].as_array().expect("array");
        assert_eq!(tools.len(), 5);
        assert_eq!(tools[0]["address"], "gh.get_issue");
        assert_eq!(tools[0]["inputSchema"]["type"], "object");
        assert_eq!(tools[0]["inputKeys"], json!(["id"]));
        assert_eq!(tools[0]["outputKeys"], json!(["ok"]));
        assert_eq!(tools[1]["error"]["code"], "unknown_tool");
        assert_eq!(tools[1]["error"]["suggestions"][0], "gh.get_issue");
        assert!(
            tools[1]["error"]["suggestions"]
                .as_array()
                .is_some_and(|s| s.len() <= 3)
        );
        assert_eq!(tools[2]["error"]["code"], "catalog_lookup_failed");
        assert_eq!(tools[3]["error"]["code"], "unknown_address");
        assert_eq!(tools[4]["address"], "gh.list_issues");
    }

    #[test]
    fn compact_format_renders_shapes() {
        let ix = index();
        let out = describe(
            &req(&["gh.create_issue"], DescribeFormat::Compact),
            &[Source::ready(&ix)],
        )
        .expect("describes");
        assert_eq!(out["tools"][0]["inputSchema"], "{ id: string }");
        assert_eq!(out["tools"][0]["readOnly"], false);
    }

    #[test]
    fn more_than_100_addresses_is_invalid_args() {
        let many: Vec<Value> = (0..101).map(|i| json!(format!("gh.t{i}"))).collect();
        let e = parse_describe_args(&json!({ "addresses": many })).expect_err("refused");
        assert_eq!(e.code, ErrorCode::InvalidArgs);
        let ok: Vec<Value> = (0..100).map(|i| json!(format!("gh.t{i}"))).collect();
        assert!(parse_describe_args(&json!({ "addresses": ok })).is_ok());
        assert!(parse_describe_args(&json!({ "addresses": [], "bogus": 1 })).is_err());
    }
}
