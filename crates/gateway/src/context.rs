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

#[derive(Debug, Clone)]
pub struct RequestCtx {
    /// A fresh id per request, carried by every activity event it causes.
    pub request_id: String,
    pub actor: Actor,
    /// Fires when the MCP request is cancelled or its connection drops.
    pub cancel: CancellationToken,
    /// The caller's human, when the client can be asked (approval `ask`).
    pub elicitor: Option<Arc<dyn Elicitor>>,
}

impl RequestCtx {
    pub fn new(actor: Actor, cancel: CancellationToken) -> RequestCtx {
        RequestCtx {
            request_id: uuid::Uuid::now_v7().to_string(),
            actor,
            cancel,
            elicitor: None,
        }
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
