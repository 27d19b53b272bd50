//! The `ask` approval policy: before a destructive call runs, the gateway
//! puts the question to a human and waits for one closed decision (the
//! approval seed): `allowed-once` grants this one call; `rejected`,
//! `cancelled` (the caller went away) and `unavailable` (nobody answered in
//! `approvals.timeout_ms`, or the question could not be kept) refuse.
//!
//! The question is a row in the store, so any replica's operator can answer
//! it (`connecta approvals approve|reject`), and, when the MCP client can be
//! asked and `approvers` includes the client, an elicitation to the caller's
//! own human; whichever answers first decides, through one conditional
//! write. With operators only, an answer the client sends is refused. The approver sees the tool, the
//! connector, the agent's reason and the arguments; the activity log gets
//! only the pair `approval_asked` / `approval_decided`, with who decided.
//!
//! Must never: run a call on anything but `allowed-once`, or leave a
//! question pending once its asker has stopped waiting.

use std::time::{Duration, Instant};

use connecta_core::activity::{ActivityEvent, ApprovalDecision, ApprovalNote, ApprovalRecord};
use connecta_core::error::{ErrorCode, ToolError, clamp_text};
use connecta_store::ApprovalRow;
use rand::RngExt;
use serde_json::Value;

use crate::clock::now_ms;
use crate::context::{ApprovalInput, InputRequest};
use crate::{Gateway, RequestCtx};

/// How often a waiting call looks for an operator's answer in the store.
const POLL: Duration = Duration::from_millis(250);

/// The arguments shown to a human in an elicitation are cut here (the
/// operator's `approvals list --json` has them whole).
const MAX_SHOWN_ARGS: usize = 2_000;

/// One destructive call awaiting a human.
pub(crate) struct Question<'a> {
    pub connector: &'a str,
    pub tool: &'a str,
    pub address: &'a str,
    pub args: &'a Value,
    pub reason: Option<&'a str>,
    /// The caller's own human may answer (`approvals.approvers`); else
    /// only an operator.
    pub client_may_answer: bool,
}

impl Gateway {
    /// Asks, waits, records the pair, and answers `Ok` only for
    /// `allowed-once`.
    pub(crate) async fn ask_approval(
        &self,
        ctx: &RequestCtx,
        q: &Question<'_>,
    ) -> Result<(), ToolError> {
        if let Some(ApprovalInput::Answer {
            approval_id,
            approved,
        }) = &ctx.approval_input
        {
            if !q.client_may_answer {
                return Err(self_answer_refused(q));
            }
            return self.resume_approval(ctx, q, approval_id, *approved).await;
        }
        let started = Instant::now();
        let timeout = self.config.approvals.timeout;
        let id = new_id();
        let now = now_ms();
        let row = ApprovalRow {
            id: id.clone(),
            connector_id: q.connector.to_owned(),
            tool_name: q.tool.to_owned(),
            address: q.address.to_owned(),
            actor: ctx.actor.clone(),
            reason: q.reason.map(str::to_owned),
            args_json: Some(q.args.to_string()),
            created_at_ms: now,
            expires_at_ms: now.saturating_add(timeout.as_millis() as i64),
            status: "pending".into(),
            decided_by: None,
            decided_at_ms: None,
        };
        if let Err(e) = self.store.approval_insert(&row).await {
            tracing::error!(
                connector = q.connector,
                tool = q.tool,
                "could not record an approval question: {e}"
            );
            return Err(ToolError::new(
                ErrorCode::ApprovalUnavailable,
                format!(
                    "the approval question for {} could not be recorded, so nobody can answer it; it was not called",
                    clamp_text(q.address, 257)
                ),
            ));
        }
        tracing::info!(
            approval = %id,
            connector = q.connector,
            tool = q.tool,
            "approval pending: answer with `connecta approvals approve {id}` or `... reject {id}`"
        );
        self.record_approval(ctx, q, &id, None, None, Duration::ZERO);
        if q.client_may_answer && ctx.approval_input == Some(ApprovalInput::Ask) {
            // The client's human answers between this request and its retry.
            // An operator may answer meanwhile; a "no" (or the deadline)
            // then stands, and a "yes" does not open the retry (see
            // `resume_approval`): the call must be made again.
            *ctx.input_request.lock().unwrap_or_else(|p| p.into_inner()) = Some(InputRequest {
                approval_id: id.clone(),
                message: elicitation_message(q),
            });
            return Err(ToolError::new(
                ErrorCode::ApprovalUnavailable,
                format!(
                    "approval of {} was handed to the client's human; call again with the answer",
                    clamp_text(q.address, 257)
                ),
            ));
        }
        let (decision, by) = self.await_decision(ctx, q, &id, started + timeout).await;
        self.record_approval(ctx, q, &id, Some(decision), Some(&by), started.elapsed());
        outcome(decision, &by, q, id, timeout)
    }

