//! The payload-free activity event (contract V1–V4, friction classes from the
//! rich-output seed).
//!
//! Architecture invariant: [`ActivityEvent`] has no field that could hold
//! arguments, results, program source, or raw error text. Identity fields
//! that may carry caller-authored text are clamped on construction.

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, clamp_text};

/// Identity fields are clamped to this many bytes; the address to two of them
/// and the dot between.
pub const MAX_NAME_BYTES: usize = 128;
pub const MAX_ADDRESS_BYTES: usize = MAX_NAME_BYTES * 2 + 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    CallTool,
    CallDestructiveTool,
    ExecuteCode,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::CallTool => "call_tool",
            Source::CallDestructiveTool => "call_destructive_tool",
            Source::ExecuteCode => "execute_code",
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        [
            Source::CallTool,
            Source::CallDestructiveTool,
            Source::ExecuteCode,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Success,
    Error,
    Timeout,
    Cancelled,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Error => "error",
            Outcome::Timeout => "timeout",
            Outcome::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        [
            Outcome::Success,
            Outcome::Error,
            Outcome::Timeout,
            Outcome::Cancelled,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }

    pub fn for_code(code: Option<ErrorCode>) -> Outcome {
        match code {
            None => Outcome::Success,
            Some(ErrorCode::Timeout) => Outcome::Timeout,
            Some(ErrorCode::Cancelled | ErrorCode::ExecutorCancelled) => Outcome::Cancelled,
            Some(_) => Outcome::Error,
        }
    }
}

/// Coarse recovery class an agent hit, derived without looking at payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Friction {
    ToolNotFound,
    SchemaRetry,
    DestructiveReroute,
    AuthRequired,
    ResultTooLarge,
}

impl Friction {
    pub fn as_str(self) -> &'static str {
        match self {
            Friction::ToolNotFound => "tool_not_found",
            Friction::SchemaRetry => "schema_retry",
            Friction::DestructiveReroute => "destructive_reroute",
            Friction::AuthRequired => "auth_required",
            Friction::ResultTooLarge => "result_too_large",
        }
    }

    pub fn parse(s: &str) -> Option<Friction> {
        [
            Friction::ToolNotFound,
            Friction::SchemaRetry,
            Friction::DestructiveReroute,
            Friction::AuthRequired,
            Friction::ResultTooLarge,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }

    pub fn for_code(code: ErrorCode) -> Option<Friction> {
        match code {
            ErrorCode::UnknownAddress | ErrorCode::UnknownTool | ErrorCode::AmbiguousToolAlias => {
                Some(Friction::ToolNotFound)
            }
            ErrorCode::InvalidArgs => Some(Friction::SchemaRetry),
            ErrorCode::DestructiveToolRequiresApproval => Some(Friction::DestructiveReroute),
            ErrorCode::AuthRequired => Some(Friction::AuthRequired),
            ErrorCode::ResultTooLarge => Some(Friction::ResultTooLarge),
            _ => None,
        }
    }
}

/// Who made the call: the authenticated caller as far as connecta can tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    /// `anonymous` (open endpoint), `bearer` (a shared static token),
    /// `token` (an operator-issued token), `oauth` (a validated JWT), `stdio`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Actor {
    pub fn anonymous() -> Actor {
        Actor {
            kind: "anonymous".into(),
            id: None,
        }
    }

    pub fn stdio() -> Actor {
        Actor {
            kind: "stdio".into(),
            id: None,
        }
    }

    /// A stable key for scoping per-caller state (stashed results).
    pub fn key(&self) -> String {
        match &self.id {
            Some(id) => format!("{}:{}", self.kind, id),
            None => self.kind.clone(),
        }
    }
}

/// The closed outcomes of asking a human to approve one call (the approval
/// seed): only `allowed-once` grants, and anything unexpected is
/// `unavailable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApprovalDecision {
    #[serde(rename = "allowed-once")]
    AllowedOnce,
    #[serde(rename = "rejected")]
    Rejected,
    /// The caller went away while the question was open.
    #[serde(rename = "cancelled")]
    Cancelled,
    /// Nobody answered in time, or nobody could be asked.
    #[serde(rename = "unavailable")]
    Unavailable,
}

