//! What the gateway knows about one agent request: who is asking, how to tell
//! its events apart, and whether the caller has gone away.

use connecta_core::activity::Actor;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone)]
pub struct RequestCtx {
    /// A fresh id per request, carried by every activity event it causes.
    pub request_id: String,
    pub actor: Actor,
    /// Fires when the MCP request is cancelled or its connection drops.
    pub cancel: CancellationToken,
}

impl RequestCtx {
    pub fn new(actor: Actor, cancel: CancellationToken) -> RequestCtx {
        RequestCtx {
            request_id: uuid::Uuid::now_v7().to_string(),
            actor,
            cancel,
        }
    }

    /// A context for in-process callers (tests, the CLI's doctor).
    pub fn anonymous() -> RequestCtx {
        RequestCtx::new(Actor::anonymous(), CancellationToken::new())
    }
}
