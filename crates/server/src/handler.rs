//! The rmcp `ServerHandler`: the seven tools, answered by the gateway.

use std::sync::Arc;

use connecta_core::activity::Actor;
use connecta_gateway::{Gateway, RequestCtx};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
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
}

/// Who is calling: set by the HTTP auth layer, or stdio's local user.
fn actor(ctx: &RequestContext<RoleServer>) -> Actor {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<Actor>().cloned())
        .unwrap_or_else(Actor::stdio)
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
        let _running = self.in_flight.token();
        let ctx = RequestCtx::new(actor(&context), context.ct.clone());
        let args = request.arguments.unwrap_or_default();
        let out = self.gateway.call_meta(&request.name, args, &ctx).await;
        Ok(CallToolResponse::Complete(convert::result(out)))
    }
}
