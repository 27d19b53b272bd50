//! `get_result`: page an oversized `call_tool` result by byte offsets of its
//! compact JSON, aligned to UTF-8 boundaries.

use connecta_core::error::{ErrorCode, ToolError, clamp_text};
use connecta_core::result::page_utf8;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{MetaOutput, parse_args};
use crate::clock::now_ms;
use crate::{Gateway, RequestCtx};

/// The largest page a caller may ask for.
const MAX_PAGE_BYTES: usize = 200_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    id: String,
    #[serde(default)]
    offset: Option<u64>,
    #[serde(default)]
    max_bytes: Option<u64>,
}

impl Gateway {
    pub(crate) async fn get_result(
        &self,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> Result<MetaOutput, ToolError> {
        let a: Args = parse_args("get_result", args)?;
        let max = match a.max_bytes {
            None => self.config.limits.result_cap_bytes.min(MAX_PAGE_BYTES),
            Some(0) => return Err(ToolError::invalid_args("maxBytes must be at least 1")),
            Some(m) => (m as usize).min(MAX_PAGE_BYTES),
        };
        let text = self
            .store
            .stash_get(&a.id, &ctx.actor.key(), now_ms())
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "stash read failed");
                ToolError::with_cause(
                    ErrorCode::ResultProcessingFailed,
                    "the stored result could not be read",
                    true,
                )
            })?;
        let Some(text) = text else {
            return Err(ToolError::new(
                ErrorCode::NotFound,
                format!(
                    "no stored result \"{}\": it expired (results are kept {} minutes) or belongs to another caller; call the tool again",
                    clamp_text(&a.id, 80),
                    self.config.limits.stash_ttl.as_secs() / 60
                ),
            ));
        };
        let offset = a.offset.unwrap_or(0).min(usize::MAX as u64) as usize;
        let page = page_utf8(&text, offset, max);
        let mut out = json!({
            "text": page.text,
            "offset": page.offset,
            "totalBytes": page.total_bytes,
        });
        if let Some(next) = page.next_offset {
            out["nextOffset"] = json!(next);
        }
        Ok(MetaOutput::value(out))
    }
}
