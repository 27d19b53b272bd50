//! The starter config `connecta init` writes, and the built-in demo config
//! `connecta serve` runs when there is no config file at all.

use super::{Config, Env, parse_config};

/// The connector id of the built-in demo server.
pub const DEMO_CONNECTOR_ID: &str = "demo";

/// Written by `connecta init`. It must parse as-is (a test checks it), so a
/// new user can start from it and uncomment what they need.
pub const STARTER_CONFIG: &str = r#"# connecta configuration. Every key and its default is described in
# docs/configuration.md. Values may reference the environment as ${NAME}
# (or ${NAME:-default}); write $${ for a literal ${.

[server]
listen = "127.0.0.1:8787"        # HTTP address; /mcp, /health, /metrics
data_dir = "data"                # the SQLite store lives here
# public_url = "https://connecta.example.com"   # the URL clients use; its host is accepted on /mcp
# allowed_hosts = ["connecta.internal"]          # more Host values to accept (loopback always is)
# allowed_origins = ["https://app.example.com"]  # browser origins allowed to call /mcp

[auth]
# An open endpoint needs no token. It is refused on a non-loopback listen.
open = true
# bearer_tokens = ["${CONNECTA_TOKEN}"]          # static tokens (at least 16 characters)
# Or issue named, revocable tokens: connecta token create NAME
# [auth.oauth]                                     # JWT access tokens from an OAuth 2.1 server
# issuer = "https://auth.example.com"

# [limits]
# call_timeout_ms = 15000        # per downstream call (call_tool may ask for up to max_call_timeout_ms)
# result_cap_bytes = 50000       # larger call_tool results are stashed and paged with get_result

# [approvals]
# policy = "host"                # host: the MCP client asks its human; ask: connecta asks one
#                                #   (connecta approvals approve ID); never: refuse every destructive call
# approvers = ["operator", "client"]   # ask: who may answer; ["operator"] never asks the calling client
# timeout_ms = 120000            # ask: how long a question waits for an answer

# [operator]                     # the web UI at /ui
# secret = "${CONNECTA_OPERATOR_SECRET}"   # default: generated into data_dir/operator-secret
# session_hours = 12

# [store]
# url = "${CONNECTA_DATABASE_URL}"   # PostgreSQL for several replicas (default: SQLite in data_dir)

# [vault]
# key_file = "vault.key"         # under data_dir; used when CONNECTA_VAULT_KEY is not set

# The built-in demo server: a few notes tools over in-memory data.
# "connecta" as a command means this very binary.
[[connector]]
id = "demo"
kind = "mcp"
command = "connecta"
args = ["demo-server"]
guide = "A small in-memory notebook. Search notes before reading them; creating and deleting notes needs approval."

# A downstream MCP server over streamable HTTP:
# [[connector]]
# id = "everything"
# kind = "mcp"
# url = "http://127.0.0.1:3001/mcp"
# headers = { Authorization = "Bearer ${EVERYTHING_TOKEN}" }

# A downstream MCP server behind OAuth 2.1: the agent gets a consent link
# for the user from authorize_connector (or see the operator UI).
# [[connector]]
# id = "tracker"
# url = "https://tracker.example.com/mcp"
# [connector.oauth]

# A downstream MCP server as a child process:
# [[connector]]
# id = "memory"
# kind = "mcp"
# command = "npx"
# args = ["-y", "@modelcontextprotocol/server-memory"]
# exclude_tools = ["delete_*"]
# [connector.overrides.read_graph]
# read_only = true

# An HTTP API, tools declared by hand (more in examples/):
# [[connector]]
# id = "weather"
# kind = "api"
# base_url = "https://api.weather.example"
# # allow_private_network = true   # only for APIs on loopback/private addresses (default false)
# [connector.credential]          # the operator sets it: connecta credential set weather
# label = "Weather API token"
# [[connector.tool]]
# name = "get_forecast"
# description = "Forecast for a place"
# read_only = true
# method = "GET"
# path = "/forecast/{city}"
# input_schema = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }

# An HTTP API described by an OpenAPI 3.0/3.1 document (JSON or YAML): its
# operations are the tools; GET and HEAD are read-only, the rest need approval.
# [[connector]]
# id = "github"
# kind = "openapi"
# spec = "github.json"              # relative to this file
# base_url = "https://api.github.com"
# include_tags = ["issues"]
# [connector.credential]
# label = "GitHub token"
"#;

/// The configuration `connecta serve` runs with no config file: the demo
/// connector, SQLite under `./data`, open on loopback.
pub fn demo_config() -> Config {
    let env = |_: &str| None;
    match parse_config(STARTER_CONFIG, "<built-in demo config>", &env as &dyn Env) {
        Ok(c) => c,
        // The starter text is a constant checked by a unit test; failing to
        // parse it is a build defect, not a runtime condition.
        Err(e) => panic!("built-in config does not parse: {e}"),
    }
}
