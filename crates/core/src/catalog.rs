//! A connector's catalog as the gateway holds it: plain Rust values, shared
//! behind `Arc`, with a lookup by name and a fingerprint of the whole.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::policy::{Annotations, is_read_only};

/// One tool, as served by its connector after curation (include/exclude and
/// annotation overrides have been applied).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Schema,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Schema>,
    #[serde(default, skip_serializing_if = "Annotations::is_empty")]
    pub annotations: Annotations,
}

impl ToolDef {
    pub fn read_only(&self) -> bool {
        is_read_only(&self.annotations)
    }

    pub fn description(&self) -> &str {
        self.description.as_deref().unwrap_or("")
    }
}

/// A tool's JSON Schema, kept as its compact JSON text.
///
/// A catalog holds every schema for as long as the catalog is current, and
/// almost nothing reads them: search renders a compact shape once from the
/// text, a call compiles its validator once, and only `includeSchemas:
/// "json"` and describe want the tree back. As a `serde_json::Value` tree a
/// small schema takes 2–3 KB of maps and strings; as text, its length. At
/// 10,000 tools that is the larger part of the gateway's memory.
#[derive(Clone)]
pub struct Schema(Arc<RawValue>);

impl Schema {
    pub fn new(value: &Value) -> Schema {
        Schema::from_serialize(value)
    }

    fn from_serialize<T: Serialize + ?Sized>(value: &T) -> Schema {
        // Serializing a JSON value to JSON text cannot fail; `null` keeps
        // the type total if it ever did.
        let raw =
            serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned());
        Schema(Arc::from(raw))
    }

    /// The schema as a tree, parsed from its text each time.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }
}

impl From<Value> for Schema {
    fn from(value: Value) -> Schema {
        Schema::new(&value)
    }
}

impl From<&serde_json::Map<String, Value>> for Schema {
    fn from(map: &serde_json::Map<String, Value>) -> Schema {
        Schema::from_serialize(map)
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Schema) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Schema {}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Schema, D::Error> {
        Value::deserialize(deserializer).map(|v| Schema::new(&v))
    }
}

/// The catalog of one connector. Immutable once built: a refresh builds a new
/// one and swaps the `Arc`.
#[derive(Debug)]
pub struct Catalog {
    pub connector: String,
    tools: Vec<Arc<ToolDef>>,
    /// Indices into `tools`, hashed by the tool's name: the names are not
    /// copied (about 0.5 MB at 10,000 tools, docs/performance.md "What
    /// holds the memory").
    by_name: HashTable<usize>,
    /// The one hasher of `by_name`: building and lookup must hash alike.
    hasher: RandomState,
    fingerprint: String,
}

impl Catalog {
    /// Build a catalog. Duplicate names keep the first occurrence: a downstream
    /// that lists a name twice has one callable tool under that name.
    pub fn new(connector: impl Into<String>, tools: Vec<ToolDef>) -> Catalog {
        let hasher = RandomState::new();
        let mut by_name: HashTable<usize> = HashTable::with_capacity(tools.len());
        let mut kept: Vec<Arc<ToolDef>> = Vec::with_capacity(tools.len());
        for tool in tools {
            let hash = hasher.hash_one(tool.name.as_str());
            let entry = by_name.entry(
                hash,
                |&i| kept[i].name == tool.name,
                |&i| hasher.hash_one(kept[i].name.as_str()),
            );
            if let Entry::Vacant(vacant) = entry {
                vacant.insert(kept.len());
                kept.push(Arc::new(tool));
            }
        }
        let fingerprint = fingerprint(&kept);
        Catalog {
            connector: connector.into(),
            tools: kept,
            by_name,
            hasher,
            fingerprint,
        }
    }

    pub fn tools(&self) -> &[Arc<ToolDef>] {
        &self.tools
    }

