//! `kind = "openapi"` connectors: the tools are the operations of an OpenAPI
//! 3.0 or 3.1 document (`spec`, JSON or YAML), lowered at config load to the
//! same [`ApiTool`]s an `api` connector declares by hand. From there on
//! there is one call path: the guarded fetch, the credential slot, the
//! status mapping and the response projection of `api` connectors.
//!
//! Classification follows the method (GET and HEAD read-only, everything
//! else through the approval boundary) unless `overrides.<tool>` says
//! otherwise. `include_tools`/`exclude_tools` (by tool name or operationId)
//! and `include_tags`/`exclude_tags` choose operations before they are
//! lowered, so a problem in an excluded operation is no problem.
//!
//! Every problem in the document is reported at the config's `spec` key,
//! with the document's own location: `file:line:column` where the text does
//! not parse, `file at /json/pointer` where the document is not usable.

mod document;
mod operation;
mod schema;

use std::collections::HashMap;
use std::ops::Range;

use serde_spanned::Spanned;

use super::diagnostics::Sink;
use super::lower::{finish_api, reject_non_http};
use super::raw::{RawConnector, RawOverride};
use super::{ApiTool, ConnectorKind, HttpMethod, SpecFiles};
use crate::glob::glob_match;
use operation::Op;

/// Problems reported per document before the rest are summed up in one line.
const MAX_SPEC_PROBLEMS: usize = 20;

pub(super) fn lower(
    raw: &RawConnector,
    id: &str,
    span: Range<usize>,
    files: &dyn SpecFiles,
    sink: &mut Sink<'_>,
) -> Option<ConnectorKind> {
    reject_non_http(raw, "openapi", span.clone(), sink);
    if let Some(t) = raw.tool.as_ref().and_then(|t| t.first()) {
        sink.at(
            t.span(),
            "`[[connector.tool]]` does not apply to a connector of kind \"openapi\": its tools are the operations of `spec`",
        );
    }
    let Some(spec) = &raw.spec else {
        sink.at(
            span,
            format!(
                "connector \"{id}\" of kind \"openapi\" needs `spec` (the OpenAPI document's file)"
            ),
        );
        return None;
    };
    if raw.base_url.is_none() {
        sink.at(
            span.clone(),
            format!(
                "connector \"{id}\" of kind \"openapi\" needs `base_url` (the API's root URL, with any base path; the document's `servers` are not used)"
            ),
        );
    }
    let path = spec.get_ref().as_str();
    let text = match files.read(path) {
        Ok(t) => t,
        Err(why) => {
            sink.at(
                spec.span(),
                format!("the OpenAPI document {path} cannot be read: {why}"),
            );
            return None;
        }
    };
    let doc = match document::parse(&text, path) {
        Ok(d) => d,
        Err(e) => {
            sink.at(spec.span(), format!("OpenAPI document {}", e.located(path)));
            return None;
        }
    };
    let tools = lower_operations(raw, &doc, spec, sink)?;
    let base = raw.base_url.as_ref()?;
    finish_api(raw, id, base, tools, Some(path.to_owned()), sink).map(ConnectorKind::Api)
}

/// Which operations a connector keeps.
struct Selection<'r> {
    include: &'r [String],
    exclude: &'r [String],
    include_tags: &'r [String],
    exclude_tags: &'r [String],
}

impl Selection<'_> {
    fn keeps(&self, name: &str, operation_id: Option<&str>, tags: &[String]) -> bool {
        let matches = |patterns: &[String]| {
            patterns
                .iter()
                .any(|p| glob_match(p, name) || operation_id.is_some_and(|id| glob_match(p, id)))
        };
        let tagged = |patterns: &[String]| {
            tags.iter()
                .any(|t| patterns.iter().any(|p| glob_match(p, t)))
        };
        (self.include.is_empty() || matches(self.include))
            && !matches(self.exclude)
            && (self.include_tags.is_empty() || tagged(self.include_tags))
            && !tagged(self.exclude_tags)
    }
}

