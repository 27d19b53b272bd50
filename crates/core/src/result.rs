//! Tool results as plain values: the downstream result, its unwrapped value
//! (contract S5), `fields` projection, and byte-offset paging on UTF-8
//! boundaries for stashed results.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::floor_char_boundary;

/// A downstream tool result. Content blocks are kept as their exact JSON so
/// images, audio and anything newer pass through untouched.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResult {
    pub fn text_blocks(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(block_text)
    }

    pub fn all_text(&self) -> bool {
        self.content.iter().all(|b| block_text(b).is_some())
    }

    /// The value a program (or `resultMode: "value"`) receives (S5):
    /// `structuredContent` when present; else, when every block is text, the
    /// text JSON-parsed when it parses and the raw text when it does not (one
    /// value per block when there are several); else the raw result object
    /// with its `content` array intact (the rich-output intake rule).
    pub fn unwrap_value(&self) -> Value {
        if let Some(structured) = &self.structured_content {
            return structured.clone();
        }
        if self.all_text() {
            let mut values: Vec<Value> = self.text_blocks().map(parse_or_string).collect();
            return match values.len() {
                0 => Value::Null,
                1 => values.pop().unwrap_or(Value::Null),
                _ => Value::Array(values),
            };
        }
        let mut raw = Map::with_capacity(1);
        raw.insert("content".into(), Value::Array(self.content.clone()));
        Value::Object(raw)
    }

    /// [`ToolResult::unwrap_value`] of an owned result: structured content
    /// is moved, not copied.
    pub fn into_value(mut self) -> Value {
        match self.structured_content.take() {
            Some(structured) => structured,
            None => self.unwrap_value(),
        }
    }

    /// The first text of an error result, for building a typed failure.
    pub fn error_text(&self) -> String {
        let joined: Vec<&str> = self.text_blocks().collect();
        if joined.is_empty() {
            "the tool reported an error without text".to_owned()
        } else {
            joined.join("\n")
        }
    }
}

pub fn block_text(block: &Value) -> Option<&str> {
    if block.get("type").and_then(Value::as_str) == Some("text") {
        block.get("text").and_then(Value::as_str)
    } else {
        None
    }
}

/// Whether a media type (a `Content-Type` value, or a key of an OpenAPI
/// `content` map) is JSON: `application/json` or a `+json` suffix, with any
/// parameters ignored.
pub fn is_json_media_type(media: &str) -> bool {
    let mime = media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    mime == "application/json" || mime.ends_with("+json")
}

pub fn text_block(text: impl Into<String>) -> Value {
    let mut m = Map::with_capacity(2);
    m.insert("type".into(), Value::String("text".into()));
    m.insert("text".into(), Value::String(text.into()));
    Value::Object(m)
}

fn parse_or_string(text: &str) -> Value {
    let trimmed = text.trim_start();
    if (trimmed.starts_with(['{', '[', '"'])
        || trimmed.starts_with(|c: char| c.is_ascii_digit())
        || matches!(trimmed, "true" | "false" | "null"))
        && let Ok(v) = serde_json::from_str(text)
    {
        return v;
    }
    Value::String(text.to_owned())
}

/// The outcome of a `fields` projection: the projected value and the paths
/// that matched nothing (reported, never silently dropped).
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub value: Value,
    pub missing: Vec<String>,
}

/// Check that every path of a `fields` list is a dot path, before anything
/// is called: a bad path found only after the call would turn a write that
/// happened into an error.
pub fn check_field_paths(paths: &[String]) -> Result<(), String> {
    if paths.is_empty() {
        return Err("fields, when given, must list at least one path".into());
    }
    paths.iter().try_for_each(|p| parse_path(p).map(drop))
}

/// Project `value` onto dot paths; `[]` traverses arrays (`items[].id`).
/// The result keeps the shape of the input along every requested path.
pub fn project_fields(value: &Value, paths: &[String]) -> Result<Projection, String> {
    let mut out = Value::Null;
    let mut missing = Vec::new();
    for path in paths {
        let segments = parse_path(path)?;
        if !project_into(value, &segments, &mut out) {
            missing.push(path.clone());
        }
    }
    Ok(Projection {
        value: if out.is_null() {
            Value::Object(Map::new())
        } else {
            out
        },
        missing,
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Each,
}

fn parse_path(path: &str) -> Result<Vec<Segment>, String> {
    if path.is_empty() {
        return Err("a field path is empty".into());
    }
    let mut segments = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        let key_end = rest.find('[').unwrap_or(rest.len());
        let key = &rest[..key_end];
        if !key.is_empty() {
            segments.push(Segment::Key(key.to_owned()));
        }
        rest = &rest[key_end..];
        while let Some(r) = rest.strip_prefix("[]") {
            segments.push(Segment::Each);
            rest = r;
        }
        if !rest.is_empty() || part.is_empty() || (key.is_empty() && segments.is_empty()) {
            return Err(format!(
                "the field path \"{}\" is not a dot path (use items[].id for arrays)",
                crate::error::clamp_text(path, 128)
            ));
        }
    }
    Ok(segments)
}

/// Copy the parts of `src` along `segments` into `dst`. Returns whether the
/// path matched anything.
fn project_into(src: &Value, segments: &[Segment], dst: &mut Value) -> bool {
    let Some((first, rest)) = segments.split_first() else {
        *dst = src.clone();
        return true;
    };
    match first {
        Segment::Key(key) => {
            let Some(child) = src.as_object().and_then(|o| o.get(key)) else {
                return false;
            };
            if !dst.is_object() {
                *dst = Value::Object(Map::new());
            }
            let Some(obj) = dst.as_object_mut() else {
                return false;
            };
            let slot = obj.entry(key.clone()).or_insert(Value::Null);
            let matched = project_into(child, rest, slot);
            if !matched && slot.is_null() {
                obj.remove(key);
            }
            matched
        }
        Segment::Each => {
            let Some(items) = src.as_array() else {
                return false;
            };
            if !dst.is_array() {
                *dst = Value::Array(vec![Value::Null; items.len()]);
            }
            let Some(out) = dst.as_array_mut() else {
                return false;
            };
            let mut any = items.is_empty();
            for (item, slot) in items.iter().zip(out.iter_mut()) {
                any |= project_into(item, rest, slot);
            }
            any
        }
    }
}

/// One page of a stashed text: `[offset, next)` where both ends are UTF-8
/// boundaries. An `offset` inside a character is moved back to its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<'a> {
    pub text: &'a str,
    pub offset: usize,
    pub next_offset: Option<usize>,
    pub total_bytes: usize,
}