    /// The retry of a call whose question went to the client's human: the
    /// question must be this caller's, about this very call, and still
    /// open; the human's answer is then written, unless an operator (or
    /// the deadline) decided first.
    async fn resume_approval(
        &self,
        ctx: &RequestCtx,
        q: &Question<'_>,
        id: &str,
        approved: bool,
    ) -> Result<(), ToolError> {
        let timeout = self.config.approvals.timeout;
        let mismatch = || {
            ToolError::new(
                ErrorCode::ApprovalUnavailable,
                format!(
                    "the answer given is not for this call of {}; it was not called (call again without it to be asked anew)",
                    clamp_text(q.address, 257)
                ),
            )
        };
        let row = match self.store.approval_get(id).await {
            Ok(Some(row)) => row,
            Ok(None) => return Err(mismatch()),
            Err(e) => {
                tracing::error!(approval = id, "could not read an approval question: {e}");
                return Err(ToolError::new(
                    ErrorCode::ApprovalUnavailable,
                    "the approval question could not be read; the call was not made",
                ));
            }
        };
        let same_call = row.actor == ctx.actor
            && row.connector_id == q.connector
            && row.tool_name == q.tool
            && row
                .args_json
                .as_deref()
                .is_none_or(|a| serde_json::from_str::<Value>(a).ok().as_ref() == Some(q.args));
        if !same_call {
            return Err(mismatch());
        }
        let by = format!("elicitation:{}", ctx.actor.key());
        let asked = if approved {
            ApprovalDecision::AllowedOnce
        } else {
            ApprovalDecision::Rejected
        };
        // Only an answer that decides the question opens the call. One that
        // finds it decided (an operator, the deadline, or an earlier retry)
        // opens nothing: a decided question no longer says which call it was
        // for, and a grant is good for one call.
        let (decision, by) = match self
            .store
            .approval_decide(id, asked, &by, now_ms(), true)
            .await
        {
            Ok(Some(_)) => (asked, by),
            Ok(None) => {
                return Err(ToolError::new(
                    ErrorCode::ApprovalUnavailable,
                    format!(
                        "the question this answer is for was already decided or has expired; {} was not called (call again to be asked anew)",
                        clamp_text(q.address, 257)
                    ),
                ));
            }
            Err(e) => {
                tracing::error!(approval = id, "could not record an approval decision: {e}");
                (ApprovalDecision::Unavailable, "gateway (store)".into())
            }
        };
        let waited = Duration::from_millis((now_ms() - row.created_at_ms).max(0) as u64);
        self.record_approval(ctx, q, id, Some(decision), Some(&by), waited);
        outcome(decision, &by, q, id.to_owned(), timeout)
    }

