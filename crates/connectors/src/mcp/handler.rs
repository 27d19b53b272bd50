//! The client side connecta presents to downstream servers: its identity and
//! no capabilities. connecta does not relay sampling, elicitation or roots
//! from downstream servers. An elicitation sent anyway is refused with an
//! error (never declined on the user's behalf) and counted, so the call it
//! interrupted fails `input_required_unsupported` (contract E2).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use connecta_core::config::Handshake;
#[allow(deprecated)]
use rmcp::model::ListRootsResult;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientResult, CreateMessageRequestMethod,
    ElicitRequestParams, ElicitResult, Implementation, ProtocolVersion, ServerRequest,
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
        Err(refuse_elicitation(&self.refused_elicitations))
    }
}

fn refuse_elicitation(refused: &AtomicU64) -> ErrorData {
    refused.fetch_add(1, Ordering::SeqCst);
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        "connecta does not relay elicitation (mid-call input) to a human; this client declared no elicitation capability",
        None,
    )
}

/// The answer [`GatewayClient`] gives (with rmcp's defaults for what it
/// leaves to them) to a request the downstream sends in the middle of a
/// call posted without rmcp's service (`direct.rs`).
pub(crate) fn answer(
    request: ServerRequest,
    refused: &AtomicU64,
) -> Result<ClientResult, ErrorData> {
    match request {
        ServerRequest::PingRequest(_) => Ok(ClientResult::empty(())),
        // rmcp's default (roots are deprecated, SEP-2577).
        #[allow(deprecated)]
        ServerRequest::ListRootsRequest(_) => {
            Ok(ClientResult::ListRootsResult(ListRootsResult::default()))
        }
        ServerRequest::ElicitRequest(_) => Err(refuse_elicitation(refused)),
        ServerRequest::CreateMessageRequest(_) => {
            Err(ErrorData::method_not_found::<CreateMessageRequestMethod>())
        }
        ServerRequest::CustomRequest(custom) => Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            custom.method,
            None,
        )),
        _ => Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            "connecta does not answer this request",
            None,
        )),
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

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ServerJsonRpcMessage;
    use serde_json::json;

    /// A request as a downstream sends it on the wire.
    fn request(method: &str, params: serde_json::Value) -> ServerRequest {
        let message: ServerJsonRpcMessage = serde_json::from_value(
            json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}),
        )
        .expect("a server request");
        message.into_request().expect("a request").0
    }

    #[test]
    fn e2_an_elicitation_mid_call_is_refused_and_counted() {
        let refused = AtomicU64::new(0);
        let params = json!({
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        });
        let err = answer(request("elicitation/create", params), &refused).expect_err("refused");
        assert_eq!(err.code, rmcp::model::ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(refused.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_ping_is_answered_and_sampling_and_unknown_methods_are_not_found() {
        let refused = AtomicU64::new(0);
        assert!(matches!(
            answer(request("ping", json!({})), &refused),
            Ok(ClientResult::EmptyResult(_))
        ));
        let sampling = json!({"messages": [], "maxTokens": 10});
        for (method, params) in [
            ("sampling/createMessage", sampling),
            ("vendor/anything", json!({})),
        ] {
            let err = answer(request(method, params), &refused).expect_err(method);
            assert_eq!(
                err.code,
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "{method}"
            );
        }
        assert_eq!(refused.load(Ordering::SeqCst), 0, "nothing else counts");
    }
}
