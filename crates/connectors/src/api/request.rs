//! Arguments → the parts of an HTTP request: the path (placeholders
//! substituted, percent-encoded, checked for traversal), the query, the JSON
//! body and header arguments.
//!
//! Where an argument goes: named in the path template → the path; listed in
//! `query` → the query; listed in `body` → the JSON body; named by
//! `body_arg` → the whole JSON body; listed in `header_args` → that header.
//! Any other argument goes to the query for GET, HEAD and DELETE (and when
//! `body_arg` carries the body) and to the JSON body for POST, PUT and
//! PATCH.
//!
//! Every refusal is `invalid_args` naming the argument, never its value.

use connecta_core::config::{ApiTool, HttpMethod};
use connecta_core::error::ToolError;
use http::{HeaderName, HeaderValue};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Map, Value};

/// Everything but RFC 3986 unreserved characters is encoded in a path
/// value, so `/`, `\`, `?`, `#` and `%` in a value are data, never syntax.
const PATH_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Decoding rounds when looking for hidden dot segments (`%252e%252e` is
/// `..` to a server that decodes twice).
const DECODE_ROUNDS: usize = 4;

#[derive(Debug, Default)]
pub(crate) struct Rendered {
    /// Percent-encoded, starting with `/`, relative to the base path.
    pub path: String,
    pub query: Vec<(String, String)>,
    pub body: Option<Value>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

pub(crate) fn render(tool: &ApiTool, args: &Map<String, Value>) -> Result<Rendered, ToolError> {
    let mut used: Vec<&str> = Vec::new();
    let path = render_path(&tool.path, args, &mut used)?;
    let mut out = Rendered {
        path,
        ..Rendered::default()
    };
    for name in &tool.query {
        used.push(name);
        if let Some(v) = args.get(name) {
            push_query(&mut out.query, name, v);
        }
    }
    let mut body = Map::new();
    for name in &tool.body {
        used.push(name);
        if let Some(v) = args.get(name) {
            body.insert(name.clone(), v.clone());
        }
    }
    for (arg, header) in &tool.header_args {
        used.push(arg);
        let Some(v) = args.get(arg) else { continue };
        let Some(text) = scalar(v) else {
            if v.is_null() {
                continue;
            }
            return Err(ToolError::invalid_args(format!(
                "header argument `{arg}` must be a string, number or boolean"
            )));
        };
        let value = HeaderValue::from_str(&text)
            .ok()
            .filter(|_| !text.chars().any(char::is_control))
            .ok_or_else(|| {
                ToolError::invalid_args(format!(
                    "header argument `{arg}` has characters a header cannot carry"
                ))
            })?;
        let name = HeaderName::from_bytes(header.as_bytes()).map_err(|_| {
            ToolError::invalid_args(format!("`{header}` is not a valid header name"))
        })?;
        out.headers.push((name, value));
    }
    if let Some(arg) = &tool.body_arg {
        used.push(arg);
        out.body = args.get(arg).cloned();
    }
    let to_body = tool.body_arg.is_none()
        && matches!(
            tool.method,
            HttpMethod::Post | HttpMethod::Put | HttpMethod::Patch
        );
    for (name, v) in args {
        if used.contains(&name.as_str()) {
            continue;
        }
        if to_body {
            body.insert(name.clone(), v.clone());
        } else {
            push_query(&mut out.query, name, v);
        }
    }
    if tool.body_arg.is_none() && (!body.is_empty() || (!tool.body.is_empty() && to_body)) {
        out.body = Some(Value::Object(body));
    }
    Ok(out)
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Scalars as they are, arrays as repeated keys, objects as compact JSON,
/// null omitted.
fn push_query(out: &mut Vec<(String, String)>, name: &str, v: &Value) {
    match v {
        Value::Null => {}
        Value::Array(items) => {
            for item in items {
                if let Some(s) = scalar(item) {
                    out.push((name.to_owned(), s));
                } else if !item.is_null() {
                    out.push((name.to_owned(), item.to_string()));
                }
            }
        }
        Value::Object(_) => out.push((name.to_owned(), v.to_string())),
        other => out.push((name.to_owned(), scalar(other).unwrap_or_default())),
    }
}

fn render_path<'t>(
    template: &'t str,
    args: &Map<String, Value>,
    used: &mut Vec<&'t str>,
) -> Result<String, ToolError> {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let name = &after[..close];
        used.push(name);
        let value = match args.get(name) {
            Some(v) => scalar(v).ok_or_else(|| {
                ToolError::invalid_args(format!(
                    "path argument `{name}` must be a string, number or boolean"
                ))
            })?,
            None => {
                return Err(ToolError::invalid_args(format!(
                    "path argument `{name}` is missing"
                )));
            }
        };
        if value.is_empty() {
            return Err(ToolError::invalid_args(format!(
                "path argument `{name}` is empty"
            )));
        }
        if has_dot_segment(&value) {
            return Err(traversal(name));
        }
        out.extend(utf8_percent_encode(&value, PATH_VALUE));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    // The whole path, template included, is re-checked: no segment may be a
    // dot segment once decoded, however many times a server decodes it.
    for segment in out.split('/') {
        if has_dot_segment(segment) {
            return Err(traversal("path"));
        }
    }
    Ok(out)
}

fn traversal(name: &str) -> ToolError {
    ToolError::invalid_args(format!(
        "path argument `{name}` would climb out of the API's base path (`.` and `..` segments, also percent-encoded, are refused)"
    ))
    .detail("refusal", "path_traversal")
}

/// Whether `text`, decoded up to [`DECODE_ROUNDS`] times, contains a `.` or
/// `..` segment when split at `/` or `\`.
fn has_dot_segment(text: &str) -> bool {
    let mut current = text.to_owned();
    for _ in 0..=DECODE_ROUNDS {
        if current.split(['/', '\\']).any(|s| s == "." || s == "..") {
            return true;
        }
        let decoded = percent_decode_str(&current)
            .decode_utf8_lossy()
            .into_owned();
        if decoded == current {
            return false;
        }
        current = decoded;
    }
    // Still decoding after all rounds: nobody needs that; refuse.
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use connecta_core::error::ErrorCode;
    use serde_json::json;

    fn tool(method: HttpMethod, path: &str) -> ApiTool {
        ApiTool {
            name: "t".into(),
            title: None,
            description: "d".into(),
            read_only: true,
            idempotent: None,
            method,
            path: path.into(),
            query: vec![],
            body: vec![],
            body_arg: None,
            header_args: vec![],
            headers: vec![],
            input_schema: json!({"type": "object"}),
            output_schema: None,
            project: None,
        }
    }

    fn args(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("object"),
        }
    }

    #[test]
    fn placeholders_are_percent_encoded_and_slashes_are_data() {
        let t = tool(HttpMethod::Get, "/repos/{repo}/issues/{n}");
        let r = render(&t, &args(json!({"repo": "a/b c?#%", "n": 7}))).expect("ok");
        assert_eq!(r.path, "/repos/a%2Fb%20c%3F%23%25/issues/7");
        assert!(r.query.is_empty());
    }

    #[test]
    fn traversal_is_refused_plain_encoded_and_double_encoded() {
        let t = tool(HttpMethod::Get, "/files/{name}");
        for bad in [
            "..",
            ".",
            "../etc/passwd",
            "a/../../b",
            "..\\..\\x",
            "%2e%2e",
            "%2E%2e%2fadmin",
            "..%2fadmin",
            "%252e%252e",
            "%25252e%25252e%25252f",
        ] {
            let e = render(&t, &args(json!({"name": bad}))).expect_err(bad);
            assert_eq!(e.code, ErrorCode::InvalidArgs, "{bad}");
            if bad.len() > 2 {
                assert!(!e.message.contains(bad), "value-free: {}", e.message);
            }
        }
        for ok in ["a.b", "...", "..a", "v1.2/x", "%2fa"] {
            assert!(render(&t, &args(json!({"name": ok}))).is_ok(), "{ok}");
        }
        let t = tool(HttpMethod::Get, "/a/../{x}");
        assert!(render(&t, &args(json!({"x": "y"}))).is_err());
    }

    #[test]
    fn missing_or_structured_path_arguments_are_invalid() {
        let t = tool(HttpMethod::Get, "/items/{id}");
        assert!(render(&t, &args(json!({}))).is_err());
        assert!(render(&t, &args(json!({"id": {"a": 1}}))).is_err());
        assert!(render(&t, &args(json!({"id": ""}))).is_err());
    }

    #[test]
    fn arguments_go_to_query_body_and_headers() {
        let mut t = tool(HttpMethod::Post, "/items/{id}");
        t.query = vec!["page".into()];
        t.header_args = vec![("trace".into(), "X-Trace".into())];
        let r = render(
            &t,
            &args(json!({"id": 1, "page": 2, "trace": "t-1", "name": "n", "tags": ["a"]})),
        )
        .expect("ok");
        assert_eq!(r.query, vec![("page".into(), "2".into())]);
        assert_eq!(r.body, Some(json!({"name": "n", "tags": ["a"]})));
        assert_eq!(r.headers.len(), 1);
        assert_eq!(r.headers[0].0.as_str(), "x-trace");

        let t = tool(HttpMethod::Get, "/search");
        let r = render(
            &t,
            &args(json!({"q": "x", "ids": [1, 2], "f": {"a": 1}, "none": null})),
        )
        .expect("ok");
        assert_eq!(
            r.query,
            vec![
                ("q".into(), "x".into()),
                ("ids".into(), "1".into()),
                ("ids".into(), "2".into()),
                ("f".into(), "{\"a\":1}".into()),
            ]
        );
        assert!(r.body.is_none());
    }

    #[test]
    fn a_body_argument_is_the_whole_body_and_the_rest_goes_to_the_query() {
        let mut t = tool(HttpMethod::Post, "/users/batch");
        t.body_arg = Some("body".into());
        let r = render(
            &t,
            &args(json!({"body": [{"n": 1}, {"n": 2}], "dry": true})),
        )
        .expect("ok");
        assert_eq!(r.body, Some(json!([{"n": 1}, {"n": 2}])));
        assert_eq!(r.query, vec![("dry".into(), "true".into())]);
        let r = render(&t, &args(json!({}))).expect("ok");
        assert_eq!(r.body, None, "an optional body left out is not sent");
        let t = tool(HttpMethod::Head, "/ping");
        let r = render(&t, &args(json!({"a": 1}))).expect("ok");
        assert_eq!(r.query, vec![("a".into(), "1".into())]);
        assert!(r.body.is_none());
    }

    #[test]
    fn header_arguments_with_control_characters_are_refused() {
        let mut t = tool(HttpMethod::Get, "/x");
        t.header_args = vec![("h".into(), "X-H".into())];
        let e = render(&t, &args(json!({"h": "ok\r\nX-Injected: 1"}))).expect_err("refused");
        assert_eq!(e.code, ErrorCode::InvalidArgs);
        assert!(!e.message.contains("Injected"));
        assert!(render(&t, &args(json!({"h": "tab\there"}))).is_err());
    }
}
