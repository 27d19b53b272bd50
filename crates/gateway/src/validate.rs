//! Argument validation against a tool's input schema, before any request
//! leaves the gateway (rmcp does not validate). Findings are bounded and
//! value-free: they name the JSON pointer and the failing keyword, never the
//! value that failed, so an error cannot echo a secret an agent passed.

use connecta_core::error::{ToolError, clamp_text};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

/// At most this many findings are reported per call.
const MAX_FINDINGS: usize = 5;

pub enum ArgValidator {
    Compiled(Box<jsonschema::Validator>),
    /// The downstream's schema does not compile; the downstream validates.
    Unusable,
}

impl ArgValidator {
    pub fn compile(schema: &Value) -> ArgValidator {
        match jsonschema::validator_for(schema) {
            Ok(v) => ArgValidator::Compiled(Box::new(v)),
            Err(e) => {
                tracing::debug!(error = %clamp_text(&e.to_string(), 200), "tool input schema does not compile; skipping validation");
                ArgValidator::Unusable
            }
        }
    }

    pub fn check(&self, args: &Value) -> Result<(), ToolError> {
        let ArgValidator::Compiled(v) = self else {
            return Ok(());
        };
        let findings: Vec<String> = v
            .iter_errors(args)
            .take(MAX_FINDINGS)
            .map(|e| describe(&e))
            .collect();
        if findings.is_empty() {
            return Ok(());
        }
        Err(ToolError::invalid_args(format!(
            "the arguments do not match the tool's input schema: {}",
            findings.join("; ")
        ))
        .detail("findings", findings))
    }
}

fn describe(e: &jsonschema::ValidationError<'_>) -> String {
    let raw_path = e.instance_path().to_string();
    let path = if raw_path.is_empty() {
        "/".to_owned()
    } else {
        raw_path
    };
    let path = clamp_text(&path, 128);
    let kind = e.kind();
    let detail = match kind {
        ValidationErrorKind::Required { property } => {
            format!(
                "missing required property {}",
                clamp_text(&property.to_string(), 64)
            )
        }
        ValidationErrorKind::Type { kind } => match kind {
            TypeKind::Single(t) => format!("must be of type {t}"),
            TypeKind::Multiple(ts) => format!("must be one of the types {ts:?}"),
        },
        ValidationErrorKind::AdditionalProperties { unexpected } => format!(
            "unexpected propert{} {}",
            if unexpected.len() == 1 { "y" } else { "ies" },
            clamp_text(&unexpected.join(", "), 128)
        ),
        ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. } => {
            "is not one of the allowed values".to_owned()
        }
        other => format!("fails the `{}` keyword", other.keyword()),
    };
    format!("{path} {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn findings_name_pointer_and_keyword_but_never_the_value() {
        let v = ArgValidator::compile(&json!({
            "type": "object",
            "properties": {"value": {"type": "integer"}, "mode": {"enum": ["a", "b"]}},
            "required": ["value"],
            "additionalProperties": false
        }));
        let err = v
            .check(&json!({"value": "SECRET-VALUE-123", "mode": "zzz-secret", "extra": 1}))
            .expect_err("invalid");
        assert!(
            err.message.contains("/value must be of type integer"),
            "{}",
            err.message
        );
        assert!(
            err.message
                .contains("/mode is not one of the allowed values"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("unexpected property extra"),
            "{}",
            err.message
        );
        assert!(!err.message.contains("SECRET"), "{}", err.message);
        assert!(!err.message.contains("zzz-secret"), "{}", err.message);
        let err = v.check(&json!({})).expect_err("missing");
        assert!(
            err.message.contains("missing required property \"value\""),
            "{}",
            err.message
        );
        assert!(v.check(&json!({"value": 3})).is_ok());
    }

    #[test]
    fn an_uncompilable_schema_defers_to_the_downstream() {
        let v = ArgValidator::compile(&json!({"type": 12}));
        assert!(v.check(&json!({"anything": true})).is_ok());
    }
}
