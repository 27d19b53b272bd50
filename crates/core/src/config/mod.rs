//! Configuration: TOML with `${ENV}` interpolation, parsed into a raw form
//! that rejects unknown keys ([`raw`]), then lowered once into the checked
//! types below ([`lower`]). Every problem is reported with file, line and
//! column; several problems in one file are reported together.
//!
//! This module reads no files and no environment itself: the caller passes
//! the text and an environment lookup, so tests are hermetic.

mod catalog_key;
mod diagnostics;
mod load;
mod lower;
mod openapi;
#[cfg(test)]
mod properties;
pub mod raw;
mod starter;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;

pub use diagnostics::{ConfigError, Diagnostic, Positions};
pub use load::{
    Env, NoSpecFiles, Scope, SpecFiles, parse_config, parse_config_for, parse_config_with_files,
};
pub use starter::{DEMO_CONNECTOR_ID, STARTER_CONFIG, demo_config};

use crate::policy::Annotations;
use crate::secret::Secret;

/// The checked configuration the gateway runs on.
#[derive(Debug, Clone)]
pub struct Config {
    pub server: ServerConfig,
    pub log: LogConfig,
    pub auth: AuthConfig,
    pub limits: Limits,
    pub activity: ActivityConfig,
    pub code: CodeConfig,
    pub approvals: ApprovalsConfig,
    pub vault: VaultConfig,
    pub store: StoreConfig,
    pub operator: OperatorConfig,
    pub search: SearchConfig,
    pub connectors: Vec<ConnectorConfig>,
    /// Non-fatal findings (an override that names no tool yet, an open
    /// endpoint in front of credentialed connectors…), printed at boot and by
    /// `connecta check`.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    pub data_dir: String,
    pub public_url: String,
    /// `Host` values accepted on `/mcp` besides loopback.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed (CORS and `Origin` validation).
    pub allowed_origins: Vec<String>,
    pub max_concurrent_requests: usize,
    pub max_queued_requests: usize,
    pub queue_timeout: Duration,
    pub shutdown_grace: Duration,
    pub max_request_bytes: usize,
    /// How long a client may take to send a request's headers (HTTP/1);
    /// past it the connection is closed.
    pub request_header_timeout: Duration,
    /// How long a client may take to send a request's body. A body is read
    /// whole before the request asks for an admission slot, so a slow
    /// client holds a place in the queue for at most this long, never a slot.
    pub request_body_timeout: Duration,
    /// Messages one JSON-RPC batch may carry; a longer batch is refused
    /// before any of it runs.
    pub max_batch_messages: usize,
    /// Bytes of answers one batch may gather; past it, the messages not yet
    /// started are answered with an error instead of being run.
    pub max_batch_answer_bytes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Human,
    Json,
}

#[derive(Debug, Clone)]
pub struct LogConfig {
    pub level: String,
    pub format: LogFormat,
}

#[derive(Debug, Clone)]
pub struct AuthConfig {
    pub open: bool,
    pub bearer_tokens: Vec<Secret>,
    /// JWT access tokens from an authorization server, when configured.
    pub oauth: Option<OAuthConfig>,
}

/// `[auth.oauth]`: connecta as an OAuth 2.1 resource server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// The `iss` every token must carry, exactly; also the authorization
    /// server named in the protected-resource metadata.
    pub issuer: String,
    /// The `aud` a token must include; `None` means `<public_url>/mcp`.
    pub audience: Option<String>,
    /// Where the signing keys are; `None` means discovered from the
    /// issuer's metadata.
    pub jwks_url: Option<String>,
    /// Scopes a token must all carry (`scope` claim, space-separated).
    pub required_scopes: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Limits {
    pub call_timeout: Duration,
    pub max_call_timeout: Duration,
    pub result_cap_bytes: usize,
    pub stash_ttl: Duration,
    /// Bytes of unexpired stashed results one caller may hold; a result
    /// that would pass it is answered truncated, without a `resultId`.
    pub stash_caller_quota_bytes: u64,
    /// Bytes of unexpired stashed results all callers together may hold.
    pub stash_total_quota_bytes: u64,
    /// Downstream `Retry-After` windows longer than this are declined, never
    /// shortened (contract Y4).
    pub max_retry_after: Duration,
}

