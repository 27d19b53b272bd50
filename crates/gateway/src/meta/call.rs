//! `call_tool` (read-only only) and `call_destructive_tool` (anything, through
//! the approval boundary).

use std::time::{Duration, Instant};

use connecta_core::activity::Source;
use connecta_core::config::{ApprovalPolicy, Approvers};
use connecta_core::error::{ErrorCode, ToolError};
use connecta_core::result::check_field_paths;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{MetaOutput, parse_args};
use crate::call_path::{Ask, Boundary, CallSpec, Target};
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
    /// Everything about a call that can be refused before anything is
    /// called: its timeout (returned) and its `fields` paths.
    fn check_call(
        &self,
        target: Option<Target<'_>>,
        timeout_ms: Option<u64>,
        fields: Option<&[String]>,
    ) -> Result<Duration, ToolError> {
        let max = self.config.limits.max_call_timeout;
        let timeout = match timeout_ms {
            None => target.map_or(self.config.limits.call_timeout, |t| t.handle.config.timeout),
            Some(0) => return Err(ToolError::invalid_args("timeoutMs must be at least 1")),
            Some(ms) if ms as u128 > max.as_millis() => {
                return Err(ToolError::invalid_args(format!(
                    "timeoutMs may be at most {} (this deployment's limits.max_call_timeout_ms)",
                    max.as_millis()
                )));
            }
            Some(ms) => Duration::from_millis(ms),
        };
        if let Some(paths) = fields {
            check_field_paths(paths).map_err(ToolError::invalid_args)?;
        }
        Ok(timeout)
    }

    /// A call refused before it was made: recorded when the address names a
    /// real connector (refusals that do are in the activity log), then
    /// returned.
    fn refuse_before_call(
        &self,
        ctx: &RequestCtx,
        target: Option<Target<'_>>,
        source: Source,
        error: ToolError,
        started: Instant,
    ) -> ToolError {
        if let Some(t) = target {
            self.record_refusal(
                ctx,
                &t.handle.config.id,
                t.tool,
                source,
                error.code,
                started,
            );
        }
        error
    }

    pub(crate) async fn call_tool(
        &self,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> Result<MetaOutput, ToolError> {
        let a: CallArgs = parse_args("call_tool", args)?;
        let started = Instant::now();
        let target = self.target(&a.address);
        let max_retries = a.max_retries.unwrap_or(0);
        let checked = if max_retries > 2 {
            Err(ToolError::invalid_args("maxRetries must be 0, 1 or 2"))
        } else {
            self.check_call(target, a.timeout_ms, a.fields.as_deref())
        };
        let timeout = checked
            .map_err(|e| self.refuse_before_call(ctx, target, Source::CallTool, e, started))?;
        let spec = CallSpec {
            address: &a.address,
            args: a.args,
            timeout,
            deadline: None,
            max_retries,
            boundary: Boundary::ReadOnly,
            source: Source::CallTool,
            ask: None,
        };
        self.run_call(target, spec, a.result_mode, a.fields, ctx)
            .await
    }

    pub(crate) async fn call_destructive_tool(
        &self,
        args: Map<String, Value>,
        ctx: &RequestCtx,
    ) -> Result<MetaOutput, ToolError> {
        let a: DestructiveArgs = parse_args("call_destructive_tool", args)?;
        let started = Instant::now();
        let target = self.target(&a.address);
        let source = Source::CallDestructiveTool;
        let timeout = self
            .check_call(target, a.timeout_ms, a.fields.as_deref())
            .map_err(|e| self.refuse_before_call(ctx, target, source, e, started))?;
        let policy = target
            .and_then(|t| t.handle.config.approval)
            .unwrap_or(self.config.approvals.policy);
        let approvers = target
            .and_then(|t| t.handle.config.approvers)
            .unwrap_or(self.config.approvals.approvers);
        if policy == ApprovalPolicy::Never
            && let Some(t) = target
        {
            // The rejection needs a real tool: an unknown address is
            // answered as such before anything is rejected.
            if let Err(error) = self.resolve(t, None).await {
                return Err(self.refuse_before_call(ctx, target, source, error, started));
            }
            let rejected = ErrorCode::ApprovalRejected;
            self.record_refusal(ctx, &t.handle.config.id, t.tool, source, rejected, started);
            return Err(ToolError::new(
                rejected,
                format!(
                    "this deployment rejects every destructive call (approval policy \"never\"); {} was not called",
                    a.address
                ),
            ));
        }
        // `reason` is for a human approver only: under `host` that is the
        // MCP client's own user, who has it already; under `ask` the
        // gateway shows it with the question. It is never sent downstream
        // or recorded.
        let reason = a
            .reason
            .as_deref()
            .map(|r| connecta_core::error::clamp_text(r, MAX_REASON_BYTES).into_owned());
        let spec = CallSpec {
            address: &a.address,
            args: a.args,
            timeout,
            deadline: None,
            max_retries: 0,
            boundary: Boundary::Approved,
            source,
            ask: (policy == ApprovalPolicy::Ask).then_some(Ask {
                reason: reason.as_deref(),
                client_may_answer: approvers == Approvers::OperatorOrClient,
            }),
        };
        self.run_call(target, spec, a.result_mode, a.fields, ctx)
            .await
    }

    async fn run_call(
        &self,
        target: Option<Target<'_>>,
        spec: CallSpec<'_>,
        mode: Option<Mode>,
        fields: Option<Vec<String>>,
        ctx: &RequestCtx,
    ) -> Result<MetaOutput, ToolError> {
        let source = spec.source;
        let cap = target.map_or(self.config.limits.result_cap_bytes, |t| {
            t.handle.config.result_cap_bytes
        });
        let mut d = self.dispatch_to(target, spec, ctx).await;
        let result = std::mem::replace(&mut d.result, Ok(Default::default()));
        match result {
            Ok(r) => {
                let mode = mode.map_or(ResultMode::Mcp, ResultMode::from);
                match self.shape(r, mode, fields.as_deref(), cap, ctx).await {
                    Ok(shaped) => {
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
                // A question handed back to the client is no call yet: the
                // retry that carries the answer is the one recorded.
                if ctx.input_request().is_none() {
                    self.record(ctx, &d, source, None);
                }
                Err(e)
            }
        }
    }
}
