//! An OpenAPI document from its text: JSON or YAML into one JSON tree, a
//! 3.0 document upgraded to 3.1 in that tree, then read into the `oas3`
//! model (the structure: paths, operations, parameters, bodies).
//!
//! Schemas are taken from the tree, not the model: the model keeps only the
//! keywords it knows, and a tool's input schema must keep every constraint
//! the document states.
//!
//! Every error says where: line and column for text that does not parse,
//! a JSON pointer for a document that parses but is not valid OpenAPI.

use std::fmt;

use serde_json::{Map, Value};

use super::schema::{is_data_key, is_schema_map};

/// Where in the document a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    LineColumn(usize, usize),
    Pointer(String),
    Document,
}

/// A problem with the document, shown as `<file>:<line>:<column>: …` or
/// `<file> at <pointer>: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpecError {
    pub at: Location,
    pub message: String,
}

impl SpecError {
    pub(crate) fn at(pointer: &str, message: impl Into<String>) -> SpecError {
        SpecError {
            at: Location::Pointer(if pointer.is_empty() {
                "/".to_owned()
            } else {
                pointer.to_owned()
            }),
            message: message.into(),
        }
    }

    pub(crate) fn located<'a>(&'a self, file: &'a str) -> Located<'a> {
        Located { file, error: self }
    }
}

pub(crate) struct Located<'a> {
    file: &'a str,
    error: &'a SpecError,
}

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (file, e) = (self.file, self.error);
        match &e.at {
            Location::LineColumn(l, c) => write!(f, "{file}:{l}:{c}: {}", e.message),
            Location::Pointer(p) => write!(f, "{file} at {p}: {}", e.message),
            Location::Document => write!(f, "{file}: {}", e.message),
        }
    }
}

/// A parsed document.
pub(crate) struct Document {
    /// The whole document as JSON (a 3.0 one already upgraded to 3.1).
    pub tree: Value,
    /// The same document in the 3.1 model.
    pub spec: oas3::Spec,
}

/// Parse `text` (the file `path`): JSON when the name ends in `.json` or the
/// text starts with `{`, YAML otherwise.
pub(crate) fn parse(text: &str, path: &str) -> Result<Document, SpecError> {
    let lower = path.to_ascii_lowercase();
    let json = lower.ends_with(".json")
        || (!lower.ends_with(".yaml")
            && !lower.ends_with(".yml")
            && text.trim_start().starts_with('{'));
    let mut tree: Value = if json {
        serde_json::from_str(text).map_err(|e| SpecError {
            at: Location::LineColumn(e.line(), e.column()),
            message: format!("not valid JSON: {}", strip_position(&e.to_string())),
        })?
    } else {
        yaml_serde::from_str(text).map_err(|e| SpecError {
            at: e.location().map_or(Location::Document, |l| {
                Location::LineColumn(l.line(), l.column())
            }),
            message: format!("not valid YAML: {}", strip_position(&e.to_string())),
        })?
    };
    if !tree.is_object() {
        return Err(SpecError {
            at: Location::Document,
            message: "an OpenAPI document is an object (a mapping) at its top level".into(),
        });
    }
    let version = match tree.get("openapi") {
        Some(Value::String(v)) => v.clone(),
        Some(_) => return Err(SpecError::at("/openapi", "`openapi` must be a string")),
        None if tree.get("swagger").is_some() => {
            return Err(SpecError::at(
                "/swagger",
                "this is a Swagger 2.0 document; connecta reads OpenAPI 3.0 and 3.1 (convert it first, e.g. with swagger2openapi)",
            ));
        }
        None => {
            return Err(SpecError::at(
                "",
                "not an OpenAPI document: it has no `openapi` version",
            ));
        }
    };
    if version.starts_with("3.0.") || version == "3.0" {
        upgrade_schemas(&mut tree);
    } else if !(version.starts_with("3.1.") || version == "3.1") {
        return Err(SpecError::at(
            "/openapi",
            format!(
                "OpenAPI version \"{}\" is not supported; connecta reads 3.0.x and 3.1.x",
                crate::error::clamp_text(&version, 40)
            ),
        ));
    }
    let spec: oas3::Spec = serde_path_to_error::deserialize(&model_view(&tree)).map_err(|e| {
        let pointer = pointer_of(e.path());
        SpecError::at(
            &pointer,
            format!("not a valid OpenAPI document here: {}", e.inner()),
        )
    })?;
    Ok(Document { tree, spec })
}

