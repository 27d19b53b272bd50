//! `call_tool` (read-only only) and `call_destructive_tool` (anything, through
//! the approval boundary).

use std::time::{Duration, Instant};

use connecta_core::activity::Source;
use connecta_core::address::Address;
use connecta_core::config::ApprovalPolicy;
use connecta_core::error::{ErrorCode, ToolError};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{MetaOutput, parse_args};
use crate::call_path::{Boundary, CallSpec};
use crate::shaping::ResultMode;
use crate::{Gateway, RequestCtx};

/// Agent-supplied approval reasons are clamped to this many bytes.
const MAX_REASON_BYTES: usize = 512;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CallArgs {
    address: String,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    fields: Option<Vec<String>>,
    #[serde(default)]
    result_mode: Option<Mode>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    max_retries: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct DestructiveArgs {
    address: String,
    #[serde(default)]
    args: Option<Value>,
    /// Shown to a human approver; never sent downstream, never recorded.
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    fields: Option<Vec<String>>,
    #[serde(default)]
    result_mode: Option<Mode>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Mode {
    Mcp,
    Value,
}

impl From<Mode> for ResultMode {
    fn from(m: Mode) -> Self {
        match m {
            Mode::Mcp => ResultMode::Mcp,
            Mode::Value => ResultMode::Value,
        }
    }
}

impl Gateway {
    fn call_timeout(&self, address: &str, requested: Option<u64>) -> Result<Duration, ToolError> {
        let max = self.config.limits.max_call_timeout;
        match requested {
            None => Ok(Address::parse(address)
                .and_then(|a| self.connector(a.connector))
                .map_or(self.config.limits.call_timeout, |h| h.config.timeout)),
            Some(0) => Err(ToolError::invalid_args("timeoutMs must be at least 1")),
            Some(ms) if ms as u128 > max.as_millis() => Err(ToolError::invalid_args(format!(
                "timeoutMs may be at most {} (this deployment's limits.max_call_timeout_ms)",
                max.as_millis()
            ))),
            Some(ms) => Ok(Duration::from_millis(ms)),
        }
    }

    fn result_cap(&self, address: &str) -> usize {
        Address::parse(address)
            .and_then(|a| self.connector(a.connector))
            .map_or(self.config.limits.result_cap_bytes, |h| {
                h.config.result_cap_bytes
            })
    }

    pub(crate) async fn call_tool(
        &self,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> Result<MetaOutput, ToolError> {
        let a: CallArgs = parse_args("call_tool", args)?;
        let max_retries = a.max_retries.unwrap_or(0);
        if max_retries > 2 {
            return Err(ToolError::invalid_args("maxRetries must be 0, 1 or 2"));
        }
        let timeout = self.call_timeout(&a.address, a.timeout_ms)?;
        let spec = CallSpec {
            address: &a.address,
            args: a.args,
            timeout,
            max_retries,
            boundary: Boundary::ReadOnly,
            source: Source::CallTool,
        };
        self.run_call(spec, a.result_mode, a.fields, ctx).await
    }

    pub(crate) async fn call_destructive_tool(
        &self,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> Result<MetaOutput, ToolError> {
        let a: DestructiveArgs = parse_args("call_destructive_tool", args)?;
        let timeout = self.call_timeout(&a.address, a.timeout_ms)?;
        let started = Instant::now();
        // The approval question needs a real tool: resolve first (an unknown
        // address is answered before anyone is asked anything).
        let policy = Address::parse(&a.address)
            .and_then(|addr| self.connector(addr.connector))
            .and_then(|h| h.config.approval)
            .unwrap_or(self.config.approvals.policy);
        if policy == ApprovalPolicy::Never
            && let Some(addr) = Address::parse(&a.address)
            && let Some(h) = self.connector(addr.connector)
        {
            self.record_refusal(
                ctx,
                &h.config.id,
                addr.tool,
                Source::CallDestructiveTool,
                ErrorCode::ApprovalRejected,
                started,
            );
            return Err(ToolError::new(
                ErrorCode::ApprovalRejected,
                format!(
                    "this deployment rejects every destructive call (approval policy \"never\"); {} was not called",
                    a.address
                ),
            ));
        }
        // `reason` stops here: it is for a human approver, who under the
        // `host` policy is the MCP client's own user.
        let _reason = a
            .reason
            .as_deref()
            .map(|r| connecta_core::error::clamp_text(r, MAX_REASON_BYTES).into_owned());
        let spec = CallSpec {
            address: &a.address,
            args: a.args,
            timeout,
            max_retries: 0,
            boundary: Boundary::Approved,
            source: Source::CallDestructiveTool,
        };
        self.run_call(spec, a.result_mode, a.fields, ctx).await
    }

    async fn run_call(
        &self,
        spec: CallSpec<'_>,
        mode: Option<Mode>,
        fields: Option<Vec<String>>,
        ctx: &RequestCtx,
    ) -> Result<MetaOutput, ToolError> {
        let source = spec.source;
        let cap = self.result_cap(spec.address);
        if let Some(f) = &fields
            && f.is_empty()
        {
            return Err(ToolError::invalid_args(
                "fields, when given, must list at least one path",
            ));
        }
        let mut d = self.dispatch(spec, ctx).await;
        let result = std::mem::replace(
            &mut d.result,
            Err(ToolError::new(ErrorCode::ResultProcessingFailed, "moved")),
        );
        match result {
            Ok(r) => {
                let mode = mode.map_or(ResultMode::Mcp, ResultMode::from);
                match self.shape(r, mode, fields.as_deref(), cap, ctx).await {
                    Ok(shaped) => {
                        d.result = Ok(Default::default());
                        self.record(ctx, &d, source, shaped.friction);
                        Ok(shaped.output)
                    }
                    Err(e) => {
                        d.result = Err(e.clone());
                        self.record(ctx, &d, source, None);
                        Err(e)
                    }
                }
            }
            Err(e) => {
                d.result = Err(e.clone());
                self.record(ctx, &d, source, None);
                Err(e)
            }
        }
    }
}
