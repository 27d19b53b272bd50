//! The config file exactly as written: serde structs that reject unknown keys.
//! Fields whose later validation needs a location are `Spanned`. Nothing here
//! applies defaults or judges values; that is [`super::lower`]'s job.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_spanned::Spanned;

pub type S<T> = Spanned<T>;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    #[serde(default)]
    pub server: RawServer,
    #[serde(default)]
    pub log: RawLog,
    #[serde(default)]
    pub auth: RawAuth,
    #[serde(default)]
    pub limits: RawLimits,
    #[serde(default)]
    pub activity: RawActivity,
    #[serde(default)]
    pub code: RawCode,
    #[serde(default)]
    pub approvals: RawApprovals,
    #[serde(default)]
    pub vault: RawVault,
    #[serde(default)]
    pub store: RawStore,
    #[serde(default)]
    pub operator: RawOperator,
    #[serde(default)]
    pub connector: Vec<S<RawConnector>>,
}

/// `[operator]`: the operator web UI at `/ui`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOperator {
    pub enabled: Option<bool>,
    pub secret: Option<S<String>>,
    pub session_hours: Option<S<u64>>,
}

/// `[store]`: where state lives when not in the embedded SQLite file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStore {
    pub url: Option<S<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    pub listen: Option<S<String>>,
    pub data_dir: Option<String>,
    pub public_url: Option<S<String>>,
    pub allowed_hosts: Option<Vec<String>>,
    pub allowed_origins: Option<Vec<S<String>>>,
    pub max_concurrent_requests: Option<S<u64>>,
    pub max_queued_requests: Option<u64>,
    pub queue_timeout_ms: Option<u64>,
    pub shutdown_grace_ms: Option<u64>,
    pub max_request_bytes: Option<S<u64>>,
    pub request_header_timeout_ms: Option<S<u64>>,
    pub request_body_timeout_ms: Option<S<u64>>,
    pub max_batch_messages: Option<S<u64>>,
    pub max_batch_answer_bytes: Option<S<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLog {
    pub level: Option<String>,
    pub format: Option<S<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAuth {
    pub open: Option<S<bool>>,
    pub bearer_tokens: Option<Vec<S<String>>>,
    pub oauth: Option<S<RawOAuth>>,
}

/// `[auth.oauth]`: JWT access tokens from an OAuth 2.1 authorization server.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOAuth {
    pub issuer: Option<S<String>>,
    pub audience: Option<S<String>>,
    pub jwks_url: Option<S<String>>,
    pub required_scopes: Option<Vec<S<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub call_timeout_ms: Option<S<u64>>,
    pub max_call_timeout_ms: Option<S<u64>>,
    pub result_cap_bytes: Option<S<u64>>,
    pub stash_ttl_secs: Option<S<u64>>,
    pub stash_caller_quota_bytes: Option<S<u64>>,
    pub stash_total_quota_bytes: Option<S<u64>>,
    pub max_retry_after_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawActivity {
    pub retention_days: Option<S<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCode {
    pub workers: Option<S<u64>>,
    pub max_concurrent: Option<S<u64>>,
    pub max_queued: Option<u64>,
    pub queue_timeout_ms: Option<u64>,
    pub deadline_ms: Option<S<u64>>,
    pub cpu_ms: Option<S<u64>>,
    pub heap_mib: Option<S<u64>>,
    pub stack_kib: Option<S<u64>>,
    pub host_calls: Option<S<u64>>,
    pub batch_size: Option<S<u64>>,
    pub call_deadline_ms: Option<S<u64>>,
    pub host_payload_bytes: Option<S<u64>>,
    pub result_chars: Option<S<u64>>,
    pub log_chars: Option<S<u64>>,
    pub emit_bytes: Option<S<u64>>,
    pub emit_blocks: Option<S<u64>>,
    pub runs_per_worker: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApprovals {
    pub policy: Option<S<String>>,
    pub approvers: Option<S<Vec<String>>>,
    pub timeout_ms: Option<S<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVault {
    pub key_file: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConnector {
    pub id: Option<S<String>>,
    pub kind: Option<S<String>>,
    pub description: Option<String>,
    pub enabled: Option<bool>,

    // mcp over streamable HTTP
    pub url: Option<S<String>>,
    // shared by mcp-http and api: static headers (values may use ${ENV})
    pub headers: Option<S<BTreeMap<String, String>>>,
    // mcp over stdio
    pub command: Option<S<String>>,
    pub args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub cwd: Option<String>,
    pub start: Option<S<String>>,
    pub handshake: Option<S<String>>,
    pub restart_backoff_ms: Option<S<Vec<u64>>>,

    // api
    pub base_url: Option<S<String>>,
    pub allow_private_network: Option<bool>,
    pub max_response_bytes: Option<S<u64>>,
    pub max_request_bytes: Option<S<u64>>,
    pub tool: Option<Vec<S<RawApiTool>>>,
    pub test: Option<S<RawApiTest>>,

    // openapi (and the api keys above but `tool`)
    pub spec: Option<S<String>>,
    pub include_tags: Option<S<Vec<String>>>,
    pub exclude_tags: Option<S<Vec<String>>>,

    // credential slot (vault)
    pub credential: Option<S<RawCredential>>,
    // downstream OAuth (mcp over HTTP)
    pub oauth: Option<S<RawConnectorOAuth>>,

    // every kind
    pub timeout_ms: Option<S<u64>>,
    pub result_cap_bytes: Option<S<u64>>,
    pub catalog_ttl_secs: Option<u64>,
    pub catalog_stale_secs: Option<u64>,
    pub include_tools: Option<Vec<String>>,
    pub exclude_tools: Option<Vec<String>>,
    pub overrides: Option<BTreeMap<String, S<RawOverride>>>,
    pub guide: Option<String>,
    pub guide_summary: Option<S<String>>,
    pub guide_required: Option<bool>,
    pub search_terms: Option<S<BTreeMap<String, S<String>>>>,
    pub max_concurrency: Option<S<u64>>,
    pub rate_limit: Option<S<RawRateLimit>>,
    pub approval: Option<S<String>>,
    pub approvers: Option<S<Vec<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOverride {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRateLimit {
    pub calls: u64,
    pub per_secs: u64,
}

/// `[connector.oauth]`: the gateway authorizes itself at the downstream's
/// OAuth authorization server, with a person's consent.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConnectorOAuth {
    pub scopes: Option<Vec<String>>,
    pub client_id: Option<String>,
    pub client_secret: Option<S<String>>,
    pub authorization_server: Option<S<String>>,
    pub allow_private_network: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCredential {
    pub label: Option<String>,
    pub fields: Option<Vec<String>>,
    /// Where the credential goes: `header` (default) or `query`.
    pub placement: Option<S<String>>,
    pub header: Option<String>,
    pub query_param: Option<String>,
    /// `bearer` (default), `raw`, or `basic` (over `user:secret`).
    pub scheme: Option<S<String>>,
    pub help: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApiTool {
    pub name: Option<S<String>>,
    pub description: Option<S<String>>,
    pub title: Option<String>,
    pub read_only: Option<S<bool>>,
    pub idempotent: Option<bool>,
    pub method: Option<S<String>>,
    pub path: Option<S<String>>,
    pub query: Option<Vec<String>>,
    pub body: Option<Vec<String>>,
    pub header_args: Option<BTreeMap<String, String>>,
    pub headers: Option<BTreeMap<String, String>>,
    pub input_schema: Option<S<toml::Value>>,
    pub output_schema: Option<S<toml::Value>>,
    pub project: Option<S<toml::Value>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApiTest {
    pub tool: String,
    pub args: Option<toml::Value>,
}