    /// Waits for the first answer: the caller's human (elicitation), an
    /// operator (the store), the caller going away, or the deadline.
    async fn await_decision(
        &self,
        ctx: &RequestCtx,
        q: &Question<'_>,
        id: &str,
        deadline: Instant,
    ) -> (ApprovalDecision, String) {
        let message = elicitation_message(q);
        let elicitor = ctx.elicitor.as_ref().filter(|_| q.client_may_answer);
        let elicited = async {
            match elicitor {
                Some(e) => e.confirm(&message).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(elicited);
        let mut asked_client = elicitor.is_some();
        let deadline = tokio::time::sleep_until(deadline.into());
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                biased;
                () = ctx.cancel.cancelled() => {
                    return self.settle(id, ApprovalDecision::Cancelled, "gateway (the caller went away)").await;
                }
                answer = &mut elicited, if asked_client => {
                    asked_client = false;
                    let by = format!("elicitation:{}", ctx.actor.key());
                    match answer {
                        Some(true) => return self.settle(id, ApprovalDecision::AllowedOnce, &by).await,
                        Some(false) => return self.settle(id, ApprovalDecision::Rejected, &by).await,
                        // The client could not be asked: an operator still can.
                        None => {}
                    }
                }
                () = &mut deadline => {
                    return self.settle(id, ApprovalDecision::Unavailable, "gateway (nobody answered in time)").await;
                }
                () = tokio::time::sleep(POLL) => {
                    match self.store.approval_get(id).await {
                        Ok(Some(row)) => {
                            if let Some(decision) = row.decision() {
                                return (decision, row.decided_by.unwrap_or_default());
                            }
                        }
                        Ok(None) => {
                            return (ApprovalDecision::Unavailable, "gateway (the question was removed)".into());
                        }
                        // Keep waiting: the deadline still ends it.
                        Err(e) => tracing::warn!(approval = id, "could not read an approval question: {e}"),
                    }
                }
            }
        }
    }

    /// Writes this side's decision, unless someone decided first: then
    /// theirs stands. A store failure is `unavailable`.
    async fn settle(
        &self,
        id: &str,
        decision: ApprovalDecision,
        by: &str,
    ) -> (ApprovalDecision, String) {
        match self
            .store
            .approval_decide(id, decision, by, now_ms(), false)
            .await
        {
            Ok(Some(_)) => (decision, by.to_owned()),
            Ok(None) => match self.store.approval_get(id).await {
                Ok(Some(row)) if !row.is_pending() => (
                    row.decision().unwrap_or(ApprovalDecision::Unavailable),
                    row.decided_by.unwrap_or_default(),
                ),
                _ => (ApprovalDecision::Unavailable, "gateway (store)".into()),
            },
            Err(e) => {
                tracing::error!(approval = id, "could not record an approval decision: {e}");
                (ApprovalDecision::Unavailable, "gateway (store)".into())
            }
        }
    }

    fn record_approval(
        &self,
        ctx: &RequestCtx,
        q: &Question<'_>,
        id: &str,
        decision: Option<ApprovalDecision>,
        by: Option<&str>,
        waited: Duration,
    ) {
        self.activity.record(ActivityEvent::approval(
            uuid::Uuid::now_v7().to_string(),
            now_ms(),
            &ctx.request_id,
            &ctx.actor,
            ApprovalRecord {
                connector_id: q.connector,
                tool_name: q.tool,
                duration_ms: waited.as_millis() as u64,
                note: ApprovalNote {
                    id: id.to_owned(),
                    decision,
                    decided_by: by.map(str::to_owned),
                },
            },
        ));
    }
}

/// How long past its expiry a question may stay pending before any
/// gateway closes it: the one waiting on it settles it at expiry, so a
/// question still pending after this lost its asker (a crash).
pub(crate) const ABANDONED_AFTER: Duration = Duration::from_secs(10);

impl Gateway {
    /// Closes questions whose asker is gone as `unavailable`, clearing their
    /// reason and arguments, and records the decision that was never made.
    pub(crate) async fn close_abandoned_approvals(&self, now: i64) {
        let before = now.saturating_sub(ABANDONED_AFTER.as_millis() as i64);
        let by = "gateway (the asker stopped before the question expired)";
        let closed = match self.store.approval_close_expired(before, by, now).await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!("could not close abandoned approval questions: {e}");
                return;
            }
        };
        for row in closed {
            tracing::info!(approval = %row.id, connector = %row.connector_id, tool = %row.tool_name, "closed an abandoned approval question as unavailable");
            self.activity.record(ActivityEvent::approval(
                uuid::Uuid::now_v7().to_string(),
                now,
                &row.id,
                &row.actor,
                ApprovalRecord {
                    connector_id: &row.connector_id,
                    tool_name: &row.tool_name,
                    duration_ms: now.saturating_sub(row.created_at_ms).max(0) as u64,
                    note: ApprovalNote {
                        id: row.id.clone(),
                        decision: Some(ApprovalDecision::Unavailable),
                        decided_by: Some(by.to_owned()),
                    },
                },
            ));
        }
    }
}

