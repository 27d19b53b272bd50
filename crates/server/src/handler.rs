//! The rmcp `ServerHandler`: the seven tools, answered by the gateway.

use std::sync::Arc;

use std::time::Duration;

use async_trait::async_trait;
use connecta_core::activity::Actor;
use connecta_gateway::{ApprovalInput, Elicitor, Gateway, InputRequest, RequestCtx};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, ErrorCode, Implementation, InputRequiredResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::task::TaskTracker;

use crate::convert;

/// Cheap to clone: the streamable HTTP service asks for a handler per request.
#[derive(Clone)]
pub struct ConnectaServer {
    gateway: Arc<Gateway>,
    tools: Arc<Vec<Tool>>,
    info: Arc<ServerConfig>,
    /// Counts the tool calls running, shared by every clone, so a stdio
    /// session can wait for them before it closes stdout on shutdown.
    pub(crate) in_flight: TaskTracker,
}

impl ConnectaServer {
    pub fn new(gateway: Arc<Gateway>) -> ConnectaServer {
        let tools: Vec<Tool> = gateway.meta_tools().iter().map(convert::tool).collect();
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("connecta", env!("CARGO_PKG_VERSION")))
            .with_instructions(connecta_gateway::surface::instructions(
                gateway.code_mode_enabled(),
            ));
        ConnectaServer {
            gateway,
            tools: Arc::new(tools),
            info: Arc::new(info),
            in_flight: TaskTracker::new(),
        }
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// One meta-tool call, answered: rmcp's `call_tool` and the direct lane
    /// (`direct.rs`) both end here.
    pub(crate) async fn respond(
        &self,
        name: &str,
        args: rmcp::model::JsonObject,
        ctx: RequestCtx,
    ) -> CallToolResponse {
        let _running = self.in_flight.token();
        // Boxed: the gateway's future is large, and rmcp moves the one it
        // spawns per request several times; a box is moved as a pointer.
        let out = Box::pin(self.gateway.call_meta(name, args, &ctx)).await;
        if let Some(asked) = ctx.input_request() {
            return CallToolResponse::InputRequired(input_required(asked));
        }
        CallToolResponse::Complete(convert::result(out))
    }
}

/// Who is calling: set by the HTTP auth layer, or stdio's local user.
fn actor(ctx: &RequestContext<RoleServer>) -> Actor {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<Actor>().cloned())
        .unwrap_or_else(Actor::stdio)
}

/// The client's human, asked through MCP elicitation (a form with one
/// yes-or-no field) when the `ask` approval policy needs an answer.
struct PeerElicitor {
    peer: Peer<RoleServer>,
    /// No longer than the question stays open.
    timeout: Duration,
}

impl std::fmt::Debug for PeerElicitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PeerElicitor")
    }
}

#[async_trait]
impl Elicitor for PeerElicitor {
    async fn confirm(&self, message: &str) -> Option<bool> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_owned(),
            requested_schema: approval_schema(),
        };
        match self
            .peer
            .create_elicitation_with_timeout(params, Some(self.timeout))
            .await
        {
            Ok(r) => Some(match r.action {
                ElicitationAction::Accept => {
                    r.content
                        .as_ref()
                        .and_then(|c| c.get("approve"))
                        .and_then(serde_json::Value::as_bool)
                        == Some(true)
                }
                // A refusal, a question dismissed, or an action this
                // version does not know: not a grant.
                _ => false,
            }),
            Err(e) => {
                tracing::warn!("the client could not be asked to approve a call: {e}");
                None
            }
        }
    }
}

/// The approval form: one yes-or-no field, unchecked by default.
fn approval_schema() -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_bool_with("approve", |b| {
            b.title("Allow this call once")
                .description("Check to let the call run once; leave unchecked to refuse it.")
                .with_default(false)
        })
        .build()
        .expect("a one-field schema builds")
}

/// An elicitor for this request, when its client can answer one: a
/// session (stdio) whose client declared form elicitation. Stateless HTTP
/// has no channel for a request from the server.
fn elicitor(ctx: &RequestContext<RoleServer>, timeout: Duration) -> Option<Arc<dyn Elicitor>> {
    let over_http = ctx.extensions.get::<http::request::Parts>().is_some();
    let can_answer = ctx
        .peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form);
    (!over_http && can_answer).then(|| {
        Arc::new(PeerElicitor {
            peer: ctx.peer.clone(),
            timeout,
        }) as Arc<dyn Elicitor>
    })
}

/// The key of the approval question among a retry's `inputResponses`.
const APPROVAL_INPUT: &str = "approval";

/// How the `ask` policy reaches this caller over multi round-trip requests
/// (MCP 2026-07-28): a client of that revision that declared form
/// elicitation is handed the question, and its retry carries the answer.
/// Over a session (stdio) the question is a real elicitation instead.
fn approval_input(
    request: &CallToolRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> Option<ApprovalInput> {
    if request.name != "call_destructive_tool" {
        return None;
    }
    if let (Some(state), Some(responses)) = (&request.request_state, &request.input_responses) {
        let approved = responses.get(APPROVAL_INPUT).is_some_and(|r| {
            r.get("action").and_then(serde_json::Value::as_str) == Some("accept")
                && r.get("content")
                    .and_then(|c| c.get("approve"))
                    .and_then(serde_json::Value::as_bool)
                    == Some(true)
        });
        return Some(ApprovalInput::Answer {
            approval_id: state.clone(),
            approved,
        });
    }
    let modern = ctx
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    let form = ctx.client_capabilities().is_some_and(|c| {
        c.elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    });
    let over_http = ctx.extensions.get::<http::request::Parts>().is_some();
    (modern && form && over_http).then_some(ApprovalInput::Ask)
}

/// The question handed back: one form elicitation (a yes-or-no field), and
/// the question's id as the state the client echoes.
fn input_required(asked: InputRequest) -> InputRequiredResult {
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: asked.message,
        requested_schema: approval_schema(),
    };
    let mut requests = rmcp::model::InputRequests::new();
    requests.insert(
        APPROVAL_INPUT.to_owned(),
        rmcp::model::InputRequest::Elicitation(rmcp::model::ElicitRequest::new(params)),
    );
    InputRequiredResult::new(Some(requests), Some(asked.approval_id))
}

impl ServerHandler for ConnectaServer {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items((*self.tools).clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut ctx = RequestCtx::new(actor(&context), context.ct.clone());
        if let Some(e) = elicitor(&context, self.gateway.config.approvals.timeout) {
            ctx = ctx.with_elicitor(e);
        }
        if let Some(input) = approval_input(&request, &context) {
            ctx = ctx.with_approval_input(input);
        }
        let args = request.arguments.unwrap_or_default();
        Ok(self.respond(&request.name, args, ctx).await)
    }

    /// rmcp hands a request here when it cannot read it as any method it
    /// knows: an unknown method, or a known one whose params do not fit
    /// (`tools/call` with a non-string `name` or non-object `arguments`).
    /// The second is invalid params (-32602), not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        if method == "tools/call" {
            return Err(ErrorData::invalid_params(
                "Invalid params: tools/call takes {name: string, arguments?: object}",
                None,
            ));
        }
        if ANSWERED_METHODS.contains(&method) {
            return Err(ErrorData::invalid_params(
                format!("Invalid params: the params of {method} are not valid"),
                None,
            ));
        }
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            connecta_core::error::clamp_text(method, 128).into_owned(),
            None,
        ))
    }
}

/// The methods this server answers, whose params rmcp reads itself.
const ANSWERED_METHODS: [&str; 5] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
];