    pub fn get(&self, name: &str) -> Option<&Arc<ToolDef>> {
        let hash = self.hasher.hash_one(name);
        self.by_name
            .find(hash, |&i| self.tools[i].name == name)
            .map(|&i| &self.tools[i])
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// SHA-256 over the serialized catalog, hex, first 16 bytes. Equal
    /// fingerprints mean the agent-visible catalog did not change.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

fn fingerprint(tools: &[Arc<ToolDef>]) -> String {
    let mut hasher = Sha256::new();
    for tool in tools {
        // Serialization of our own plain types cannot fail.
        let bytes = serde_json::to_vec(tool.as_ref()).unwrap_or_default();
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    let digest = hasher.finalize();
    hex::encode(&digest[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> ToolDef {
        ToolDef {
            name: name.into(),
            title: None,
            description: Some(format!("{name} things")),
            input_schema: crate::Schema::from(json!({"type": "object"})),
            output_schema: None,
            annotations: Annotations::default(),
        }
    }

    #[test]
    fn fingerprint_changes_with_content_and_not_otherwise() {
        let a = Catalog::new("c", vec![tool("a"), tool("b")]);
        let b = Catalog::new("c", vec![tool("a"), tool("b")]);
        let c = Catalog::new("c", vec![tool("a"), tool("c")]);
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
        assert_eq!(a.fingerprint().len(), 32);
    }

    #[test]
    fn duplicate_names_keep_the_first() {
        let mut second = tool("a");
        second.description = Some("second".into());
        let cat = Catalog::new("c", vec![tool("a"), second]);
        assert_eq!(cat.len(), 1);
        assert_eq!(cat.get("a").map(|t| t.description()), Some("a things"));
    }

    proptest::proptest! {
        /// Any list of names, repeats included: the catalog keeps each
        /// name's first tool, in the order first seen, finds each by its
        /// name and nothing else.
        #[test]
        fn lookup_by_name_finds_each_first_occurrence_and_nothing_else(
            names in proptest::collection::vec("[a-c]{0,3}", 0..40)
        ) {
            let tools: Vec<ToolDef> = names
                .iter()
                .enumerate()
                .map(|(i, name)| ToolDef { description: Some(i.to_string()), ..tool(name) })
                .collect();
            let cat = Catalog::new("c", tools);
            let mut first: Vec<(&str, usize)> = Vec::new();
            for (i, name) in names.iter().enumerate() {
                if !first.iter().any(|(n, _)| n == name) {
                    first.push((name, i));
                }
            }
            let kept: Vec<&str> = cat.tools().iter().map(|t| t.name.as_str()).collect();
            let expected: Vec<&str> = first.iter().map(|(n, _)| *n).collect();
            proptest::prop_assert_eq!(kept, expected);
            // Every name the strategy can make (40 of them), present or not,
            // and some it cannot.
            let mut every = vec![String::new()];
            for len in 1..=3 {
                let shorter: Vec<String> = every.iter().filter(|n| n.len() == len - 1).cloned().collect();
                for n in shorter {
                    every.extend(['a', 'b', 'c'].map(|c| format!("{n}{c}")));
                }
            }
            every.extend(["d", "ab_", "abcd"].map(String::from));
            for name in &every {
                let expected = first.iter().find(|(n, _)| n == name).map(|(_, i)| i.to_string());
                let found = cat.get(name).map(|t| t.description().to_owned());
                proptest::prop_assert_eq!(found, expected, "{:?}", name);
            }
        }
    }

    #[test]
    fn a_schema_keeps_its_json_text_and_key_order() {
        let value = json!({"type": "object", "required": ["b"], "properties": {"b": {"type": "string"}, "a": {"minimum": 1}}});
        let schema = Schema::new(&value);
        assert_eq!(
            schema.as_str(),
            r#"{"type":"object","required":["b"],"properties":{"b":{"type":"string"},"a":{"minimum":1}}}"#
        );
        assert_eq!(schema.value(), value);
        let keys: Vec<String> = schema.value()["properties"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["b", "a"]);
    }

    #[test]
    fn a_tool_def_round_trips_with_its_schemas_as_json_objects() {
        let mut def = tool("a");
        def.output_schema =
            Some(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}).into());
        let text = serde_json::to_string(&def).expect("serializes");
        let parsed: Value = serde_json::from_str(&text).expect("is JSON");
        assert_eq!(parsed["inputSchema"], json!({"type": "object"}));
        assert_eq!(
            parsed["outputSchema"]["properties"]["ok"]["type"],
            "boolean"
        );
        let back: ToolDef = serde_json::from_str(&text).expect("deserializes");
        assert_eq!(back, def);
        // A stored catalog written with whitespace reads back to the same
        // compact text, so its fingerprint does not change.
        let spaced: ToolDef = serde_json::from_str(
            r#"{"name": "a", "description": "a things", "inputSchema": { "type" : "object" }}"#,
        )
        .expect("deserializes");
        assert_eq!(spaced.input_schema.as_str(), r#"{"type":"object"}"#);
    }
}
