//! Gateway answers → MCP results, and meta-tool definitions → MCP tools.
//! The only place gateway values meet rmcp's model on the way out.

use std::sync::Arc;

use connecta_gateway::MetaOutput;
use connecta_gateway::surface::MetaToolDef;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value};

pub(crate) fn tool(def: &MetaToolDef) -> Tool {
    let schema: JsonObject = match &def.input_schema {
        Value::Object(m) => m.clone(),
        _ => JsonObject::new(),
    };
    Tool::new(def.name, def.description.clone(), Arc::new(schema)).with_annotations(
        ToolAnnotations::with_title(def.title)
            .read_only(def.read_only)
            .destructive(def.destructive)
            .idempotent(def.idempotent)
            .open_world(def.open_world),
    )
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

fn structured(v: Value) -> Value {
    match v {
        Value::Object(_) => v,
        other => {
            let mut m = Map::with_capacity(1);
            m.insert("value".into(), other);
            Value::Object(m)
        }
    }
}

fn block(v: Value) -> Option<ContentBlock> {
    serde_json::from_value(v).ok()
}

pub(crate) fn result(out: MetaOutput) -> CallToolResult {
    match out {
        MetaOutput::Value { value, text, notes } => {
            let text = text.unwrap_or_else(|| compact(&value));
            let mut content = Vec::with_capacity(1 + notes.len());
            content.push(ContentBlock::text(text));
            content.extend(notes.into_iter().map(ContentBlock::text));
            let mut r = CallToolResult::success(content);
            r.structured_content = Some(structured(value));
            r
        }
        MetaOutput::Passthrough(tr) => {
            let content: Vec<ContentBlock> = tr.content.into_iter().filter_map(block).collect();
            let mut r = if tr.is_error {
                CallToolResult::error(content)
            } else {
                CallToolResult::success(content)
            };
            r.structured_content = tr.structured_content;
            r
        }
        MetaOutput::Error(e) => {
            let envelope = e.to_envelope();
            let mut r = CallToolResult::error(vec![ContentBlock::text(compact(&envelope))]);
            r.structured_content = Some(envelope);
            r
        }
        MetaOutput::Rich { value, blocks } => {
            let mut content = Vec::with_capacity(1 + blocks.len());
            content.push(ContentBlock::text(compact(&value)));
            content.extend(blocks.into_iter().filter_map(block));
            let mut r = CallToolResult::success(content);
            r.structured_content = Some(structured(value));
            r
        }
    }
}