impl ApprovalDecision {
    pub const ALL: [ApprovalDecision; 4] = [
        ApprovalDecision::AllowedOnce,
        ApprovalDecision::Rejected,
        ApprovalDecision::Cancelled,
        ApprovalDecision::Unavailable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::AllowedOnce => "allowed-once",
            ApprovalDecision::Rejected => "rejected",
            ApprovalDecision::Cancelled => "cancelled",
            ApprovalDecision::Unavailable => "unavailable",
        }
    }

    /// Unknown text is `unavailable`: fail closed.
    pub fn parse(s: &str) -> ApprovalDecision {
        Self::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .unwrap_or(ApprovalDecision::Unavailable)
    }

    /// The refusal this decision is, if it is one.
    pub fn error_code(self) -> Option<ErrorCode> {
        match self {
            ApprovalDecision::AllowedOnce => None,
            ApprovalDecision::Rejected => Some(ErrorCode::ApprovalRejected),
            ApprovalDecision::Cancelled => Some(ErrorCode::Cancelled),
            ApprovalDecision::Unavailable => Some(ErrorCode::ApprovalUnavailable),
        }
    }
}

/// What an event records: a tool call, or one half of an approval pair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    #[default]
    Call,
    ApprovalAsked,
    ApprovalDecided,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Call => "call",
            EventKind::ApprovalAsked => "approval_asked",
            EventKind::ApprovalDecided => "approval_decided",
        }
    }

    /// Unknown text reads as a call (rows written before kinds existed).
    pub fn parse(s: &str) -> EventKind {
        [EventKind::ApprovalAsked, EventKind::ApprovalDecided]
            .into_iter()
            .find(|k| k.as_str() == s)
            .unwrap_or(EventKind::Call)
    }

    pub fn is_call(&self) -> bool {
        *self == EventKind::Call
    }
}

/// The approval an `approval_asked` / `approval_decided` event belongs to.
/// Never the reason or the arguments: those are for the approver only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalNote {
    /// Gateway-issued (`apr_…`); pairs the two events.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<ApprovalDecision>,
    /// Who decided (`cli:<user>`, `elicitation:<caller>`, `gateway`),
    /// clamped like every identity field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

/// One attempted tool call, or one half of an approval pair. Constructed
/// only through [`ActivityEvent::new`] and [`ActivityEvent::approval`],
/// which clamp identity fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityEvent {
    pub id: String,
    pub occurred_at_ms: i64,
    pub request_id: String,
    pub actor: Actor,
    pub connector_id: String,
    pub tool_name: String,
    pub address: String,
    pub source: Source,
    pub outcome: Outcome,
    pub duration_ms: u64,
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friction: Option<Friction>,
    #[serde(default, skip_serializing_if = "EventKind::is_call")]
    pub kind: EventKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalNote>,
}

/// What an approval event is about: the call's tool, how long the
/// question had been open, and the question itself.
#[derive(Debug, Clone)]
pub struct ApprovalRecord<'a> {
    pub connector_id: &'a str,
    pub tool_name: &'a str,
    pub duration_ms: u64,
    pub note: ApprovalNote,
}

/// What a caller knows about a call when it records it.
#[derive(Debug, Clone)]
pub struct CallRecord<'a> {
    pub connector_id: &'a str,
    pub tool_name: &'a str,
    pub source: Source,
    pub duration_ms: u64,
    pub attempts: u32,
    pub error_code: Option<ErrorCode>,
    /// Friction on a call that succeeded (an oversized result); otherwise
    /// derived from the error code.
    pub friction: Option<Friction>,
}

