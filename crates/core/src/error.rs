//! The one error taxonomy every surface speaks (contract E2).
//!
//! A [`ToolError`] is what an agent sees: a stable `code`, a clamped message,
//! `retryable`, an optional exact `retryAfterMs`, and, where there is a way out,
//! an executable [`NextAction`]. Policy refusals have their retryability pinned
//! here in code (E7): it is never inferred from message text, so a connector
//! named `svc-503` cannot turn a refusal into something worth retrying.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Caller-authored text echoed in an error is clamped to this many bytes.
pub const MAX_ECHO_BYTES: usize = 512;

/// Every error code connecta emits. The string forms are a public interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    UnknownAddress,
    UnknownTool,
    AmbiguousToolAlias,
    DestructiveToolRequiresApproval,
    ApprovalRejected,
    ApprovalUnavailable,
    AuthRequired,
    InvalidArgs,
    InputRequiredUnsupported,
    NotFound,
    RateLimited,
    Unavailable,
    Timeout,
    Cancelled,
    BudgetExceeded,
    ResultTooLarge,
    ConnectorCallFailed,
    BatchCallFailed,
    CatalogLookupFailed,
    ResultProcessingFailed,
    ExecutorOverloaded,
    ExecutorCancelled,
    ExecutorClosed,
    ExecutionFailed,
}

impl ErrorCode {
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::UnknownAddress,
        ErrorCode::UnknownTool,
        ErrorCode::AmbiguousToolAlias,
        ErrorCode::DestructiveToolRequiresApproval,
        ErrorCode::ApprovalRejected,
        ErrorCode::ApprovalUnavailable,
        ErrorCode::AuthRequired,
        ErrorCode::InvalidArgs,
        ErrorCode::InputRequiredUnsupported,
        ErrorCode::NotFound,
        ErrorCode::RateLimited,
        ErrorCode::Unavailable,
        ErrorCode::Timeout,
        ErrorCode::Cancelled,
        ErrorCode::BudgetExceeded,
        ErrorCode::ResultTooLarge,
        ErrorCode::ConnectorCallFailed,
        ErrorCode::BatchCallFailed,
        ErrorCode::CatalogLookupFailed,
        ErrorCode::ResultProcessingFailed,
        ErrorCode::ExecutorOverloaded,
        ErrorCode::ExecutorCancelled,
        ErrorCode::ExecutorClosed,
        ErrorCode::ExecutionFailed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownAddress => "unknown_address",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::AmbiguousToolAlias => "ambiguous_tool_alias",
            ErrorCode::DestructiveToolRequiresApproval => "destructive_tool_requires_approval",
            ErrorCode::ApprovalRejected => "approval_rejected",
            ErrorCode::ApprovalUnavailable => "approval_unavailable",
            ErrorCode::AuthRequired => "auth_required",
            ErrorCode::InvalidArgs => "invalid_args",
            ErrorCode::InputRequiredUnsupported => "input_required_unsupported",
            ErrorCode::NotFound => "not_found",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::BudgetExceeded => "budget_exceeded",
            ErrorCode::ResultTooLarge => "result_too_large",
            ErrorCode::ConnectorCallFailed => "connector_call_failed",
            ErrorCode::BatchCallFailed => "batch_call_failed",
            ErrorCode::CatalogLookupFailed => "catalog_lookup_failed",
            ErrorCode::ResultProcessingFailed => "result_processing_failed",
            ErrorCode::ExecutorOverloaded => "executor_overloaded",
            ErrorCode::ExecutorCancelled => "executor_cancelled",
            ErrorCode::ExecutorClosed => "executor_closed",
            ErrorCode::ExecutionFailed => "execution_failed",
        }
    }

    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_str() == s)
    }

    /// Retryability for codes whose answer does not depend on the cause.
    ///
    /// `None` means "per cause": the constructor that knows the cause decides.
    /// Policy refusals are `Some(false)` here and nowhere else (E7).
    pub fn pinned_retryable(self) -> Option<bool> {
        match self {
            ErrorCode::UnknownAddress
            | ErrorCode::UnknownTool
            | ErrorCode::AmbiguousToolAlias
            | ErrorCode::DestructiveToolRequiresApproval
            | ErrorCode::ApprovalRejected
            | ErrorCode::ApprovalUnavailable
            | ErrorCode::AuthRequired
            | ErrorCode::InvalidArgs
            | ErrorCode::InputRequiredUnsupported
            | ErrorCode::NotFound
            | ErrorCode::Cancelled
            | ErrorCode::BudgetExceeded
            | ErrorCode::ResultTooLarge
            | ErrorCode::ExecutorCancelled
            | ErrorCode::ExecutorClosed
            | ErrorCode::ExecutionFailed => Some(false),
            ErrorCode::RateLimited
            | ErrorCode::Unavailable
            | ErrorCode::Timeout
            | ErrorCode::ExecutorOverloaded => Some(true),
            ErrorCode::ConnectorCallFailed
            | ErrorCode::BatchCallFailed
            | ErrorCode::CatalogLookupFailed
            | ErrorCode::ResultProcessingFailed => None,
        }
    }

    /// Who is at fault, for logs and metrics (never shown as blame to agents).
    pub fn fault(self) -> Fault {
        match self {
            ErrorCode::UnknownAddress
            | ErrorCode::UnknownTool
            | ErrorCode::AmbiguousToolAlias
            | ErrorCode::DestructiveToolRequiresApproval
            | ErrorCode::InvalidArgs
            | ErrorCode::NotFound
            | ErrorCode::BudgetExceeded
            | ErrorCode::ResultTooLarge
            | ErrorCode::ExecutionFailed
            | ErrorCode::Cancelled
            | ErrorCode::ExecutorCancelled => Fault::Caller,
            ErrorCode::ApprovalRejected | ErrorCode::ApprovalUnavailable => Fault::Caller,
            ErrorCode::AuthRequired
            | ErrorCode::InputRequiredUnsupported
            | ErrorCode::RateLimited
            | ErrorCode::Unavailable
            | ErrorCode::Timeout
            | ErrorCode::ConnectorCallFailed
            | ErrorCode::CatalogLookupFailed => Fault::Downstream,
            ErrorCode::BatchCallFailed
            | ErrorCode::ResultProcessingFailed
            | ErrorCode::ExecutorOverloaded
            | ErrorCode::ExecutorClosed => Fault::Gateway,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who caused an error; used for operator-facing logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Caller,
    Downstream,
    Gateway,
}

/// An executable next step: a meta-tool and the arguments to call it with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextAction {
    pub tool: Cow<'static, str>,
    pub arguments: Value,
}