#[derive(Debug, Clone)]
pub struct ActivityConfig {
    pub retention: Duration,
}

/// Bounds for code mode. All are deployment configuration; none is a program
/// input (contract L8).
#[derive(Debug, Clone)]
pub struct CodeConfig {
    pub workers: usize,
    pub max_concurrent: usize,
    pub max_queued: usize,
    pub queue_timeout: Duration,
    pub deadline: Duration,
    pub cpu: Duration,
    pub heap_bytes: usize,
    pub stack_bytes: usize,
    pub host_calls: u32,
    pub batch_size: usize,
    pub call_deadline: Duration,
    pub host_payload_bytes: usize,
    pub result_chars: usize,
    pub log_chars: usize,
    pub emit_bytes: usize,
    pub emit_blocks: usize,
    pub runs_per_worker: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// The MCP client asks its human; the gateway records the call.
    Host,
    /// The gateway asks (elicitation, operator UI, CLI) and waits.
    Ask,
    /// Every destructive call is rejected.
    Never,
}

impl ApprovalPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Host => "host",
            ApprovalPolicy::Ask => "ask",
            ApprovalPolicy::Never => "never",
        }
    }
}

/// Who may answer an `ask` question. An operator (UI, CLI) always may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approvers {
    /// Only an operator: the calling client is never asked, and an answer
    /// it sends itself is refused.
    Operator,
    /// An operator, or the caller's own human through MCP elicitation
    /// (stdio) or an `input_required` result (2026-07-28 over HTTP).
    OperatorOrClient,
}

#[derive(Debug, Clone)]
pub struct ApprovalsConfig {
    pub policy: ApprovalPolicy,
    pub approvers: Approvers,
    pub timeout: Duration,
}

/// `[store]`: SQLite in `server.data_dir` unless a PostgreSQL URL is set.
#[derive(Debug, Clone, Default)]
pub struct StoreConfig {
    /// `postgres://…`: several replicas share this database. A secret (it
    /// may carry a password): never logged.
    pub postgres_url: Option<Secret>,
}

/// `[operator]`: the web UI at `/ui` (HTTP only), signed in to with an
/// operator secret that is separate from every MCP credential.
#[derive(Debug, Clone)]
pub struct OperatorConfig {
    pub enabled: bool,
    /// `None`: the gateway keeps a generated secret in
    /// `<data_dir>/operator-secret` (mode 0600).
    pub secret: Option<Secret>,
    /// How long a sign-in lasts.
    pub session: Duration,
}

/// `[search]`.
#[derive(Debug, Clone, Default)]
pub struct SearchConfig {
    /// A lexicon file that extends the built-in search lexicon, as written
    /// (relative to the config file's folder). The binary reads it; core
    /// does no I/O.
    pub lexicon: Option<String>,
}

#[derive(Debug, Clone)]
pub struct VaultConfig {
    /// Key file used when `CONNECTA_VAULT_KEY` is not set; relative paths are
    /// under the data directory.
    pub key_file: String,
}

/// One entry of a connector's `search_terms` (`jot = "create"`), each word
/// as written, with where its name word is in the file (for the search
/// crate's diagnostics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchTerm {
    pub query: String,
    pub name: String,
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone)]
pub struct ConnectorConfig {
    pub id: String,
    pub description: Option<String>,
    pub kind: ConnectorKind,
    pub timeout: Duration,
    pub result_cap_bytes: usize,
    pub catalog_ttl: Duration,
    pub catalog_stale: Duration,
    pub include_tools: Vec<String>,
    pub exclude_tools: Vec<String>,
    /// Operator annotation overrides by tool name (logged at boot).
    pub overrides: BTreeMap<String, AnnotationOverride>,
    pub guide: Option<Guide>,
    /// Operator vocabulary for search: a tool whose name carries a term's
    /// name word is also found by its query word. Checked here as one word
    /// on each side; the search crate checks the rest against its lexicon
    /// (`connecta_search::check_search_terms`).
    pub search_terms: Vec<SearchTerm>,
    pub max_concurrency: Option<usize>,
    pub rate_limit: Option<RateLimit>,
    pub approval: Option<ApprovalPolicy>,
    /// Who answers this connector's `ask` questions (else `approvals.approvers`).
    pub approvers: Option<Approvers>,
    pub credential: Option<CredentialSlot>,
    pub oauth: Option<ConnectorOAuth>,
}

