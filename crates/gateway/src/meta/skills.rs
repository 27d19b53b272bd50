//! `skills`: the built-in `usage` guide and per-connector guides from config.

use connecta_core::error::{ErrorCode, ToolError, clamp_text};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{MetaOutput, parse_args};
use crate::Gateway;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(default)]
    name: Option<String>,
}

impl Gateway {
    pub(crate) fn skills(&self, args: Map<String, Value>) -> Result<MetaOutput, ToolError> {
        let a: Args = parse_args("skills", args)?;
        let guides = self
            .connectors()
            .iter()
            .filter_map(|h| h.config.guide.as_ref().map(|g| (h.config.id.as_str(), g)));
        match a.name.as_deref() {
            None => {
                let mut list = vec![json!({
                    "name": "usage",
                    "summary": "How to find, call and compose tools through connecta",
                })];
                for (id, g) in guides {
                    list.push(json!({
                        "name": id,
                        "summary": g.summary,
                        "required": g.required,
                    }));
                }
                Ok(MetaOutput::value(json!({ "skills": list })))
            }
            // The text block is the compact JSON of the value, as for every
            // object result (PRODUCT §1.2); the guide is its `text`.
            Some("usage") => Ok(MetaOutput::value(
                json!({ "name": "usage", "text": self.usage_guide() }),
            )),
            Some(name) => {
                let found = guides.clone().find(|(id, _)| *id == name);
                match found {
                    Some((id, g)) => Ok(MetaOutput::value(json!({ "name": id, "text": g.text }))),
                    None => {
                        let names: Vec<&str> = std::iter::once("usage")
                            .chain(guides.map(|(id, _)| id))
                            .collect();
                        Err(ToolError::new(
                            ErrorCode::NotFound,
                            format!(
                                "no skill named \"{}\"; available: {}",
                                clamp_text(name, 128),
                                names.join(", ")
                            ),
                        ))
                    }
                }
            }
        }
    }
}