impl ActivityEvent {
    pub fn new(
        id: String,
        occurred_at_ms: i64,
        request_id: &str,
        actor: &Actor,
        record: CallRecord<'_>,
    ) -> ActivityEvent {
        let connector_id = clamp_text(record.connector_id, MAX_NAME_BYTES).into_owned();
        let tool_name = clamp_text(record.tool_name, MAX_NAME_BYTES).into_owned();
        let full = crate::address::format_address(record.connector_id, record.tool_name);
        let address = clamp_text(&full, MAX_ADDRESS_BYTES).into_owned();
        let friction = record
            .friction
            .or_else(|| record.error_code.and_then(Friction::for_code));
        ActivityEvent {
            id,
            occurred_at_ms,
            request_id: clamp_text(request_id, MAX_NAME_BYTES).into_owned(),
            actor: Actor {
                kind: actor.kind.clone(),
                id: actor
                    .id
                    .as_deref()
                    .map(|i| clamp_text(i, MAX_NAME_BYTES).into_owned()),
            },
            connector_id,
            tool_name,
            address,
            source: record.source,
            outcome: Outcome::for_code(record.error_code),
            duration_ms: record.duration_ms,
            attempts: record.attempts.max(1),
            error_code: record.error_code,
            friction,
            kind: EventKind::Call,
            approval: None,
        }
    }

    /// An `approval_asked` event (`note.decision` is `None`) or an
    /// `approval_decided` one. Its outcome and error code are the
    /// decision's; the source is `call_destructive_tool`.
    pub fn approval(
        id: String,
        occurred_at_ms: i64,
        request_id: &str,
        actor: &Actor,
        record: ApprovalRecord<'_>,
    ) -> ActivityEvent {
        let ApprovalRecord {
            connector_id,
            tool_name,
            duration_ms,
            note,
        } = record;
        let error_code = note.decision.and_then(ApprovalDecision::error_code);
        let mut event = ActivityEvent::new(
            id,
            occurred_at_ms,
            request_id,
            actor,
            CallRecord {
                connector_id,
                tool_name,
                source: Source::CallDestructiveTool,
                duration_ms,
                attempts: 1,
                error_code,
                friction: None,
            },
        );
        event.friction = None;
        event.kind = if note.decision.is_some() {
            EventKind::ApprovalDecided
        } else {
            EventKind::ApprovalAsked
        };
        event.approval = Some(ApprovalNote {
            id: clamp_text(&note.id, MAX_NAME_BYTES).into_owned(),
            decision: note.decision,
            decided_by: note
                .decided_by
                .as_deref()
                .map(|b| clamp_text(b, MAX_NAME_BYTES).into_owned()),
        });
        event
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_identity_fields_are_clamped_with_a_marker() {
        let huge = "x".repeat(40_000);
        let e = ActivityEvent::new(
            "id".into(),
            0,
            "req",
            &Actor::anonymous(),
            CallRecord {
                connector_id: "notes",
                tool_name: &huge,
                source: Source::CallTool,
                duration_ms: 1,
                attempts: 1,
                error_code: Some(ErrorCode::UnknownTool),
                friction: None,
            },
        );
        assert!(e.tool_name.len() <= MAX_NAME_BYTES);
        assert!(e.tool_name.ends_with('…'));
        assert!(e.address.len() <= MAX_ADDRESS_BYTES);
        assert_eq!(e.outcome, Outcome::Error);
        assert_eq!(e.friction, Some(Friction::ToolNotFound));
    }

    #[test]
    fn friction_on_success_is_kept() {
        let e = ActivityEvent::new(
            "id".into(),
            0,
            "req",
            &Actor::anonymous(),
            CallRecord {
                connector_id: "c",
                tool_name: "t",
                source: Source::CallTool,
                duration_ms: 1,
                attempts: 0,
                error_code: None,
                friction: Some(Friction::ResultTooLarge),
            },
        );
        assert_eq!(e.outcome, Outcome::Success);
        assert_eq!(e.friction, Some(Friction::ResultTooLarge));
        assert_eq!(e.attempts, 1);
    }
}
