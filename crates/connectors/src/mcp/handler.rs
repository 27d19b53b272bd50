//! The client side connecta presents to downstream servers: its identity and
//! no capabilities. connecta does not relay sampling, elicitation or roots
//! from downstream servers; rmcp answers such requests with an error.

use connecta_core::config::Handshake;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::{ClientHandler, ClientLifecycleMode};

#[derive(Debug, Clone, Default)]
pub(crate) struct GatewayClient;

impl ClientHandler for GatewayClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("connecta", env!("CARGO_PKG_VERSION")),
        )
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
