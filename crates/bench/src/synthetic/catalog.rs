//! The synthetic catalog: connector and tool names, descriptions, schemas and
//! `tools/list` pages, built once at start and never rebuilt per request.
//!
//! The tool shape is the reference harness's, byte for byte where it matters
//! for comparison (names, description text including the search marker,
//! schemas, annotations), so search and memory figures compare like for like.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{JsonObject, ListToolsResult, Tool, ToolAnnotations};
use serde_json::json;

/// Tools per `tools/list` page unless told otherwise. Small enough that the
/// 10,000-tool connector needs twenty pages, so a client's pagination walk is
/// exercised on every large run.
pub const DEFAULT_PAGE_SIZE: usize = 500;

const TOOL_PREFIX: &str = "lookup_record_";

/// `connector_<c>`: the connector id the gateway config and addresses use.
pub fn connector_id(connector: usize) -> String {
    format!("connector_{connector}")
}

/// `lookup_record_<t>`.
pub fn tool_name(tool: usize) -> String {
    format!("{TOOL_PREFIX}{tool}")
}

/// The canonical gateway address of one synthetic tool.
pub fn address(connector: usize, tool: usize) -> String {
    format!("{}.{}", connector_id(connector), tool_name(tool))
}

/// The tool index named by `lookup_record_<t>`, if `name` has that form.
/// Leading zeros and signs are refused so each tool has exactly one name.
pub fn parse_tool_name(name: &str) -> Option<usize> {
    let digits = name.strip_prefix(TOOL_PREFIX)?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}

/// Bijective base-26 over `a..z` (0 → `a`, 25 → `z`, 26 → `aa`), the
/// reference's encoding for the unique search marker in each description.
pub fn alphabetic(value: usize) -> String {
    let mut remaining = value as u128 + 1;
    let mut letters = Vec::new();
    while remaining > 0 {
        remaining -= 1;
        letters.push(b'a' + (remaining % 26) as u8);
        remaining /= 26;
    }
    letters.reverse();
    String::from_utf8(letters).unwrap_or_default()
}

/// A token that occurs in exactly one tool's description: searching for it
/// must return that tool first.
pub fn marker(connector: usize, tool: usize) -> String {
    format!("markerc{}xt{}", alphabetic(connector), alphabetic(tool))
}

/// The description of `lookup_record_<tool>` on `connector_<connector>`.
pub fn description(connector: usize, tool: usize) -> String {
    format!(
        "Retrieve synthetic performance record {tool} from shard {connector}. Marker {}.",
        marker(connector, tool)
    )
}

fn object(value: serde_json::Value) -> JsonObject {
    match value {
        serde_json::Value::Object(map) => map,
        // Only called with object literals below.
        _ => JsonObject::new(),
    }
}

/// `{value: integer}`, required, nothing else.
pub fn input_schema() -> JsonObject {
    object(json!({
        "type": "object",
        "properties": { "value": { "type": "integer" } },
        "required": ["value"],
        "additionalProperties": false
    }))
}

/// `{connector, tool, value}`, all integers (the indices and the echoed value).
pub fn output_schema() -> JsonObject {
    object(json!({
        "type": "object",
        "properties": {
            "connector": { "type": "integer" },
            "tool": { "type": "integer" },
            "value": { "type": "integer" }
        },
        "required": ["connector", "tool", "value"],
        "additionalProperties": false
    }))
}

/// One connector's tools and their precomputed `tools/list` pages.
#[derive(Debug)]
pub struct ConnectorCatalog {
    /// The connector's index `c` in `connector_<c>`.
    pub index: usize,
    /// Every tool, in index order; `tools[t]` is `lookup_record_<t>`.
    tools: Vec<Tool>,
    /// Tools per `tools/list` page (at least one).
    page_size: usize,
}

