//! Turning a downstream result into what `call_tool` returns: MCP passthrough
//! or the unwrapped value, an optional `fields` projection, and the size
//! guard that stashes an oversized result for paging with `get_result`.

use connecta_core::activity::Friction;
use connecta_core::error::{
    ErrorCode, MAX_ECHO_BYTES, NextAction, ToolError, clamp_text, floor_char_boundary,
};
use connecta_core::result::{ToolResult, project_fields};
use connecta_store::{StashEntry, StashQuota};
use rand::RngExt;
use serde_json::{Value, json};

use crate::clock::now_ms;
use crate::meta::MetaOutput;
use crate::{Gateway, RequestCtx};

/// Bytes of the stashed text shown inline with the stash notice.
const HEAD_BYTES: usize = 2_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultMode {
    /// The downstream's content blocks and structured content, untouched.
    Mcp,
    /// The unwrapped value (contract S5) as structured content and JSON text.
    Value,
}

pub(crate) struct Shaped {
    pub output: MetaOutput,
    pub friction: Option<Friction>,
}

impl Gateway {
    pub(crate) async fn shape(
        &self,
        result: ToolResult,
        mode: ResultMode,
        fields: Option<&[String]>,
        cap: usize,
        ctx: &RequestCtx,
    ) -> Result<Shaped, ToolError> {
        if mode == ResultMode::Mcp && fields.is_none() {
            let size = passthrough_size(&result);
            if size <= cap {
                return Ok(Shaped {
                    output: MetaOutput::Passthrough(result),
                    friction: None,
                });
            }
            let text = compact(&result.into_value());
            return self.stash(text, cap, ctx).await;
        }
        let mut value = result.into_value();
        let mut notes = Vec::new();
        if let Some(paths) = fields {
            let p = project_fields(&value, paths).map_err(ToolError::invalid_args)?;
            if !p.missing.is_empty() {
                // The paths are the caller's text: echoed clamped.
                notes.push(format!(
                    "these fields matched nothing in the result: {}",
                    clamp_text(&p.missing.join(", "), MAX_ECHO_BYTES)
                ));
            }
            value = p.value;
        }
        let text = compact(&value);
        if text.len() > cap {
            return self.stash(text, cap, ctx).await;
        }
        Ok(Shaped {
            output: MetaOutput::Value {
                value,
                text: Some(text),
                notes,
            },
            friction: None,
        })
    }

    /// Store a result over `cap` (the connector's cap) for paging, and
    /// answer with a notice whose inline head is at most half the cap.
    async fn stash(&self, text: String, cap: usize, ctx: &RequestCtx) -> Result<Shaped, ToolError> {
        let mut bytes = [0u8; 16];
        rand::rng().fill(&mut bytes);
        let id = format!(
            "res_{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let now = now_ms();
        let ttl = self.config.limits.stash_ttl;
        let total = text.len();
        let head = text[..floor_char_boundary(&text, HEAD_BYTES.min(cap / 2))].to_owned();
        let limits = &self.config.limits;
        let quota = StashQuota {
            caller_bytes: limits.stash_caller_quota_bytes,
            total_bytes: limits.stash_total_quota_bytes,
        };
        let entry = StashEntry {
            id: id.clone(),
            actor_key: ctx.actor.key(),
            text,
            created_at_ms: now,
            expires_at_ms: now + ttl.as_millis() as i64,
        };
        let stored = self.store.stash_put(&entry, quota).await.map_err(|e| {
            tracing::warn!(error = %e, "could not stash an oversized result");
            ToolError::with_cause(
                ErrorCode::ResultProcessingFailed,
                "the result was too large to return and could not be stored for paging",
                true,
            )
        })?;
        if !stored {
            return Ok(unstashed(&entry.text, total, cap, quota, ttl.as_secs()));
        }
        let notice = json!({
            "truncated": true,
            "resultId": id,
            "totalBytes": total,
            "head": head,
            "expiresInSeconds": ttl.as_secs(),
            "hint": format!(
                "the result is {total} bytes, over this connector's {cap} byte cap; page it with get_result, or call again with `fields` to project only what you need"
            ),
            "nextAction": NextAction::new("get_result", json!({ "id": id, "offset": 0 })),
        });
        Ok(Shaped {
            output: MetaOutput::Value {
                value: notice,
                text: None,
                notes: Vec::new(),
            },
            friction: Some(Friction::ResultTooLarge),
        })
    }
}

/// The answer for a result over the cap that the stash quota leaves no
/// room for: the call happened (it may have written), so it is a success
/// with as much of the result as the cap allows inline, and no `resultId`.
fn unstashed(text: &str, total: usize, cap: usize, quota: StashQuota, ttl_secs: u64) -> Shaped {
    tracing::warn!(
        total_bytes = total,
        "an oversized result was not stashed: the stash quota is full"
    );
    let head = &text[..floor_char_boundary(text, cap / 2)];
    let notice = json!({
        "truncated": true,
        "stashed": false,
        "totalBytes": total,
        "head": head,
        "hint": format!(
            "the result is {total} bytes, over this connector's {cap} byte cap, and the result stash is full (at most {} bytes per caller and {} in all, each kept {} s), so it cannot be paged: call again with `fields` to project only what you need, or after earlier results expire",
            quota.caller_bytes,
            quota.total_bytes,
            ttl_secs,
        ),
    });
    Shaped {
        output: MetaOutput::Value {
            value: notice,
            text: None,
            notes: Vec::new(),
        },
        friction: Some(Friction::ResultTooLarge),
    }
}

pub(crate) fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// Serialized bytes of a passthrough result: every block counts. Counted,
/// not written out.
fn passthrough_size(r: &ToolResult) -> usize {
    r.content
        .iter()
        .chain(&r.structured_content)
        .map(compact_len)
        .sum()
}

fn compact_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    // Writing a JSON value to a counter cannot fail.
    let _ = serde_json::to_writer(&mut n, v);
    n.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passthrough_is_measured_as_its_compact_json() {
        let r = ToolResult {
            content: vec![
                json!({"type": "text", "text": "héllo \"quoted\""}),
                json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            ],
            structured_content: Some(json!({"a": [1, 2.5, null], "b": {"c": "ü"}})),
            is_error: false,
        };
        let expected: usize = r.content.iter().map(|b| compact(b).len()).sum::<usize>()
            + compact(r.structured_content.as_ref().expect("set")).len();
        assert_eq!(passthrough_size(&r), expected);
    }
}