/// `[connector.oauth]` on an mcp connector over HTTP: the gateway gets its
/// own access token from the downstream's authorization server (discovered
/// from the server, or `authorization_server`), after a person consents.
#[derive(Debug, Clone, Default)]
pub struct ConnectorOAuth {
    /// Scopes to ask for (none: the server's default).
    pub scopes: Vec<String>,
    /// A client registered by hand; without it the gateway registers itself
    /// (dynamic client registration).
    pub client_id: Option<String>,
    pub client_secret: Option<Secret>,
    /// The issuer, when the server does not publish protected-resource
    /// metadata.
    pub authorization_server: Option<String>,
    /// Discovery, registration and token requests may go to private
    /// networks and this host by name (otherwise only IP literals written
    /// in `url` or `authorization_server` reach that close).
    pub allow_private_network: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnnotationOverride {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

impl AnnotationOverride {
    pub fn apply(&self, a: &mut Annotations) {
        if let Some(v) = self.read_only {
            a.read_only_hint = Some(v);
        }
        if let Some(v) = self.destructive {
            a.destructive_hint = Some(v);
        }
        if let Some(v) = self.idempotent {
            a.idempotent_hint = Some(v);
        }
        if let Some(v) = self.open_world {
            a.open_world_hint = Some(v);
        }
    }
}

#[derive(Debug, Clone)]
pub struct Guide {
    pub text: String,
    /// At most 120 characters; derived from the text's first sentence when
    /// the config gives none.
    pub summary: String,
    pub required: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub calls: u32,
    pub per: Duration,
}

#[derive(Debug, Clone)]
pub enum ConnectorKind {
    Mcp(McpConfig),
    Api(ApiConfig),
}

impl ConnectorKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            ConnectorKind::Mcp(_) => "mcp",
            ConnectorKind::Api(a) if a.spec.is_some() => "openapi",
            ConnectorKind::Api(_) => "api",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handshake {
    /// Classic `initialize` handshake (default; every server speaks it).
    Initialize,
    /// Probe `server/discover` first (2026-07-28), falling back to initialize.
    Discover,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartMode {
    Boot,
    Lazy,
}

#[derive(Debug, Clone)]
pub struct McpConfig {
    pub transport: McpTransport,
    pub handshake: Handshake,
    pub start: StartMode,
    pub restart_backoff_min: Duration,
    pub restart_backoff_max: Duration,
}

#[derive(Debug, Clone)]
pub enum McpTransport {
    Http {
        url: String,
        headers: Vec<(String, Secret)>,
    },
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, Secret)>,
        cwd: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialScheme {
    Bearer,
    Raw,
    Basic,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialPlacement {
    Header(String),
    Query(String),
}

/// A credential slot an operator fills through the vault.
#[derive(Debug, Clone)]
pub struct CredentialSlot {
    pub label: String,
    /// Field names; `basic` has `user` and `secret`, the others one field.
    pub fields: Vec<String>,
    pub placement: CredentialPlacement,
    pub scheme: CredentialScheme,
    pub help: Option<String>,
}

/// An `api` connector, or an `openapi` one: its operations are lowered to
/// the same [`ApiTool`]s at config load, so both have one call path.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// For `kind = "openapi"`: the document the tools came from, as written
    /// in the config file.
    pub spec: Option<String>,
    pub base_url: String,
    pub allow_private_network: bool,
    pub headers: Vec<(String, Secret)>,
    pub max_response_bytes: usize,
    /// Largest request body (JSON) sent; larger is `invalid_args`.
    pub max_request_bytes: usize,
    pub tools: Vec<ApiTool>,
    pub test: Option<ApiTest>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpMethod {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
}

impl HttpMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Head => "HEAD",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Delete => "DELETE",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ApiTool {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub read_only: bool,
    pub idempotent: Option<bool>,
    pub method: HttpMethod,
    pub path: String,
    pub query: Vec<String>,
    /// Arguments sent in the JSON body. Empty for GET/DELETE unless listed.
    pub body: Vec<String>,
    /// The argument whose value is the whole JSON body (an `openapi`
    /// operation whose body is not an object of named members). Never set
    /// together with `body`.
    pub body_arg: Option<String>,
    /// Argument name → header name.
    pub header_args: Vec<(String, String)>,
    pub headers: Vec<(String, Secret)>,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub project: Option<Projection>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Projection {
    Pointer(String),
    Fields(Vec<String>),
}

#[derive(Debug, Clone)]
pub struct ApiTest {
    pub tool: String,
    pub args: Value,
}

// Documented defaults, in one place (docs/configuration.md mirrors these).
pub mod defaults {
    pub const LISTEN: &str = "127.0.0.1:8787";
    pub const DATA_DIR: &str = "data";
    pub const MAX_CONCURRENT_REQUESTS: u64 = 256;
    pub const MAX_QUEUED_REQUESTS: u64 = 1024;
    pub const QUEUE_TIMEOUT_MS: u64 = 5_000;
    pub const SHUTDOWN_GRACE_MS: u64 = 10_000;
    pub const MAX_REQUEST_BYTES: u64 = 4 * 1024 * 1024;
    pub const REQUEST_HEADER_TIMEOUT_MS: u64 = 10_000;
    pub const REQUEST_BODY_TIMEOUT_MS: u64 = 30_000;
    pub const MAX_BATCH_MESSAGES: u64 = 100;
    pub const MAX_BATCH_ANSWER_BYTES: u64 = 8 * 1024 * 1024;
    pub const CALL_TIMEOUT_MS: u64 = 15_000;
    pub const MAX_CALL_TIMEOUT_MS: u64 = 120_000;
    pub const RESULT_CAP_BYTES: u64 = 50_000;
    pub const STASH_TTL_SECS: u64 = 900;
    pub const STASH_CALLER_QUOTA_BYTES: u64 = 32 * 1024 * 1024;
    pub const STASH_TOTAL_QUOTA_BYTES: u64 = 256 * 1024 * 1024;
    pub const MAX_RETRY_AFTER_MS: u64 = 10_000;
    pub const ACTIVITY_RETENTION_DAYS: u64 = 30;
    pub const CATALOG_TTL_SECS: u64 = 300;
    pub const CATALOG_STALE_SECS: u64 = 3_600;
    pub const RESTART_BACKOFF_MS: [u64; 2] = [250, 30_000];
    pub const API_MAX_RESPONSE_BYTES: u64 = 5 * 1024 * 1024;
    pub const API_MAX_REQUEST_BYTES: u64 = 1024 * 1024;
    pub const APPROVAL_TIMEOUT_MS: u64 = 120_000;
    pub const VAULT_KEY_FILE: &str = "vault.key";
    pub const OPERATOR_SECRET_FILE: &str = "operator-secret";
    pub const OPERATOR_SESSION_HOURS: u64 = 12;
    pub const CODE_WORKERS: u64 = 2;
    pub const CODE_MAX_CONCURRENT: u64 = 8;
    pub const CODE_MAX_QUEUED: u64 = 64;
    pub const CODE_QUEUE_TIMEOUT_MS: u64 = 5_000;
    pub const CODE_DEADLINE_MS: u64 = 30_000;
    pub const CODE_CPU_MS: u64 = 250;
    pub const CODE_HEAP_MIB: u64 = 64;
    pub const CODE_STACK_KIB: u64 = 1_024;
    pub const CODE_HOST_CALLS: u64 = 20;
    pub const CODE_BATCH_SIZE: u64 = 10;
    pub const CODE_CALL_DEADLINE_MS: u64 = 15_000;
    pub const CODE_HOST_PAYLOAD_BYTES: u64 = 256 * 1024;
    pub const CODE_RESULT_CHARS: u64 = 24_000;
    pub const CODE_LOG_CHARS: u64 = 4_000;
    pub const CODE_EMIT_BYTES: u64 = 4_000_000;
    pub const CODE_EMIT_BLOCKS: u64 = 32;
    pub const CODE_RUNS_PER_WORKER: u64 = 1_000;
}