impl ConnectorCatalog {
    /// Build connector `index` with `tools` tools. The schemas are shared by
    /// every tool of every connector built from the same `schemas`.
    pub fn new(index: usize, tools: usize, page_size: usize, schemas: &Schemas) -> Self {
        let annotations = ToolAnnotations::new()
            .read_only(true)
            .idempotent(true)
            .destructive(false);
        let tools = (0..tools)
            .map(|t| {
                Tool::new_with_raw(
                    Cow::Owned(tool_name(t)),
                    Some(Cow::Owned(description(index, t))),
                    schemas.input.clone(),
                )
                .with_raw_output_schema(schemas.output.clone())
                .with_annotations(annotations.clone())
            })
            .collect();
        Self {
            index,
            tools,
            page_size: page_size.max(1),
        }
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool named `name`, if this connector has it.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        parse_tool_name(name).and_then(|t| self.tools.get(t))
    }

    /// The `tools/list` page that starts at `cursor` (an offset written by
    /// the previous page's `nextCursor`; absent means the first page).
    pub fn page(&self, cursor: Option<&str>) -> Result<ListToolsResult, InvalidCursor> {
        let start = match cursor {
            None => 0,
            Some(c) => match c.parse::<usize>() {
                Ok(offset) if offset > 0 && offset < self.tools.len() => offset,
                _ => return Err(InvalidCursor(c.to_owned())),
            },
        };
        let end = (start + self.page_size).min(self.tools.len());
        let mut page = ListToolsResult::with_all_items(self.tools[start..end].to_vec());
        if end < self.tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }
}

/// A cursor this server never issued.
#[derive(Debug, thiserror::Error)]
#[error("unknown tools/list cursor {0:?}")]
pub struct InvalidCursor(pub String);

/// The two schemas, allocated once per process and shared by every tool.
#[derive(Debug, Clone)]
pub struct Schemas {
    pub input: Arc<JsonObject>,
    pub output: Arc<JsonObject>,
}

impl Default for Schemas {
    fn default() -> Self {
        Self {
            input: Arc::new(input_schema()),
            output: Arc::new(output_schema()),
        }
    }
}

/// Every connector of a `connectors × tools` catalog.
pub fn build(connectors: usize, tools: usize, page_size: usize) -> Vec<Arc<ConnectorCatalog>> {
    let schemas = Schemas::default();
    (0..connectors)
        .map(|c| Arc::new(ConnectorCatalog::new(c, tools, page_size, &schemas)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphabetic_is_bijective_base_26() {
        assert_eq!(alphabetic(0), "a");
        assert_eq!(alphabetic(25), "z");
        assert_eq!(alphabetic(26), "aa");
        assert_eq!(alphabetic(27), "ab");
        assert_eq!(alphabetic(701), "zz");
        assert_eq!(alphabetic(702), "aaa");
    }

    #[test]
    fn description_carries_the_reference_text_and_a_unique_marker() {
        assert_eq!(
            description(3, 27),
            "Retrieve synthetic performance record 27 from shard 3. Marker markercdxtab."
        );
    }

    #[test]
    fn tool_names_parse_back_to_one_index() {
        assert_eq!(parse_tool_name("lookup_record_0"), Some(0));
        assert_eq!(parse_tool_name("lookup_record_9999"), Some(9999));
        assert_eq!(parse_tool_name("lookup_record_07"), None);
        assert_eq!(parse_tool_name("lookup_record_"), None);
        assert_eq!(parse_tool_name("lookup_record_+1"), None);
        assert_eq!(parse_tool_name("lookup_recordx1"), None);
    }

    #[test]
    fn pages_cover_every_tool_once_in_order() {
        let catalog = ConnectorCatalog::new(0, 1_201, 500, &Schemas::default());
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let page = catalog.page(cursor.as_deref()).expect("issued cursor");
            pages += 1;
            names.extend(page.tools.iter().map(|t| t.name.to_string()));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(pages, 3);
        let expected: Vec<String> = (0..1_201).map(tool_name).collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn cursors_never_issued_are_refused() {
        let catalog = ConnectorCatalog::new(0, 10, 5, &Schemas::default());
        assert!(catalog.page(Some("0")).is_err());
        assert!(catalog.page(Some("10")).is_err());
        assert!(catalog.page(Some("x")).is_err());
        assert!(catalog.page(Some("5")).is_ok());
    }
}
