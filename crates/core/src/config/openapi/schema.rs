//! Schemas from the document into one tool's input schema: a copy of each
//! schema the operation names, with every `$ref` it reaches (transitively)
//! copied into the input schema's `$defs` and pointed there. Recursive
//! schemas stay recursive; nothing outside the document is fetched.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::document::{SpecError, escape};

/// How many `$ref`s deep a chain of references to references may go.
const MAX_REF_HOPS: usize = 32;

/// The `$defs` of one input schema, filled as schemas are imported.
pub(super) struct Defs<'d> {
    tree: &'d Value,
    /// `$ref` text → the name it has under `$defs`.
    names: HashMap<String, String>,
    defs: Map<String, Value>,
}

impl<'d> Defs<'d> {
    pub(super) fn new(tree: &'d Value) -> Defs<'d> {
        Defs {
            tree,
            names: HashMap::new(),
            defs: Map::new(),
        }
    }

    pub(super) fn into_defs(self) -> Map<String, Value> {
        self.defs
    }

    /// A copy of `schema` (found at `at` in the document) whose references
    /// point into `$defs`.
    pub(super) fn import(&mut self, schema: &Value, at: &str) -> Result<Value, SpecError> {
        let mut out = schema.clone();
        self.rewrite(&mut out, at, false)?;
        Ok(out)
    }

    /// `names_schemas`: `value` is a map from names to schemas (`properties`
    /// and the like), whose keys are names, never keywords.
    fn rewrite(
        &mut self,
        value: &mut Value,
        at: &str,
        names_schemas: bool,
    ) -> Result<(), SpecError> {
        match value {
            Value::Object(obj) => {
                if !names_schemas && let Some(Value::String(r)) = obj.get("$ref") {
                    let r = r.clone();
                    let name = self.def_for(&r, &format!("{at}/$ref"))?;
                    obj.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
                }
                for (k, v) in obj.iter_mut() {
                    if !names_schemas && (k == "$ref" || is_data_key(k)) {
                        continue;
                    }
                    let child_names = !names_schemas && is_schema_map(k);
                    self.rewrite(v, &format!("{at}/{}", escape(k)), child_names)?;
                }
                Ok(())
            }
            Value::Array(items) => {
                for (i, v) in items.iter_mut().enumerate() {
                    self.rewrite(v, &format!("{at}/{i}"), false)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The `$defs` name of the schema `reference` points at, importing it
    /// (and what it references) on first sight.
    fn def_for(&mut self, reference: &str, at: &str) -> Result<String, SpecError> {
        if let Some(name) = self.names.get(reference) {
            return Ok(name.clone());
        }
        let (target, target_at) = resolve(self.tree, reference, at)?;
        let name = self.fresh_name(reference);
        // Named before its body is imported, so a schema that refers to
        // itself (a tree, a linked list) finds its own name.
        self.names.insert(reference.to_owned(), name.clone());
        self.defs.insert(name.clone(), Value::Null);
        let body = self.import(target, &target_at)?;
        self.defs.insert(name.clone(), body);
        Ok(name)
    }

    /// `#/components/schemas/Pet` is `Pet`; anything else its last pointer
    /// token. Characters a URI fragment would need to escape become `_`, so
    /// the `$ref` to it is plain. A second schema with the same name gets
    /// `_2`, `_3`, ….
    fn fresh_name(&self, reference: &str) -> String {
        let base: String = percent_decode(reference)
            .rsplit('/')
            .next()
            .map(unescape)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "schema".to_owned())
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut name = base.clone();
        let mut n = 2;
        while self.defs.contains_key(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }
}

/// Follow a local reference (`#/…`), through references to references, to
/// the value it names and that value's pointer. External references are
/// refused: nothing is fetched at config load.
pub(super) fn resolve<'d>(
    tree: &'d Value,
    reference: &str,
    at: &str,
) -> Result<(&'d Value, String), SpecError> {
    let mut reference = reference.to_owned();
    for _ in 0..MAX_REF_HOPS {
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(SpecError::at(
                at,
                format!(
                    "$ref \"{}\" points outside this document; connecta reads one self-contained document (bundle the others into it)",
                    crate::error::clamp_text(&reference, 200)
                ),
            ));
        };
        let pointer = percent_decode(fragment);
        let Some(target) = tree.pointer(&pointer) else {
            return Err(SpecError::at(
                at,
                format!(
                    "$ref \"{}\" does not resolve: the document has nothing at {}",
                    crate::error::clamp_text(&reference, 200),
                    crate::error::clamp_text(&pointer, 200)
                ),
            ));
        };
        match target.get("$ref") {
            Some(Value::String(next)) if target.as_object().is_some_and(|o| o.len() == 1) => {
                reference = next.clone();
            }
            _ => return Ok((target, pointer)),
        }
    }
    Err(SpecError::at(
        at,
        format!("$ref chain is longer than {MAX_REF_HOPS} references (a cycle?)"),
    ))
}

/// Keywords whose values are data (never schemas or references).
pub(super) fn is_data_key(key: &str) -> bool {
    matches!(key, "example" | "examples" | "default" | "enum" | "const") || key.starts_with("x-")
}

/// Keywords whose values map names to schemas.
pub(super) fn is_schema_map(key: &str) -> bool {
    matches!(
        key,
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
    )
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// A URI fragment's percent-encoding undone (`%7B` → `{`).
fn percent_decode(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = fragment.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_copied_into_defs_recursive_ones_too() {
        let tree = json!({"components": {"schemas": {
            "Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                "tag": {"$ref": "#/components/schemas/Tag"}
            }},
            "Tag": {"type": "string", "enum": ["a", {"$ref": "not a reference"}]},
            "Named": {"properties": {"default": {"$ref": "#/components/schemas/Tag"}, "$ref": {"type": "string"}}}
        }}});
        let mut defs = Defs::new(&tree);
        let s = defs
            .import(&json!({"$ref": "#/components/schemas/Node"}), "/x")
            .expect("imports");
        assert_eq!(s, json!({"$ref": "#/$defs/Node"}));
        let defs = defs.into_defs();
        assert_eq!(
            defs["Node"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert_eq!(
            defs["Node"]["properties"]["tag"],
            json!({"$ref": "#/$defs/Tag"})
        );
        assert_eq!(defs["Tag"]["enum"][1], json!({"$ref": "not a reference"}));
        // Property names are names, not keywords.
        let mut named = Defs::new(&tree);
        let s = named
            .import(&json!({"$ref": "#/components/schemas/Named"}), "/y")
            .expect("imports");
        assert_eq!(s, json!({"$ref": "#/$defs/Named"}));
        let named = named.into_defs();
        assert_eq!(
            named["Named"]["properties"],
            json!({"default": {"$ref": "#/$defs/Tag"}, "$ref": {"type": "string"}})
        );
        // The imported schema validates as the document meant.
        let schema = json!({"$ref": "#/$defs/Node", "$defs": defs});
        let v = jsonschema_like_check(&schema);
        assert!(v);
    }

    /// The shape is checked structurally (core has no validator): every
    /// `$ref` in the result points at a `$defs` entry that exists.
    fn jsonschema_like_check(schema: &Value) -> bool {
        fn refs(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::Object(o) => {
                    if let Some(Value::String(r)) = o.get("$ref") {
                        out.push(r.clone());
                    }
                    o.iter()
                        .filter(|(k, _)| *k != "enum")
                        .for_each(|(_, v)| refs(v, out));
                }
                Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
                _ => {}
            }
        }
        let mut all = Vec::new();
        refs(schema, &mut all);
        all.iter()
            .all(|r| schema.pointer(r.trim_start_matches('#')).is_some())
    }

    #[test]
    fn unresolvable_and_external_references_name_where_they_are() {
        let tree = json!({"components": {"schemas": {"A": {"$ref": "#/components/schemas/Gone"}}}});
        let mut defs = Defs::new(&tree);
        let e = defs
            .import(
                &json!({"properties": {"a": {"$ref": "#/components/schemas/A"}}}),
                "/paths/~1x/get/parameters/0/schema",
            )
            .expect_err("A points nowhere");
        assert_eq!(
            e.at,
            super::super::document::Location::Pointer(
                "/paths/~1x/get/parameters/0/schema/properties/a/$ref".into()
            )
        );
        assert!(e.message.contains("does not resolve"), "{e:?}");
        let e = Defs::new(&tree)
            .import(&json!({"$ref": "other.yaml#/Pet"}), "/s")
            .expect_err("external");
        assert!(e.message.contains("outside this document"), "{e:?}");
    }

    #[test]
    fn same_named_schemas_get_distinct_defs_and_fragments_are_decoded() {
        let tree = json!({
            "components": {"schemas": {"Pet": {"type": "object"}, "a b": {"type": "integer"}}},
            "other": {"Pet": {"type": "string"}}
        });
        let mut defs = Defs::new(&tree);
        let s = defs
            .import(
                &json!({"anyOf": [
                    {"$ref": "#/components/schemas/Pet"},
                    {"$ref": "#/other/Pet"},
                    {"$ref": "#/components/schemas/a%20b"}
                ]}),
                "/s",
            )
            .expect("imports");
        assert_eq!(
            s["anyOf"],
            json!([{"$ref": "#/$defs/Pet"}, {"$ref": "#/$defs/Pet_2"}, {"$ref": "#/$defs/a_b"}])
        );
        let defs = defs.into_defs();
        assert_eq!(defs["Pet_2"], json!({"type": "string"}));
    }
}