fn new_id() -> String {
    let mut bytes = [0u8; 8];
    rand::rng().fill(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("apr_{hex}")
}

/// A client's answer where only an operator may answer: refused, and the
/// call is not made. A question it names, if any, stays the operator's.
fn self_answer_refused(q: &Question<'_>) -> ToolError {
    ToolError::new(
        ErrorCode::ApprovalRejected,
        format!(
            "this deployment takes approvals from an operator only (approvers = [\"operator\"]); an answer sent with the call does not count, and {} was not called. Call again without one and an operator will be asked",
            clamp_text(q.address, 257)
        ),
    )
    .detail("approvers", serde_json::json!(["operator"]))
}

/// `Ok` for `allowed-once`; the typed refusal for everything else.
fn outcome(
    decision: ApprovalDecision,
    by: &str,
    q: &Question<'_>,
    id: String,
    timeout: Duration,
) -> Result<(), ToolError> {
    let address = clamp_text(q.address, 257);
    let mut error = match decision {
        ApprovalDecision::AllowedOnce => return Ok(()),
        ApprovalDecision::Rejected => ToolError::new(
            ErrorCode::ApprovalRejected,
            format!("the approver rejected this call ({by}); {address} was not called"),
        ),
        ApprovalDecision::Cancelled => ToolError::new(
            ErrorCode::Cancelled,
            format!("the request went away while approval was pending; {address} was not called"),
        ),
        ApprovalDecision::Unavailable => ToolError::new(
            ErrorCode::ApprovalUnavailable,
            format!(
                "nobody answered the approval question within {} s; {address} was not called",
                timeout.as_secs()
            ),
        ),
    };
    error.details.insert("approvalId".into(), Value::String(id));
    Err(error)
}

/// What the caller's human reads: the tool, the connector, the agent's
/// reason and the arguments.
fn elicitation_message(q: &Question<'_>) -> String {
    let args = q.args.to_string();
    let mut text = format!(
        "Allow {} (connector \"{}\") to run once? It is not read-only.",
        q.address, q.connector
    );
    if let Some(reason) = q.reason {
        text.push_str("\nReason given: ");
        text.push_str(reason);
    }
    text.push_str("\nArguments: ");
    text.push_str(&clamp_text(&args, MAX_SHOWN_ARGS));
    text
}

/// A question's status as an operator sees it: a pending one past its
/// expiry is `expired` (its asker got `approval_unavailable`).
pub fn approval_status(r: &ApprovalRow, now_ms: i64) -> &str {
    if r.is_pending() && r.expires_at_ms <= now_ms {
        "expired"
    } else {
        &r.status
    }
}

/// A question as the operator's tools show it (CLI `--json`, the UI):
/// everything an approver needs, arguments whole.
pub fn approval_view(r: &ApprovalRow, now_ms: i64) -> Value {
    let args = r
        .args_json
        .as_deref()
        .map(|a| serde_json::from_str::<Value>(a).unwrap_or(Value::String(a.to_owned())));
    serde_json::json!({
        "id": r.id, "status": approval_status(r, now_ms), "address": r.address,
        "connector": r.connector_id, "tool": r.tool_name,
        "askedBy": r.actor.key(), "reason": r.reason, "args": args,
        "createdAtMs": r.created_at_ms, "expiresAtMs": r.expires_at_ms,
        "decidedBy": r.decided_by, "decidedAtMs": r.decided_at_ms,
    })
}
