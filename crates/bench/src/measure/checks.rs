//! What makes an answer count. A fast error is not a fast call: every
//! measured response is checked, and a failed check is counted as an error
//! next to the figure instead of being timed as a success.

use rmcp::model::CallToolResult;
use serde_json::Value;

/// The value of a tool result as a program would see it: `structuredContent`
/// when present, else the first text block parsed as JSON, else that text.
pub fn result_value(result: &CallToolResult) -> Value {
    if let Some(structured) = &result.structured_content {
        return structured.clone();
    }
    let text = first_text(result).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// The first text block, if any.
pub fn first_text(result: &CallToolResult) -> Option<String> {
    result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
}

/// `Err` with the result's text when it is flagged `isError`.
pub fn not_error(result: &CallToolResult) -> Result<(), String> {
    if result.is_error == Some(true) {
        return Err(format!(
            "isError: {}",
            clamp(&first_text(result).unwrap_or_default(), 300)
        ));
    }
    Ok(())
}

/// True when `value` has, at any depth, a member `key` equal to `expected`.
pub fn has_member(value: &Value, key: &str, expected: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| (k == key && numbers_equal(v, expected)) || has_member(v, key, expected)),
        Value::Array(items) => items.iter().any(|v| has_member(v, key, expected)),
        // A gateway may carry the value as JSON text inside a string.
        Value::String(s) if s.starts_with('{') || s.starts_with('[') => serde_json::from_str(s)
            .map(|inner: Value| has_member(&inner, key, expected))
            .unwrap_or(false),
        _ => false,
    }
}

/// True when `value` is, or contains at any depth, the number `expected`.
pub fn contains_number(value: &Value, expected: &Value) -> bool {
    match value {
        Value::Number(_) => numbers_equal(value, expected),
        Value::Object(map) => map.values().any(|v| contains_number(v, expected)),
        Value::Array(items) => items.iter().any(|v| contains_number(v, expected)),
        Value::String(s) => serde_json::from_str(s)
            .map(|inner: Value| !inner.is_string() && contains_number(&inner, expected))
            .unwrap_or(false),
        _ => false,
    }
}

fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// A `lookup_record` echo (direct or through a gateway) carrying `value`.
pub fn echoes(result: &CallToolResult, value: i64) -> Result<(), String> {
    not_error(result)?;
    let expected = Value::from(value);
    let got = result_value(result);
    if has_member(&got, "value", &expected) {
        Ok(())
    } else {
        Err(format!(
            "no \"value\": {value} in the result: {}",
            clamp(&got.to_string(), 300)
        ))
    }
}

/// A search result that names `address` somewhere.
pub fn mentions(result: &CallToolResult, address: &str) -> Result<(), String> {
    not_error(result)?;
    let whole = serde_json::to_string(result).unwrap_or_default();
    if whole.contains(address) {
        Ok(())
    } else {
        Err(format!(
            "{address} is not in the result: {}",
            clamp(&whole, 300)
        ))
    }
}

/// The compact JSON of a result, shortened for a report.
pub fn sample(result: &CallToolResult) -> String {
    clamp(&serde_json::to_string(result).unwrap_or_default(), 600)
}

/// At most `max` bytes of `text`, cut on a character boundary.
pub fn clamp(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let cut = (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;
    use serde_json::json;

    #[test]
    fn echoes_are_found_in_structured_content_and_in_text() {
        let structured = CallToolResult::structured(json!({"connector": 1, "tool": 2, "value": 5}));
        assert!(echoes(&structured, 5).is_ok());
        assert!(echoes(&structured, 6).is_err());
        let wrapped = CallToolResult::success(vec![ContentBlock::text(
            r#"{"result":{"connector":1,"tool":2,"value":5}}"#,
        )]);
        assert!(echoes(&wrapped, 5).is_ok());
        let error = CallToolResult::error(vec![ContentBlock::text(r#"{"value":5}"#)]);
        assert!(echoes(&error, 5).is_err());
    }

    #[test]
    fn the_connector_index_is_not_mistaken_for_the_value() {
        let result = CallToolResult::structured(json!({"connector": 5, "tool": 5, "value": 1}));
        assert!(echoes(&result, 5).is_err());
    }

    #[test]
    fn numbers_are_found_at_any_depth() {
        assert!(contains_number(&json!({"a": [0, {"b": 1}]}), &json!(1)));
        assert!(contains_number(&json!("1"), &json!(1)));
        assert!(!contains_number(&json!({"a": "x1"}), &json!(1)));
    }
}
