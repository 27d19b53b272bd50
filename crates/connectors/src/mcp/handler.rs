//! The client side connecta presents to downstream servers: its identity and
//! no capabilities. connecta does not relay sampling, elicitation or roots
//! from downstream servers. An elicitation sent anyway is refused with an
//! error (never declined on the user's behalf) and counted, so the call it
//! interrupted fails `input_required_unsupported` (contract E2).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use connecta_core::config::Handshake;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, Implementation,
    ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ClientLifecycleMode, ErrorData, RoleClient};

#[derive(Debug, Clone, Default)]
pub(crate) struct GatewayClient {
    /// Elicitations refused so far, shared with the connector.
    pub(crate) refused_elicitations: Arc<AtomicU64>,
}

impl ClientHandler for GatewayClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("connecta", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.refused_elicitations.fetch_add(1, Ordering::SeqCst);
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            "connecta does not relay elicitation (mid-call input) to a human; this client declared no elicitation capability",
            None,
        ))
    }
}

/// `initialize` by default: rmcp's discover probe waits 10 s on a silent
/// server, so the new handshake is opt-in per connector.
pub(crate) fn lifecycle(handshake: Handshake) -> ClientLifecycleMode {
    match handshake {
        Handshake::Initialize => ClientLifecycleMode::Initialize,
        Handshake::Discover => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: None,
        },
    }
}