/// The parts of the document connecta reads, for the model: operations
/// without their responses, callbacks, security and servers, and only the
/// components operations take arguments from. A mistake in a part connecta
/// never reads (a response, a security requirement written as a map) does
/// not stop the connector; everything kept keeps its JSON pointer.
fn model_view(tree: &Value) -> Value {
    const OPERATIONS: [&str; 8] = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    const UNREAD: [&str; 5] = [
        "responses",
        "callbacks",
        "security",
        "servers",
        "externalDocs",
    ];
    let mut view = Map::new();
    for key in ["openapi", "info"] {
        if let Some(v) = tree.get(key) {
            view.insert(key.into(), v.clone());
        }
    }
    if let Some(Value::Object(paths)) = tree.get("paths") {
        let mut out = Map::new();
        for (path, item) in paths {
            let mut item = item.clone();
            if let Value::Object(fields) = &mut item {
                fields.remove("servers");
                for method in OPERATIONS {
                    if let Some(Value::Object(op)) = fields.get_mut(method) {
                        for key in UNREAD {
                            op.remove(key);
                        }
                    }
                }
            }
            out.insert(path.clone(), item);
        }
        view.insert("paths".into(), Value::Object(out));
    }
    if let Some(Value::Object(components)) = tree.get("components") {
        let kept: Map<String, Value> = components
            .iter()
            .filter(|(k, _)| matches!(k.as_str(), "schemas" | "parameters" | "requestBodies"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        view.insert("components".into(), Value::Object(kept));
    }
    Value::Object(view)
}

/// serde's messages end in "at line L column C", which the location
/// already says.
fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        out.push('/');
        match segment {
            Segment::Seq { index } => out.push_str(&index.to_string()),
            Segment::Map { key } => out.push_str(&escape(key)),
            Segment::Enum { variant } => out.push_str(&escape(variant)),
            Segment::Unknown => out.push('?'),
        }
    }
    out
}

/// One JSON pointer reference token (RFC 6901).
pub(crate) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// OpenAPI 3.0 schemas are a JSON Schema draft-04 dialect; 3.1's are
/// 2020-12. The three differences that change what a schema accepts are
/// rewritten (the upgrade the OpenAPI Initiative documents):
/// `nullable: true` becomes a `"null"` in `type`, and boolean
/// `exclusiveMinimum`/`exclusiveMaximum` become numeric bounds.
fn upgrade_schemas(value: &mut Value) {
    upgrade_in(value, false);
}

/// OpenAPI objects whose keys are names (a schema may be called
/// `example`), besides the schema keywords of that kind.
fn is_name_map(key: &str) -> bool {
    matches!(
        key,
        "paths"
            | "webhooks"
            | "schemas"
            | "parameters"
            | "headers"
            | "responses"
            | "requestBodies"
            | "securitySchemes"
            | "links"
            | "callbacks"
            | "pathItems"
            | "content"
            | "encoding"
    )
}

