//! rmcp wire types ↔ connecta's plain types. The only place in this crate
//! that looks inside rmcp's model.

use connecta_core::catalog::{Schema, ToolDef};
use connecta_core::policy::Annotations;
use connecta_core::result::ToolResult;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

pub(crate) fn tool_def(tool: Tool) -> ToolDef {
    let annotations = tool
        .annotations
        .as_ref()
        .map(|a| Annotations {
            title: a.title.clone(),
            read_only_hint: a.read_only_hint,
            destructive_hint: a.destructive_hint,
            idempotent_hint: a.idempotent_hint,
            open_world_hint: a.open_world_hint,
        })
        .unwrap_or_default();
    ToolDef {
        name: tool.name.into_owned(),
        title: tool.title.or_else(|| annotations.title.clone()),
        description: tool.description.map(|d| d.into_owned()),
        input_schema: Schema::from(tool.input_schema.as_ref()),
        output_schema: tool.output_schema.as_deref().map(Schema::from),
        annotations,
    }
}

pub(crate) fn tool_result(result: CallToolResult) -> ToolResult {
    ToolResult {
        content: result
            .content
            .iter()
            .map(|block| serde_json::to_value(block).unwrap_or(Value::Null))
            .collect(),
        structured_content: result.structured_content,
        is_error: result.is_error.unwrap_or(false),
    }
}
