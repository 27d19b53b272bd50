//! What the gateway knows about one agent request: who is asking, how to tell
//! its events apart, and whether the caller has gone away.

use std::sync::Arc;

use async_trait::async_trait;
use connecta_core::activity::Actor;
use tokio_util::sync::CancellationToken;

/// A way to ask the human behind the MCP client a yes-or-no question (MCP
/// elicitation), when the client declared it can be asked. The surface
/// provides it; the gateway does not know how it travels.
#[async_trait]
pub trait Elicitor: std::fmt::Debug + Send + Sync {
    /// `Some(true)`: the human said yes. `Some(false)`: no, or dismissed the
    /// question. `None`: the question could not be put (the client failed
    /// or does not answer).
    async fn confirm(&self, message: &str) -> Option<bool>;
}

/// The `ask` policy's way to the caller's human over stateless HTTP (MCP
/// 2026-07-28, multi round-trip requests): the question goes back to the
/// client as an `input_required` result, and the client calls again with
/// the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalInput {
    /// The client can be handed the question.
    Ask,
    /// The client's retry: the question it was handed and its human's answer.
    Answer { approval_id: String, approved: bool },
}

/// A question handed back to the client instead of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputRequest {
    pub approval_id: String,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct RequestCtx {
    /// A fresh id per request, carried by every activity event it causes.
    pub request_id: String,
    pub actor: Actor,
    /// Fires when the MCP request is cancelled or its connection drops.
    pub cancel: CancellationToken,
    /// The caller's human, when the client can be asked (approval `ask`).
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// The caller's human over multi round-trip requests.
    pub approval_input: Option<ApprovalInput>,
    /// Set when this request ends by handing a question back
    /// ([`ApprovalInput::Ask`]); the surface answers with it.
    pub input_request: Arc<std::sync::Mutex<Option<InputRequest>>>,
}

impl RequestCtx {
    pub fn new(actor: Actor, cancel: CancellationToken) -> RequestCtx {
        RequestCtx {
            request_id: uuid::Uuid::now_v7().to_string(),
            actor,
            cancel,
            elicitor: None,
            approval_input: None,
            input_request: Arc::default(),
        }
    }

    pub fn with_approval_input(mut self, input: ApprovalInput) -> RequestCtx {
        self.approval_input = Some(input);
        self
    }

    /// The question this request handed back, if it did.
    pub fn input_request(&self) -> Option<InputRequest> {
        self.input_request
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn with_elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> RequestCtx {
        self.elicitor = Some(elicitor);
        self
    }

    /// A context for in-process callers (tests, the CLI's doctor).
    pub fn anonymous() -> RequestCtx {
        RequestCtx::new(Actor::anonymous(), CancellationToken::new())
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    /// Each call takes two or three UUIDs (its request id, its activity
    /// event's id). The `uuid` crate draws them from `rand`'s thread-local
    /// CSPRNG only with its `fast-rng` feature; without it every UUID is a
    /// `getrandom` system call (docs/performance.md, "Context switches per
    /// call"). The feature must stay on in what the shipped binary builds:
    /// `cargo tree` resolves features for this platform and for normal
    /// dependencies only, as the release build does.
    #[test]
    fn uuids_come_from_the_threads_generator_not_a_system_call_each() {
        let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
        let out = Command::new(env!("CARGO"))
            .args(["tree", "--offline", "--manifest-path", manifest])
            .args(["-p", "connecta", "-i", "uuid", "-e", "normal"])
            .args(["--prefix", "none", "-f", "{p} {f}"])
            .output()
            .expect("cargo tree");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "cargo tree: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The first line is uuid itself: `uuid v1.x.y <features>`.
        let first = text.lines().next().unwrap_or_default();
        let mut fields = first.split(' ');
        assert_eq!(fields.next(), Some("uuid"), "cargo tree printed: {text}");
        let features: Vec<&str> = fields.nth(1).unwrap_or_default().split(',').collect();
        assert!(
            features.contains(&"fast-rng"),
            "uuid is built without fast-rng: {features:?}"
        );
        let id = super::RequestCtx::anonymous().request_id;
        assert_eq!(
            uuid::Uuid::parse_str(&id).map(|u| u.get_version_num()),
            Ok(7)
        );
    }
}