/// `names_schemas`: `value` maps names to schemas or OpenAPI objects
/// (`properties`, `components.schemas`, …).
fn upgrade_in(value: &mut Value, names_schemas: bool) {
    match value {
        Value::Object(obj) => {
            if !names_schemas {
                upgrade_one(obj);
            }
            for (k, v) in obj.iter_mut() {
                if names_schemas || !is_data_key(k) {
                    upgrade_in(v, !names_schemas && (is_schema_map(k) || is_name_map(k)));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| upgrade_in(v, false)),
        _ => {}
    }
}

fn upgrade_one(obj: &mut Map<String, Value>) {
    if let Some(Value::Bool(nullable)) = obj.get("nullable") {
        let nullable = *nullable;
        obj.remove("nullable");
        if nullable {
            match obj.get_mut("type") {
                Some(Value::String(t)) => {
                    let t = std::mem::take(t);
                    obj.insert("type".into(), Value::Array(vec![t.into(), "null".into()]));
                }
                Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => {
                    types.push("null".into());
                }
                Some(_) => {}
                // No type of its own: a `oneOf`/`anyOf` gets a null branch
                // (GitHub writes nullable choices this way).
                None => {
                    for key in ["oneOf", "anyOf"] {
                        if let Some(Value::Array(branches)) = obj.get_mut(key) {
                            branches.push(serde_json::json!({"type": "null"}));
                            break;
                        }
                    }
                }
            }
            if let Some(Value::Array(values)) = obj.get_mut("enum")
                && !values.contains(&Value::Null)
            {
                values.push(Value::Null);
            }
        }
    }
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(exclusive)) = obj.get(flag) {
            let exclusive = *exclusive;
            obj.remove(flag);
            if exclusive && let Some(b) = obj.remove(bound) {
                obj.insert(flag.into(), b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn three_oh_schemas_are_upgraded_and_examples_are_left_alone() {
        let mut v = json!({
            "components": {"schemas": {
                "A": {"type": "string", "nullable": true, "example": {"nullable": true, "type": "x"}},
                "B": {"type": "integer", "minimum": 1, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false},
                "C": {"type": "string", "enum": ["a"], "nullable": true},
                "D": {"nullable": false, "type": "string"},
                "F": {"nullable": true, "oneOf": [{"type": "string"}, {"type": "integer"}]},
                "E": {"properties": {"example": {"type": "string", "nullable": true}}},
                "example": {"type": "number", "minimum": 0, "exclusiveMinimum": true}
            }}
        });
        upgrade_schemas(&mut v);
        let s = &v["components"]["schemas"];
        assert_eq!(s["A"]["type"], json!(["string", "null"]));
        assert_eq!(s["A"]["example"], json!({"nullable": true, "type": "x"}));
        assert_eq!(
            s["B"],
            json!({"type": "integer", "exclusiveMinimum": 1, "maximum": 9})
        );
        assert_eq!(s["C"]["enum"], json!(["a", null]));
        assert_eq!(s["D"], json!({"type": "string"}));
        assert_eq!(
            s["F"],
            json!({"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
        );
        assert_eq!(
            s["E"]["properties"]["example"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(
            s["example"],
            json!({"type": "number", "exclusiveMinimum": 0})
        );
    }

    #[test]
    fn syntax_errors_have_a_line_and_column() {
        let e = parse("openapi: 3.1.0\npaths: [\n", "x.yaml")
            .err()
            .expect("fails");
        assert!(matches!(e.at, Location::LineColumn(_, _)), "{e:?}");
        let e = parse("{\"openapi\": \"3.1.0\",\n  \"paths\": }", "x.json")
            .err()
            .expect("fails");
        assert_eq!(e.at, Location::LineColumn(2, 12), "{e:?}");
        assert!(!e.message.contains("at line"), "{e:?}");
    }

    #[test]
    fn versions_other_than_three_oh_and_three_one_are_refused() {
        let e = parse("swagger: '2.0'\n", "s.yaml").err().expect("fails");
        assert_eq!(e.at, Location::Pointer("/swagger".into()));
        let e = parse("openapi: 3.2.0\n", "s.yaml").err().expect("fails");
        assert_eq!(e.at, Location::Pointer("/openapi".into()));
        let e = parse("- a\n", "s.yaml").err().expect("fails");
        assert_eq!(e.at, Location::Document);
    }

    #[test]
    fn mistakes_in_parts_never_read_do_not_stop_the_document() {
        let text = r#"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "paths": {"/a": {"get": {"security": {"key": []}, "responses": {"200": "fine"}}}},
            "components": {"securitySchemes": {"k": {"type": "nonsense"}}}}"#;
        let doc = parse(text, "s.json").expect("parses");
        assert!(doc.tree["paths"]["/a"]["get"]["responses"].is_object());
    }

    #[test]
    fn a_structural_error_names_its_json_pointer() {
        let text = r#"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "paths": {"/a/{b}": {"get": {"parameters": [{"name": "b", "in": "nowhere"}]}}}}"#;
        let e = parse(text, "s.json").err().expect("fails");
        let Location::Pointer(p) = &e.at else {
            panic!("{e:?}")
        };
        assert!(p.starts_with("/paths/~1a~1{b}/get/parameters/0"), "{p}");
    }
}
