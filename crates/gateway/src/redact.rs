//! Secret redaction for what leaves the gateway (errors, logs, and tool
//! results: a downstream that echoes its request headers must not hand the
//! credential to the agent or a program): any configured secret value that
//! appears verbatim is replaced.

use std::borrow::Cow;
use std::sync::{Arc, RwLock};

use connecta_core::result::ToolResult;
use serde_json::Value;

/// Values shorter than this are not redacted (they would shred ordinary text).
const MIN_SECRET_LEN: usize = 6;
const MARK: &str = "[redacted]";

/// Cheap to clone: clones share one list, so a vault value registered by a
/// connector's credential source is redacted everywhere.
#[derive(Default, Clone)]
pub struct Redactor {
    secrets: Arc<RwLock<Vec<String>>>,
}

impl Redactor {
    /// The process's redactor: every gateway started in this process adds
    /// to it, and the log writer scrubs every line through it, so a secret
    /// a downstream library quotes in its own log line is scrubbed too.
    pub fn process() -> Redactor {
        static PROCESS: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();
        PROCESS.get_or_init(Redactor::default).clone()
    }

    pub fn add(&self, secret: &str) {
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        // Most calls add what is known already (a credential on every use):
        // the shared read lock answers those without blocking log lines.
        if self
            .secrets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|x| x == secret)
        {
            return;
        }
        let mut s = self.secrets.write().unwrap_or_else(|p| p.into_inner());
        if !s.iter().any(|x| x == secret) {
            s.push(secret.to_owned());
            // Longest first, so a secret containing another is replaced whole.
            s.sort_by_key(|x| std::cmp::Reverse(x.len()));
        }
    }

    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let secrets = self.secrets.read().unwrap_or_else(|p| p.into_inner());
        redact_str(text, &secrets).map_or(Cow::Borrowed(text), Cow::Owned)
    }

    /// Redact every string of a tool result (its content blocks and its
    /// structured content, keys included) in place.
    pub fn redact_result(&self, result: &mut ToolResult) {
        let secrets = self.secrets.read().unwrap_or_else(|p| p.into_inner());
        if secrets.is_empty() {
            return;
        }
        for block in &mut result.content {
            redact_value(block, &secrets);
        }
        if let Some(v) = &mut result.structured_content {
            redact_value(v, &secrets);
        }
    }
}

/// `text` with every secret replaced, or `None` when it holds none.
fn redact_str(text: &str, secrets: &[String]) -> Option<String> {
    let mut out: Option<String> = None;
    for s in secrets {
        let current = out.as_deref().unwrap_or(text);
        if current.contains(s.as_str()) {
            out = Some(current.replace(s.as_str(), MARK));
        }
    }
    out
}

fn redact_value(v: &mut Value, secrets: &[String]) {
    match v {
        Value::String(text) => {
            if let Some(clean) = redact_str(text, secrets) {
                *text = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| redact_value(i, secrets)),
        Value::Object(map) => {
            if map.keys().any(|k| redact_str(k, secrets).is_some()) {
                let old = std::mem::take(map);
                for (k, mut item) in old {
                    redact_value(&mut item, secrets);
                    map.insert(redact_str(&k, secrets).unwrap_or(k), item);
                }
            } else {
                map.values_mut().for_each(|i| redact_value(i, secrets));
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_replaced() {
        let r = Redactor::default();
        r.add("abc");
        r.add("hunter2-secret");
        assert_eq!(
            r.redact("token hunter2-secret failed"),
            "token [redacted] failed"
        );
        assert_eq!(r.redact("abc is short"), "abc is short");
    }

    #[test]
    fn results_are_redacted_in_every_string_and_key() {
        let r = Redactor::default();
        let mut result = ToolResult {
            content: vec![serde_json::json!({"type": "text", "text": "Bearer hunter2-secret"})],
            structured_content: Some(serde_json::json!({
                "headers": {"authorization": "Bearer hunter2-secret", "n": 1},
                "list": ["x", "hunter2-secret!"],
                "hunter2-secret": true,
            })),
            is_error: false,
        };
        let untouched = result.clone();
        r.redact_result(&mut result);
        assert_eq!(result, untouched, "nothing registered, nothing changed");
        r.add("hunter2-secret");
        r.redact_result(&mut result);
        assert_eq!(result.content[0]["text"], "Bearer [redacted]");
        assert_eq!(
            result.structured_content,
            Some(serde_json::json!({
                "headers": {"authorization": "Bearer [redacted]", "n": 1},
                "list": ["x", "[redacted]!"],
                "[redacted]": true,
            }))
        );
    }
}
