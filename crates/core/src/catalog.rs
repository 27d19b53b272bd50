//! A connector's catalog as the gateway holds it: plain Rust values, shared
//! behind `Arc`, with a lookup by name and a fingerprint of the whole.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
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
    pub input_schema: Arc<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<Value>>,
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

/// The catalog of one connector. Immutable once built: a refresh builds a new
/// one and swaps the `Arc`.
#[derive(Debug)]
pub struct Catalog {
    pub connector: String,
    tools: Vec<Arc<ToolDef>>,
    by_name: HashMap<String, usize>,
    fingerprint: String,
}

impl Catalog {
    /// Build a catalog. Duplicate names keep the first occurrence: a downstream
    /// that lists a name twice has one callable tool under that name.
    pub fn new(connector: impl Into<String>, tools: Vec<ToolDef>) -> Catalog {
        let mut by_name = HashMap::with_capacity(tools.len());
        let mut kept = Vec::with_capacity(tools.len());
        for tool in tools {
            if by_name.contains_key(&tool.name) {
                continue;
            }
            by_name.insert(tool.name.clone(), kept.len());
            kept.push(Arc::new(tool));
        }
        let fingerprint = fingerprint(&kept);
        Catalog {
            connector: connector.into(),
            tools: kept,
            by_name,
            fingerprint,
        }
    }

    pub fn tools(&self) -> &[Arc<ToolDef>] {
        &self.tools
    }

    pub fn get(&self, name: &str) -> Option<&Arc<ToolDef>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
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
            input_schema: Arc::new(json!({"type": "object"})),
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
}