impl NextAction {
    pub fn new(tool: &'static str, arguments: Value) -> Self {
        NextAction {
            tool: Cow::Borrowed(tool),
            arguments,
        }
    }
}

/// The error an agent sees, on every surface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    pub retryable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_action: Option<NextAction>,
    /// Code-specific structured fields (`connector`, `recovery`, `suggestions`…).
    #[serde(flatten, skip_serializing_if = "Map::is_empty", default)]
    pub details: Map<String, Value>,
}

impl ToolError {
    /// An error whose retryability is pinned by its code, or `false` when the
    /// code is per-cause and the caller did not say (fail closed: a failure we
    /// cannot classify is not worth repeating automatically).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: clamp_text(&message.into(), 4 * MAX_ECHO_BYTES).into_owned(),
            retryable: code.pinned_retryable().unwrap_or(false),
            retry_after_ms: None,
            next_action: None,
            details: Map::new(),
        }
    }

    /// A per-cause error whose retryability the cause decides. For codes that
    /// pin retryability the pinned value wins: policy is not negotiable.
    pub fn with_cause(code: ErrorCode, message: impl Into<String>, retryable: bool) -> Self {
        let mut e = ToolError::new(code, message);
        e.retryable = code.pinned_retryable().unwrap_or(retryable);
        e
    }

    pub fn retry_after(mut self, ms: u64) -> Self {
        self.retry_after_ms = Some(ms);
        self
    }

    pub fn next(mut self, action: NextAction) -> Self {
        self.next_action = Some(action);
        self
    }

    pub fn detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The `{ "error": { … } }` object a failed call carries as its value.
    pub fn to_envelope(&self) -> Value {
        let mut outer = Map::with_capacity(1);
        outer.insert(
            "error".to_owned(),
            serde_json::to_value(self).unwrap_or(Value::Null),
        );
        Value::Object(outer)
    }

    // Constructors for the refusals whose shape is fixed by the contract.

    pub fn unknown_address(address: &str) -> Self {
        ToolError::new(
            ErrorCode::UnknownAddress,
            format!(
                "no connector owns the address \"{}\"; addresses are <connector>.<tool> exactly as search_tools prints them",
                clamp_text(address, MAX_ECHO_BYTES)
            ),
        )
        .next(NextAction::new(
            "search_tools",
            serde_json::json!({ "query": clamp_text(tool_part(address), MAX_ECHO_BYTES) }),
        ))
    }

    pub fn unknown_tool(connector: &str, tool: &str) -> Self {
        ToolError::new(
            ErrorCode::UnknownTool,
            format!(
                "connector \"{connector}\" has no tool \"{}\"",
                clamp_text(tool, MAX_ECHO_BYTES)
            ),
        )
        .detail("connector", connector)
        .next(NextAction::new(
            "search_tools",
            serde_json::json!({ "query": clamp_text(tool, MAX_ECHO_BYTES), "connector": connector }),
        ))
    }

    /// The refusal of a tool that is not read-only where only reads may
    /// run; its next action is the same call through the approval boundary,
    /// with the same arguments, so it can be run as given.
    pub fn requires_approval(address: &str, args: Option<&serde_json::Value>) -> Self {
        let mut arguments = serde_json::json!({ "address": address });
        if let Some(a) = args.filter(|a| a.is_object()) {
            arguments["args"] = a.clone();
        }
        ToolError::new(
            ErrorCode::DestructiveToolRequiresApproval,
            format!(
                "{} is not annotated read-only, so it cannot run through call_tool or inside programs; call it with call_destructive_tool",
                clamp_text(address, MAX_ECHO_BYTES)
            ),
        )
        .next(NextAction::new("call_destructive_tool", arguments))
    }

    pub fn invalid_args(message: impl Into<String>) -> Self {
        ToolError::new(ErrorCode::InvalidArgs, message)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

fn tool_part(address: &str) -> &str {
    address.split_once('.').map_or(address, |(_, t)| t)
}

/// Clamp text to at most `max` bytes on a UTF-8 boundary, marking the cut with
/// `…` so a clamped value never reads as a complete one.
pub fn clamp_text(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    const MARK: &str = "…";
    let budget = max.saturating_sub(MARK.len());
    let cut = floor_char_boundary(text, budget);
    let mut out = String::with_capacity(cut + MARK.len());
    out.push_str(&text[..cut]);
    out.push_str(MARK);
    Cow::Owned(out)
}

/// The largest char boundary at or below `index`.
pub fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    let mut i = index;
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e7_policy_codes_are_pinned_non_retryable_whatever_the_caller_says() {
        for code in [
            ErrorCode::UnknownAddress,
            ErrorCode::UnknownTool,
            ErrorCode::AmbiguousToolAlias,
            ErrorCode::DestructiveToolRequiresApproval,
        ] {
            assert!(!ToolError::with_cause(code, "svc-503 said 429 temporarily", true).retryable);
        }
        let e = ToolError::requires_approval("svc-503.delete", Some(&serde_json::json!({"id": 7})));
        assert!(!e.retryable);
        let next = e.next_action.as_ref().expect("a next action");
        assert_eq!(next.tool, "call_destructive_tool");
        assert_eq!(
            serde_json::to_value(next).expect("serializes")["arguments"],
            serde_json::json!({"address": "svc-503.delete", "args": {"id": 7}})
        );
    }

    #[test]
    fn e2_per_cause_codes_take_the_cause() {
        assert!(ToolError::with_cause(ErrorCode::ConnectorCallFailed, "x", true).retryable);
        assert!(!ToolError::with_cause(ErrorCode::ConnectorCallFailed, "x", false).retryable);
        assert!(ToolError::new(ErrorCode::Timeout, "x").retryable);
    }

    #[test]
    fn every_code_round_trips_through_its_string() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
            let json = serde_json::to_value(code).expect("serializes");
            assert_eq!(json, Value::String(code.as_str().to_owned()));
        }
    }

    #[test]
    fn echoed_text_is_clamped_on_a_char_boundary_with_a_marker() {
        let long = "é".repeat(1000);
        let clamped = clamp_text(&long, MAX_ECHO_BYTES);
        assert!(clamped.len() <= MAX_ECHO_BYTES);
        assert!(clamped.ends_with('…'));
        let e = ToolError::unknown_address(&format!("x.{}", "a".repeat(40_000)));
        assert!(e.message.len() < 4 * MAX_ECHO_BYTES);
    }

    #[test]
    fn envelope_flattens_details() {
        let e = ToolError::unknown_tool("notes", "nope");
        let v = e.to_envelope();
        assert_eq!(v["error"]["code"], "unknown_tool");
        assert_eq!(v["error"]["connector"], "notes");
        assert_eq!(v["error"]["retryable"], false);
        assert_eq!(v["error"]["nextAction"]["tool"], "search_tools");
    }
}