pub fn page_utf8(text: &str, offset: usize, max_bytes: usize) -> Page<'_> {
    let total = text.len();
    let start = floor_char_boundary(text, offset.min(total));
    let mut end = floor_char_boundary(text, start.saturating_add(max_bytes).min(total));
    if end == start && start < total {
        // A page must make progress even when max_bytes is smaller than the
        // next character: include that one character.
        end = start + text[start..].chars().next().map_or(0, char::len_utf8);
    }
    Page {
        text: &text[start..end],
        offset: start,
        next_offset: (end < total).then_some(end),
        total_bytes: total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn s5_an_owned_result_unwraps_to_the_same_value() {
        let structured = ToolResult {
            content: vec![text_block("{\"a\":1}")],
            structured_content: Some(json!({"b": 2})),
            is_error: false,
        };
        let text = ToolResult {
            content: vec![text_block("{\"a\":1}"), text_block("x")],
            ..ToolResult::default()
        };
        for r in [structured, text] {
            assert_eq!(r.clone().into_value(), r.unwrap_value());
        }
    }

    #[test]
    fn s5_unwrap_prefers_structured_then_parsed_text_then_raw() {
        let r = ToolResult {
            content: vec![text_block("{\"a\":1}")],
            structured_content: Some(json!({"b": 2})),
            is_error: false,
        };
        assert_eq!(r.unwrap_value(), json!({"b": 2}));
        let r = ToolResult {
            content: vec![text_block("{\"a\":1}")],
            ..ToolResult::default()
        };
        assert_eq!(r.unwrap_value(), json!({"a": 1}));
        let r = ToolResult {
            content: vec![text_block("hello")],
            ..ToolResult::default()
        };
        assert_eq!(r.unwrap_value(), json!("hello"));
        let img = json!({"type": "image", "data": "AAAA", "mimeType": "image/png"});
        let r = ToolResult {
            content: vec![text_block("x"), img.clone()],
            ..ToolResult::default()
        };
        assert_eq!(
            r.unwrap_value(),
            json!({"content": [{"type":"text","text":"x"}, img]})
        );
        let r = ToolResult {
            content: vec![text_block("1"), text_block("two")],
            ..ToolResult::default()
        };
        assert_eq!(r.unwrap_value(), json!([1, "two"]));
    }

    #[test]
    fn projection_keeps_shape_and_reports_misses() {
        let v = json!({"items": [{"id": 1, "x": 2}, {"id": 3, "x": 4}], "total": 2, "meta": {"a": {"b": 1}}});
        let p = project_fields(
            &v,
            &[
                "items[].id".into(),
                "meta.a.b".into(),
                "nope".into(),
                "meta.zz".into(),
            ],
        )
        .expect("valid paths");
        assert_eq!(
            p.value,
            json!({"items": [{"id": 1}, {"id": 3}], "meta": {"a": {"b": 1}}})
        );
        assert_eq!(p.missing, vec!["nope".to_string(), "meta.zz".to_string()]);
        assert!(project_fields(&v, &["a[0]".into()]).is_err());
        assert!(project_fields(&v, &["".into()]).is_err());
        for empty_segment in ["a..b", "a.", ".a"] {
            assert!(
                project_fields(&v, &[empty_segment.into()]).is_err(),
                "{empty_segment}"
            );
        }
    }

    #[test]
    fn field_paths_are_checked_without_a_value() {
        assert!(check_field_paths(&["items[].id".into(), "meta.a".into()]).is_ok());
        assert!(check_field_paths(&[]).is_err());
        assert!(check_field_paths(&["ok".into(), "id[0]".into()]).is_err());
    }

    #[test]
    fn projection_of_top_level_array() {
        let v = json!([{"id": 1, "n": "a"}, {"id": 2}]);
        let p = project_fields(&v, &["[].id".into()]).expect("valid");
        assert_eq!(p.value, json!([{"id": 1}, {"id": 2}]));
    }

    #[test]
    fn pages_reassemble_exact_bytes_across_multibyte_edges() {
        let text = "aé€😀".repeat(300);
        for size in [1usize, 2, 3, 5, 7, 64, 1000] {
            let mut offset = 0;
            let mut out = String::new();
            loop {
                let page = page_utf8(&text, offset, size);
                assert_eq!(page.offset, offset);
                out.push_str(page.text);
                match page.next_offset {
                    Some(n) => offset = n,
                    None => break,
                }
            }
            assert_eq!(out, text);
        }
        let p = page_utf8(&text, 2, 10); // inside 'é'
        assert_eq!(p.offset, 1);
        assert_eq!(page_utf8(&text, 1 << 30, 10).text, "");
    }
}