fn lower_operations(
    raw: &RawConnector,
    doc: &document::Document,
    spec: &Spanned<String>,
    sink: &mut Sink<'_>,
) -> Option<Vec<ApiTool>> {
    let path = spec.get_ref().as_str();
    let empty = Vec::new();
    let selection = Selection {
        include: raw.include_tools.as_deref().unwrap_or_default(),
        exclude: raw.exclude_tools.as_deref().unwrap_or_default(),
        include_tags: raw.include_tags.as_ref().map_or(&empty, |t| t.get_ref()),
        exclude_tags: raw.exclude_tags.as_ref().map_or(&empty, |t| t.get_ref()),
    };
    let no_overrides = std::collections::BTreeMap::new();
    let overrides = raw.overrides.as_ref().unwrap_or(&no_overrides);
    let mut problems: Vec<String> = Vec::new();
    let mut tools: Vec<ApiTool> = Vec::new();
    // Every operation's tool name and operationId, kept or not, for the
    // checks of `overrides` and of duplicate names.
    let mut all: Vec<(String, Option<String>)> = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    let paths = doc.spec.paths.iter().flat_map(|p| p.iter());
    for (template, item) in paths {
        let methods = [
            ("get", HttpMethod::Get, &item.get),
            ("put", HttpMethod::Put, &item.put),
            ("post", HttpMethod::Post, &item.post),
            ("delete", HttpMethod::Delete, &item.delete),
            ("options", HttpMethod::Get, &item.options),
            ("head", HttpMethod::Head, &item.head),
            ("patch", HttpMethod::Patch, &item.patch),
            ("trace", HttpMethod::Get, &item.trace),
        ];
        for (key, method, operation) in methods {
            let Some(operation) = operation else { continue };
            let op = Op {
                path: template,
                method,
                key,
                operation,
                path_parameters: &item.parameters,
            };
            let name = op.tool_name();
            let operation_id = operation.operation_id.clone();
            all.push((name.clone(), operation_id.clone()));
            if !selection.keeps(&name, operation_id.as_deref(), &operation.tags) {
                continue;
            }
            if let Some(other) = seen.insert(name.clone(), op.label()) {
                problems.push(format!(
                    "{path} at {}: {} and {other} are both the tool \"{name}\"; exclude one of them",
                    op.pointer(),
                    op.label()
                ));
                continue;
            }
            if matches!(key, "options" | "trace") {
                problems.push(format!(
                    "{path} at {}: {} is an {} operation, which connecta does not call; exclude it",
                    op.pointer(),
                    op.label(),
                    key.to_ascii_uppercase()
                ));
                continue;
            }
            let mut read_only = matches!(method, HttpMethod::Get | HttpMethod::Head);
            let mut idempotent = None;
            if let Some(o) = overrides.get(&name) {
                let o: &RawOverride = o.get_ref();
                if o.read_only == Some(true) && o.destructive == Some(true) {
                    sink.at(
                        overrides[&name].span(),
                        format!("overrides.{name}: read_only and destructive cannot both be true"),
                    );
                }
                if let Some(r) = o.read_only {
                    read_only = r;
                }
                if o.destructive == Some(true) {
                    read_only = false;
                }
                idempotent = o.idempotent;
            }
            match operation::lower(doc, &op, name, read_only) {
                Ok(mut tool) => {
                    tool.idempotent = idempotent;
                    tools.push(tool);
                }
                Err(e) => problems.push(e.located(path).to_string()),
            }
        }
    }
    for (key, o) in overrides {
        if all.iter().any(|(name, _)| name == key) {
            continue;
        }
        let message = match all
            .iter()
            .find(|(_, id)| id.as_deref() == Some(key.as_str()))
        {
            Some((name, _)) => format!(
                "overrides.\"{key}\": the tool of operationId \"{key}\" is named \"{name}\"; use that name"
            ),
            None => format!("overrides.\"{key}\" names no operation of {path}"),
        };
        sink.at(o.span(), message);
    }
    let failed = !problems.is_empty();
    let more = problems.len().saturating_sub(MAX_SPEC_PROBLEMS);
    for p in problems.into_iter().take(MAX_SPEC_PROBLEMS) {
        sink.at(spec.span(), format!("OpenAPI document {p}"));
    }
    if more > 0 {
        sink.at(
            spec.span(),
            format!("OpenAPI document {path}: {more} more operations have problems"),
        );
    }
    if failed {
        return None;
    }
    if tools.is_empty() {
        sink.at(
            spec.span(),
            format!("OpenAPI document {path}: no operation is left to be a tool (check include_tools, exclude_tools, include_tags and exclude_tags)"),
        );
        return None;
    }
    Some(tools)
}
