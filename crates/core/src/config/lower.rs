//! Lowering: raw config → checked [`Config`]. Defaults are applied here and
//! only here; every rejected value is reported at its location.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use serde_spanned::Spanned;

use super::defaults as d;
use super::diagnostics::Sink;
use super::raw::*;
use super::*;
use crate::address::{is_valid_connector_id, sanitize_identifier};

/// A century: longer retention is a typo (and its cutoff would overflow).
const MAX_RETENTION_DAYS: u64 = 36_500;
/// The longest an `ask` approval question may wait for an answer: a day.
const MAX_APPROVAL_TIMEOUT_MS: u64 = 86_400_000;

pub(crate) fn lower(
    raw: RawConfig,
    files: &dyn super::SpecFiles,
    sink: &mut Sink<'_>,
) -> Option<Config> {
    let mut warnings = Vec::new();
    let server = lower_server(raw.server, sink);
    let log = lower_log(raw.log, sink);
    let open_span = raw.auth.open.as_ref().map_or(0..0, Spanned::span);
    let auth = lower_auth(raw.auth, sink);
    let limits = lower_limits(raw.limits, sink);
    let retention_days = match &raw.activity.retention_days {
        Some(v) if !(1..=MAX_RETENTION_DAYS).contains(v.get_ref()) => {
            sink.at(
                v.span(),
                format!("activity.retention_days must be between 1 and {MAX_RETENTION_DAYS}"),
            );
            d::ACTIVITY_RETENTION_DAYS
        }
        Some(v) => *v.get_ref(),
        None => d::ACTIVITY_RETENTION_DAYS,
    };
    let activity = ActivityConfig {
        retention: Duration::from_secs(retention_days * 86_400),
    };
    let code = lower_code(raw.code, sink);
    let approvals = ApprovalsConfig {
        policy: raw
            .approvals
            .policy
            .as_ref()
            .and_then(|p| approval_policy(p, sink))
            .unwrap_or(ApprovalPolicy::Host),
        approvers: raw
            .approvals
            .approvers
            .as_ref()
            .and_then(|a| approvers(a, sink))
            .unwrap_or(Approvers::OperatorOrClient),
        timeout: Duration::from_millis(match &raw.approvals.timeout_ms {
            Some(v) if !(1_000..=MAX_APPROVAL_TIMEOUT_MS).contains(v.get_ref()) => {
                sink.at(
                    v.span(),
                    format!(
                        "approvals.timeout_ms must be between 1000 and {MAX_APPROVAL_TIMEOUT_MS} (a day)"
                    ),
                );
                d::APPROVAL_TIMEOUT_MS
            }
            Some(v) => *v.get_ref(),
            None => d::APPROVAL_TIMEOUT_MS,
        }),
    };
    let vault = VaultConfig {
        key_file: raw
            .vault
            .key_file
            .unwrap_or_else(|| d::VAULT_KEY_FILE.to_owned()),
    };
    let operator = lower_operator(raw.operator, &auth.bearer_tokens, sink);
    let store = StoreConfig {
        postgres_url: match &raw.store.url {
            Some(u)
                if u.get_ref().starts_with("postgres://")
                    || u.get_ref().starts_with("postgresql://") =>
            {
                Some(Secret::new(u.get_ref().clone()))
            }
            Some(u) => {
                sink.at(
                    u.span(),
                    "store.url must be a PostgreSQL URL (postgres://user:password@host:port/database); leave it out for the embedded SQLite file",
                );
                None
            }
            None => None,
        },
    };

    let mut connectors = Vec::with_capacity(raw.connector.len());
    let mut seen: HashMap<String, ()> = HashMap::new();
    for rc in raw.connector {
        let span = rc.span();
        if let Some(c) = lower_connector(rc.into_inner(), &limits, span.clone(), files, sink) {
            if seen.insert(c.id.clone(), ()).is_some() {
                // Reported where the second declaration is.
                sink.at(span, format!("connector id \"{}\" is declared twice", c.id));
                continue;
            }
            connectors.push(c);
        }
    }
    // Shortcut collisions (A4) are a deployment mistake code mode refuses
    // loudly; `check` says so before anyone runs a program.
    let mut by_alias: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for c in &connectors {
        by_alias
            .entry(sanitize_identifier(&c.id))
            .or_default()
            .push(&c.id);
    }
    for (alias, ids) in &by_alias {
        if ids.len() > 1 {
            warnings.push(format!(
                "connector ids {} all become the program shortcut `{alias}`; execute_code will refuse to run until they are renamed",
                ids.join(", ")
            ));
        }
        if crate::address::RESERVED_GLOBALS.contains(&alias.as_str()) {
            warnings.push(format!(
                "connector id \"{}\" becomes the reserved program global `{alias}`; execute_code will refuse to run until it is renamed",
                ids.join(", ")
            ));
        }
    }
    if auth.open && !server.listen.ip().is_loopback() {
        sink.at(
            open_span,
            format!(
                "auth.open = true is refused on a non-loopback listen address ({}); set bearer tokens or listen on 127.0.0.1",
                server.listen
            ),
        );
    }
    if auth.open
        && connectors
            .iter()
            .any(|c| c.credential.is_some() || c.oauth.is_some() || has_static_secret(c))
    {
        warnings.push(
            "the /mcp endpoint is open (auth.open = true) and fronts connectors that hold credentials".into(),
        );
    }
    Some(Config {
        server,
        log,
        auth,
        limits,
        activity,
        code,
        approvals,
        vault,
        store,
        operator,
        connectors,
        warnings,
    })
}

fn has_static_secret(c: &ConnectorConfig) -> bool {
    match &c.kind {
        ConnectorKind::Mcp(m) => match &m.transport {
            McpTransport::Http { headers, .. } => !headers.is_empty(),
            McpTransport::Stdio { env, .. } => !env.is_empty(),
        },
        ConnectorKind::Api(a) => !a.headers.is_empty(),
    }
}

fn positive(v: &Spanned<u64>, what: &str, sink: &mut Sink<'_>) -> Option<u64> {
    if *v.get_ref() == 0 {
        sink.at(v.span(), format!("{what} must be greater than 0"));
        None
    } else {
        Some(*v.get_ref())
    }
}

fn opt_positive(v: &Option<Spanned<u64>>, what: &str, default: u64, sink: &mut Sink<'_>) -> u64 {
    v.as_ref()
        .and_then(|v| positive(v, what, sink))
        .unwrap_or(default)
}

fn lower_server(raw: RawServer, sink: &mut Sink<'_>) -> ServerConfig {
    let listen = match &raw.listen {
        Some(l) => match l.get_ref().parse::<SocketAddr>() {
            Ok(a) => a,
            Err(_) => {
                sink.at(
                    l.span(),
                    format!(
                        "server.listen \"{}\" is not an address like 127.0.0.1:8787",
                        l.get_ref()
                    ),
                );
                default_listen()
            }
        },
        None => default_listen(),
    };
    let public_url = match &raw.public_url {
        Some(u) => {
            let s = u.get_ref().trim_end_matches('/').to_owned();
            if let Some(problem) = http_url_problem(&s) {
                sink.at(u.span(), format!("server.public_url {problem}"));
            }
            s
        }
        None => format!("http://{}", display_host(listen)),
    };
    let mut allowed_hosts = raw.allowed_hosts.unwrap_or_default();
    if let Some(host) = host_of(&public_url)
        && !allowed_hosts.contains(&host)
    {
        allowed_hosts.push(host);
    }
    let allowed_origins: Vec<String> = raw
        .allowed_origins
        .unwrap_or_default()
        .into_iter()
        .filter_map(|o| {
            let v = o.get_ref().trim_end_matches('/').to_owned();
            if v == "null" || v.starts_with("http://") || v.starts_with("https://") {
                Some(v)
            } else {
                sink.at(
                    o.span(),
                    "an allowed origin must include its scheme (https://…)",
                );
                None
            }
        })
        .collect();
    ServerConfig {
        listen,
        data_dir: raw.data_dir.unwrap_or_else(|| d::DATA_DIR.to_owned()),
        public_url,
        allowed_hosts,
        allowed_origins,
        max_concurrent_requests: opt_positive(
            &raw.max_concurrent_requests,
            "server.max_concurrent_requests",
            d::MAX_CONCURRENT_REQUESTS,
            sink,
        ) as usize,
        max_queued_requests: raw.max_queued_requests.unwrap_or(d::MAX_QUEUED_REQUESTS) as usize,
        queue_timeout: Duration::from_millis(raw.queue_timeout_ms.unwrap_or(d::QUEUE_TIMEOUT_MS)),
        shutdown_grace: Duration::from_millis(
            raw.shutdown_grace_ms.unwrap_or(d::SHUTDOWN_GRACE_MS),
        ),
        max_request_bytes: opt_positive(
            &raw.max_request_bytes,
            "server.max_request_bytes",
            d::MAX_REQUEST_BYTES,
            sink,
        ) as usize,
        request_header_timeout: Duration::from_millis(opt_positive(
            &raw.request_header_timeout_ms,
            "server.request_header_timeout_ms",
            d::REQUEST_HEADER_TIMEOUT_MS,
            sink,
        )),
        request_body_timeout: Duration::from_millis(opt_positive(
            &raw.request_body_timeout_ms,
            "server.request_body_timeout_ms",
            d::REQUEST_BODY_TIMEOUT_MS,
            sink,
        )),
        max_batch_messages: opt_positive(
            &raw.max_batch_messages,
            "server.max_batch_messages",
            d::MAX_BATCH_MESSAGES,
            sink,
        ) as usize,
        max_batch_answer_bytes: opt_positive(
            &raw.max_batch_answer_bytes,
            "server.max_batch_answer_bytes",
            d::MAX_BATCH_ANSWER_BYTES,
            sink,
        ) as usize,
    }
}

impl Config {
    /// Listen on `addr` instead of `server.listen` (the `--listen` flag),
    /// with what follows from the address as if the file had said it: a
    /// public URL derived from the listen address follows it, and an open
    /// endpoint is refused off loopback.
    pub fn listen_on(&mut self, addr: SocketAddr) -> Result<(), String> {
        if self.auth.open && !addr.ip().is_loopback() {
            return Err(format!(
                "auth.open = true is refused on a non-loopback listen address ({addr}); set bearer tokens or listen on 127.0.0.1"
            ));
        }
        let server = &mut self.server;
        let derived = format!("http://{}", display_host(server.listen));
        if server.public_url == derived {
            server.public_url = format!("http://{}", display_host(addr));
            if let Some(host) = host_of(&server.public_url)
                && !server.allowed_hosts.contains(&host)
            {
                server.allowed_hosts.push(host);
            }
        }
        server.listen = addr;
        Ok(())
    }
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8787))
}

fn display_host(addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() || addr.ip().is_loopback() {
        format!("localhost:{}", addr.port())
    } else {
        addr.to_string()
    }
}

/// Why `text` is not an http(s) URL with a host the gateway can reach
/// (`http://`, a port over 65535, a space in the host…), or `None`. The
/// reason never quotes the value, which may carry a secret.
fn http_url_problem(text: &str) -> Option<String> {
    match url::Url::parse(text) {
        Err(e) => Some(format!("is not a valid URL ({e})")),
        Ok(u) if !matches!(u.scheme(), "http" | "https") => {
            Some("must start with http:// or https://".into())
        }
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Some("has no host".into()),
        Ok(_) => None,
    }
}

fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host.starts_with('[') {
        host.split_once(']').map(|(h, _)| format!("{h}]"))?
    } else {
        host.split(':').next()?.to_owned()
    };
    (!host.is_empty()).then_some(
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
    )
}

fn lower_log(raw: RawLog, sink: &mut Sink<'_>) -> LogConfig {
    let format = match raw
        .format
        .as_ref()
        .map(|f| (f.get_ref().as_str(), f.span()))
    {
        None | Some(("human", _)) => LogFormat::Human,
        Some(("json", _)) => LogFormat::Json,
        Some((other, span)) => {
            sink.at(
                span,
                format!("log.format \"{other}\" must be \"human\" or \"json\""),
            );
            LogFormat::Human
        }
    };
    LogConfig {
        level: raw.level.unwrap_or_else(|| "info".to_owned()),
        format,
    }
}

/// A week: a sign-in should not outlive the operator's memory of it.
const MAX_OPERATOR_SESSION_HOURS: u64 = 168;

fn lower_operator(
    raw: RawOperator,
    bearer_tokens: &[Secret],
    sink: &mut Sink<'_>,
) -> OperatorConfig {
    let secret = raw.secret.and_then(|s| {
        let v = s.get_ref();
        if v.trim().chars().count() < 16 {
            sink.at(
                s.span(),
                "operator.secret must be at least 16 characters (generate one with `openssl rand -hex 32`)",
            );
            None
        } else if v.chars().any(char::is_control) {
            sink.at(
                s.span(),
                "operator.secret must not contain control characters",
            );
            None
        } else if bearer_tokens.iter().any(|t| t.expose() == v) {
            sink.at(
                s.span(),
                "operator.secret must differ from every auth.bearer_tokens value (MCP access must not open the operator UI)",
            );
            None
        } else {
            Some(Secret::new(v.clone()))
        }
    });
    let hours = match &raw.session_hours {
        Some(h) if !(1..=MAX_OPERATOR_SESSION_HOURS).contains(h.get_ref()) => {
            sink.at(
                h.span(),
                format!(
                    "operator.session_hours must be between 1 and {MAX_OPERATOR_SESSION_HOURS}"
                ),
            );
            d::OPERATOR_SESSION_HOURS
        }
        Some(h) => *h.get_ref(),
        None => d::OPERATOR_SESSION_HOURS,
    };
    OperatorConfig {
        enabled: raw.enabled.unwrap_or(true),
        secret,
        session: Duration::from_secs(hours * 3600),
    }
}

fn lower_auth(raw: RawAuth, sink: &mut Sink<'_>) -> AuthConfig {
    let mut tokens = Vec::new();
    for t in raw.bearer_tokens.unwrap_or_default() {
        let v = t.get_ref();
        if v.len() < 16 {
            sink.at(
                t.span(),
                "a bearer token must be at least 16 characters (generate one with `openssl rand -hex 32`)",
            );
        } else if v.chars().any(|c| c.is_control() || c == ' ') {
            sink.at(
                t.span(),
                "a bearer token must not contain spaces or control characters",
            );
        } else {
            tokens.push(Secret::new(v.clone()));
        }
    }
    let open = raw.open.as_ref().is_some_and(|o| *o.get_ref());
    if open
        && raw.oauth.is_some()
        && let Some(o) = &raw.open
    {
        sink.at(
            o.span(),
            "auth.open = true accepts every caller, so [auth.oauth] would never be asked; remove one of them",
        );
    }
    AuthConfig {
        open,
        bearer_tokens: tokens,
        oauth: raw.oauth.and_then(|o| lower_oauth(o, sink)),
    }
}

fn is_loopback_host(host: String) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn lower_oauth(raw: Spanned<RawOAuth>, sink: &mut Sink<'_>) -> Option<OAuthConfig> {
    let table = raw.span();
    let raw = raw.into_inner();
    // Kept exactly as written: `iss` is compared with the issuer as is.
    let url = |v: &Spanned<String>, key: &str, sink: &mut Sink<'_>| -> Option<String> {
        let text = v.get_ref().clone();
        if let Some(problem) = http_url_problem(&text) {
            sink.at(v.span(), format!("auth.oauth.{key} {problem}"));
            return None;
        }
        let ok = text.starts_with("https://")
            || (text.starts_with("http://") && host_of(&text).is_some_and(is_loopback_host));
        if !ok {
            sink.at(
                v.span(),
                format!(
                    "auth.oauth.{key} must be an https:// URL (http:// only on a loopback host)"
                ),
            );
            return None;
        }
        Some(text)
    };
    let Some(issuer) = &raw.issuer else {
        sink.at(
            table,
            "[auth.oauth] needs `issuer`, the authorization server whose tokens /mcp accepts",
        );
        return None;
    };
    let issuer = url(issuer, "issuer", sink)?;
    let jwks_url = match &raw.jwks_url {
        Some(j) => Some(url(j, "jwks_url", sink)?),
        None => None,
    };
    let audience = match &raw.audience {
        Some(a) if a.get_ref().trim().is_empty() => {
            sink.at(a.span(), "auth.oauth.audience must not be empty");
            return None;
        }
        Some(a) => Some(a.get_ref().clone()),
        None => None,
    };
    let mut required_scopes = Vec::new();
    for s in raw.required_scopes.unwrap_or_default() {
        let v = s.get_ref();
        if v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control()) {
            sink.at(s.span(), "a scope must be one word with no spaces");
            return None;
        }
        required_scopes.push(v.clone());
    }
    Some(OAuthConfig {
        issuer,
        audience,
        jwks_url,
        required_scopes,
    })
}

fn lower_limits(raw: RawLimits, sink: &mut Sink<'_>) -> Limits {
    let call_timeout = opt_positive(
        &raw.call_timeout_ms,
        "limits.call_timeout_ms",
        d::CALL_TIMEOUT_MS,
        sink,
    );
    let max_call_timeout = opt_positive(
        &raw.max_call_timeout_ms,
        "limits.max_call_timeout_ms",
        d::MAX_CALL_TIMEOUT_MS,
        sink,
    );
    if call_timeout > max_call_timeout
        && let Some(s) = &raw.call_timeout_ms
    {
        sink.at(
            s.span(),
            "limits.call_timeout_ms exceeds limits.max_call_timeout_ms",
        );
    }
    Limits {
        call_timeout: Duration::from_millis(call_timeout),
        max_call_timeout: Duration::from_millis(max_call_timeout),
        result_cap_bytes: opt_positive(
            &raw.result_cap_bytes,
            "limits.result_cap_bytes",
            d::RESULT_CAP_BYTES,
            sink,
        ) as usize,
        stash_ttl: Duration::from_secs(opt_positive(
            &raw.stash_ttl_secs,
            "limits.stash_ttl_secs",
            d::STASH_TTL_SECS,
            sink,
        )),
        stash_caller_quota_bytes: opt_positive(
            &raw.stash_caller_quota_bytes,
            "limits.stash_caller_quota_bytes",
            d::STASH_CALLER_QUOTA_BYTES,
            sink,
        ),
        stash_total_quota_bytes: opt_positive(
            &raw.stash_total_quota_bytes,
            "limits.stash_total_quota_bytes",
            d::STASH_TOTAL_QUOTA_BYTES,
            sink,
        ),
        max_retry_after: Duration::from_millis(
            raw.max_retry_after_ms.unwrap_or(d::MAX_RETRY_AFTER_MS),
        ),
    }
}

fn lower_code(raw: RawCode, sink: &mut Sink<'_>) -> CodeConfig {
    let p = |v: &Option<Spanned<u64>>, what: &str, default: u64, sink: &mut Sink<'_>| {
        opt_positive(v, &format!("code.{what}"), default, sink)
    };
    let workers = raw
        .workers
        .as_ref()
        .map_or(d::CODE_WORKERS, |w| *w.get_ref());
    let max_concurrent = p(
        &raw.max_concurrent,
        "max_concurrent",
        d::CODE_MAX_CONCURRENT,
        sink,
    );
    if workers > max_concurrent
        && let Some(w) = &raw.workers
    {
        sink.at(
            w.span(),
            "code.workers (kept warm) exceeds code.max_concurrent",
        );
    }
    let batch = p(&raw.batch_size, "batch_size", d::CODE_BATCH_SIZE, sink);
    let heap_mib = p(&raw.heap_mib, "heap_mib", d::CODE_HEAP_MIB, sink);
    if heap_mib > 4096
        && let Some(h) = &raw.heap_mib
    {
        sink.at(h.span(), "code.heap_mib must be at most 4096");
    }
    CodeConfig {
        workers: workers as usize,
        max_concurrent: max_concurrent as usize,
        max_queued: raw.max_queued.unwrap_or(d::CODE_MAX_QUEUED) as usize,
        queue_timeout: Duration::from_millis(
            raw.queue_timeout_ms.unwrap_or(d::CODE_QUEUE_TIMEOUT_MS),
        ),
        deadline: Duration::from_millis(p(
            &raw.deadline_ms,
            "deadline_ms",
            d::CODE_DEADLINE_MS,
            sink,
        )),
        cpu: Duration::from_millis(p(&raw.cpu_ms, "cpu_ms", d::CODE_CPU_MS, sink)),
        heap_bytes: (heap_mib.min(4096) * 1024 * 1024) as usize,
        stack_bytes: (p(&raw.stack_kib, "stack_kib", d::CODE_STACK_KIB, sink) * 1024) as usize,
        host_calls: p(&raw.host_calls, "host_calls", d::CODE_HOST_CALLS, sink).min(u32::MAX as u64)
            as u32,
        batch_size: batch as usize,
        call_deadline: Duration::from_millis(p(
            &raw.call_deadline_ms,
            "call_deadline_ms",
            d::CODE_CALL_DEADLINE_MS,
            sink,
        )),
        host_payload_bytes: p(
            &raw.host_payload_bytes,
            "host_payload_bytes",
            d::CODE_HOST_PAYLOAD_BYTES,
            sink,
        ) as usize,
        result_chars: p(
            &raw.result_chars,
            "result_chars",
            d::CODE_RESULT_CHARS,
            sink,
        ) as usize,
        log_chars: p(&raw.log_chars, "log_chars", d::CODE_LOG_CHARS, sink) as usize,
        emit_bytes: p(&raw.emit_bytes, "emit_bytes", d::CODE_EMIT_BYTES, sink) as usize,
        emit_blocks: p(&raw.emit_blocks, "emit_blocks", d::CODE_EMIT_BLOCKS, sink) as usize,
        runs_per_worker: raw
            .runs_per_worker
            .unwrap_or(d::CODE_RUNS_PER_WORKER)
            .clamp(1, u32::MAX as u64) as u32,
    }
}

fn approval_policy(p: &Spanned<String>, sink: &mut Sink<'_>) -> Option<ApprovalPolicy> {
    match p.get_ref().as_str() {
        "host" => Some(ApprovalPolicy::Host),
        "ask" => Some(ApprovalPolicy::Ask),
        "never" => Some(ApprovalPolicy::Never),
        other => {
            sink.at(
                p.span(),
                format!("approval policy \"{other}\" must be \"host\", \"ask\" or \"never\""),
            );
            None
        }
    }
}

/// `approvers`: `["operator"]`, or `["operator", "client"]` in any order.
fn approvers(a: &Spanned<Vec<String>>, sink: &mut Sink<'_>) -> Option<Approvers> {
    let mut client = false;
    let mut operator = false;
    for who in a.get_ref() {
        match who.as_str() {
            "operator" => operator = true,
            "client" => client = true,
            other => {
                sink.at(
                    a.span(),
                    format!(
                        "approvers may name \"operator\" and \"client\", not \"{}\"",
                        crate::error::clamp_text(other, 64)
                    ),
                );
                return None;
            }
        }
    }
    if !operator {
        sink.at(
            a.span(),
            "approvers must include \"operator\": an operator can always answer from the UI or the CLI",
        );
        return None;
    }
    Some(if client {
        Approvers::OperatorOrClient
    } else {
        Approvers::Operator
    })
}

/// Keys that belong to one connector kind only; present on another kind they
/// are an error, not silently ignored.
pub(super) fn reject_foreign<T>(
    field: &Option<Spanned<T>>,
    key: &str,
    kind: &str,
    sink: &mut Sink<'_>,
) {
    if let Some(f) = field {
        sink.at(
            f.span(),
            format!("`{key}` does not apply to a connector of kind \"{kind}\""),
        );
    }
}

fn lower_connector(
    raw: RawConnector,
    limits: &Limits,
    span: std::ops::Range<usize>,
    files: &dyn super::SpecFiles,
    sink: &mut Sink<'_>,
) -> Option<ConnectorConfig> {
    let Some(id) = &raw.id else {
        sink.at(span, "a [[connector]] needs an `id`");
        return None;
    };
    // A bad id or kind is reported, and the rest of the connector is still
    // checked, so one `check` shows every problem in it.
    let id_ok = is_valid_connector_id(id.get_ref());
    if !id_ok {
        sink.at(
            id.span(),
            format!(
                "connector id \"{}\" must be 1–64 characters of A–Z, a–z, 0–9, _ or - (no dots)",
                crate::error::clamp_text(id.get_ref(), 80)
            ),
        );
    }
    let id_s = id.get_ref().clone();
    if raw.enabled == Some(false) {
        return None;
    }
    let kind_name = raw
        .kind
        .as_ref()
        .map(|k| k.get_ref().as_str())
        .unwrap_or("mcp");
    let kind = match kind_name {
        "mcp" => lower_mcp(&raw, &id_s, span.clone(), sink),
        "api" => lower_api(&raw, &id_s, span.clone(), sink),
        "openapi" => super::openapi::lower(&raw, &id_s, span.clone(), files, sink),
        other => {
            let s = raw.kind.as_ref().map_or(span.clone(), Spanned::span);
            sink.at(
                s,
                format!("connector kind \"{other}\" must be \"mcp\", \"api\" or \"openapi\""),
            );
            None
        }
    };
    let is_api = kind_name == "api";
    // An openapi connector's include/exclude were applied to the document's
    // operations (by tool name or operationId) as they were lowered.
    let (include_tools, exclude_tools) = if kind_name == "openapi" {
        (Vec::new(), Vec::new())
    } else {
        (
            raw.include_tools.clone().unwrap_or_default(),
            raw.exclude_tools.clone().unwrap_or_default(),
        )
    };
    let raw_overrides = raw.overrides.unwrap_or_default();
    // An api tool's classification is declared with it (`read_only`), never
    // inferred: a second place to change it would be a second truth.
    if is_api && let Some(first) = raw_overrides.values().next() {
        sink.at(
            first.span(),
            format!(
                "connector \"{id_s}\": `overrides` do not apply to an api connector; set read_only on the tool itself"
            ),
        );
    }
    let overrides: BTreeMap<String, AnnotationOverride> = raw_overrides
        .into_iter()
        .filter(|_| !is_api)
        .map(|(name, o)| {
            let o = o.into_inner();
            (
                name,
                AnnotationOverride {
                    read_only: o.read_only,
                    destructive: o.destructive,
                    idempotent: o.idempotent,
                    open_world: o.open_world,
                },
            )
        })
        .collect();
    let guide = raw.guide.map(|text| {
        let summary = match &raw.guide_summary {
            Some(s) => {
                if s.get_ref().chars().count() > 120 {
                    sink.at(s.span(), "guide_summary must be at most 120 characters");
                }
                s.get_ref().clone()
            }
            None => summarize(&text),
        };
        Guide {
            text,
            summary,
            required: raw.guide_required.unwrap_or(false),
        }
    });
    if guide.is_none() {
        reject_without_guide(&raw.guide_summary, sink);
    }
    let search_terms = raw
        .search_terms
        .as_ref()
        .map(|t| lower_search_terms(t, sink))
        .unwrap_or_default();
    let rate_limit = raw.rate_limit.as_ref().and_then(|r| {
        let v = r.get_ref();
        if v.calls == 0 || v.per_secs == 0 {
            sink.at(r.span(), "rate_limit needs calls > 0 and per_secs > 0");
            None
        } else {
            Some(RateLimit {
                calls: v.calls.min(u32::MAX as u64) as u32,
                per: Duration::from_secs(v.per_secs),
            })
        }
    });
    let credential = raw
        .credential
        .as_ref()
        .and_then(|c| lower_credential(c, sink));
    if let (Some(kind), Some(slot), Some(c)) = (&kind, &credential, &raw.credential) {
        check_credential_fits(kind, slot, c.span(), sink);
    }
    let oauth = raw
        .oauth
        .as_ref()
        .and_then(|o| lower_connector_oauth(o, kind.as_ref(), raw.credential.is_some(), sink));
    let timeout = Duration::from_millis(
        raw.timeout_ms
            .as_ref()
            .and_then(|t| positive(t, "timeout_ms", sink))
            .unwrap_or(limits.call_timeout.as_millis() as u64),
    );
    let result_cap_bytes = raw
        .result_cap_bytes
        .as_ref()
        .and_then(|t| positive(t, "result_cap_bytes", sink))
        .map_or(limits.result_cap_bytes, |v| v as usize);
    let max_concurrency = raw
        .max_concurrency
        .as_ref()
        .and_then(|m| positive(m, "max_concurrency", sink))
        .map(|m| m as usize);
    let approval = raw.approval.as_ref().and_then(|p| approval_policy(p, sink));
    let approvers = raw.approvers.as_ref().and_then(|a| approvers(a, sink));
    let kind = kind.filter(|_| id_ok)?;
    Some(ConnectorConfig {
        id: id_s,
        description: raw.description,
        kind,
        timeout,
        result_cap_bytes,
        catalog_ttl: Duration::from_secs(raw.catalog_ttl_secs.unwrap_or(d::CATALOG_TTL_SECS)),
        catalog_stale: Duration::from_secs(raw.catalog_stale_secs.unwrap_or(d::CATALOG_STALE_SECS)),
        include_tools,
        exclude_tools,
        overrides,
        guide,
        search_terms,
        max_concurrency,
        rate_limit,
        approval,
        approvers,
        credential,
        oauth,
    })
}

fn lower_connector_oauth(
    raw: &Spanned<RawConnectorOAuth>,
    kind: Option<&ConnectorKind>,
    has_credential: bool,
    sink: &mut Sink<'_>,
) -> Option<ConnectorOAuth> {
    let span = raw.span();
    let o = raw.get_ref();
    let mut ok = true;
    match kind {
        Some(ConnectorKind::Mcp(m)) => match &m.transport {
            McpTransport::Http { headers, url } => {
                let loopback_http =
                    url.starts_with("http://") && host_of(url).is_some_and(is_loopback_host);
                if !(url.starts_with("https://") || loopback_http) {
                    sink.at(
                        span.clone(),
                        "[connector.oauth] needs the connector's url to be https:// (http:// only on a loopback host): tokens must not travel in clear",
                    );
                    ok = false;
                }
                if headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                {
                    sink.at(
                        span.clone(),
                        "[connector.oauth] puts its token in the Authorization header; remove Authorization from `headers`",
                    );
                    ok = false;
                }
            }
            McpTransport::Stdio { .. } => {
                sink.at(
                    span.clone(),
                    "[connector.oauth] applies to mcp connectors over HTTP (`url`); a stdio child gets its secrets with env = { NAME = \"${VAR}\" }",
                );
                ok = false;
            }
        },
        Some(ConnectorKind::Api(_)) => {
            sink.at(
                span.clone(),
                "[connector.oauth] applies to mcp connectors over HTTP; an api connector takes a [connector.credential]",
            );
            ok = false;
        }
        None => ok = false,
    }
    if has_credential {
        sink.at(
            span.clone(),
            "a connector takes [connector.oauth] or [connector.credential], not both",
        );
        ok = false;
    }
    if let Some(s) = &o.client_secret
        && o.client_id.is_none()
    {
        sink.at(s.span(), "oauth.client_secret needs oauth.client_id");
        ok = false;
    }
    if o.client_id.as_deref().is_some_and(|c| c.trim().is_empty()) {
        sink.at(span.clone(), "oauth.client_id must not be empty");
        ok = false;
    }
    if let Some(a) = &o.authorization_server {
        let text = a.get_ref();
        let has_host = host_of(text).is_some_and(|h| !h.is_empty());
        let loopback_http =
            text.starts_with("http://") && host_of(text).is_some_and(is_loopback_host);
        if let Some(problem) = http_url_problem(text) {
            sink.at(a.span(), format!("oauth.authorization_server {problem}"));
            ok = false;
        } else if !has_host || !(text.starts_with("https://") || loopback_http) {
            sink.at(
                a.span(),
                "oauth.authorization_server must be an https:// URL (http:// only on a loopback host)",
            );
            ok = false;
        }
    }
    ok.then(|| ConnectorOAuth {
        scopes: o.scopes.clone().unwrap_or_default(),
        client_id: o.client_id.clone(),
        client_secret: o
            .client_secret
            .as_ref()
            .map(|s| Secret::new(s.get_ref().clone())),
        authorization_server: o.authorization_server.as_ref().map(|a| a.get_ref().clone()),
        allow_private_network: o.allow_private_network.unwrap_or(false),
    })
}

/// Where a credential slot can go, and that nothing else occupies its place:
/// the credential is applied last and never silently overrides (or is
/// overridden by) a configured header or argument.
fn check_credential_fits(
    kind: &ConnectorKind,
    slot: &CredentialSlot,
    span: std::ops::Range<usize>,
    sink: &mut Sink<'_>,
) {
    let shadow = |what: &str, sink: &mut Sink<'_>| {
        sink.at(
            span.clone(),
            format!("{what} would shadow the credential; the credential's place cannot be set by anything else"),
        );
    };
    match (kind, &slot.placement) {
        (ConnectorKind::Mcp(m), placement) => match &m.transport {
            McpTransport::Stdio { .. } => sink.at(
                span.clone(),
                "a [connector.credential] applies to api connectors and mcp connectors over HTTP; give a stdio child its secret with env = { NAME = \"${VAR}\" }",
            ),
            McpTransport::Http { headers, .. } => match placement {
                CredentialPlacement::Query(_) => sink.at(
                    span.clone(),
                    "an mcp connector's credential goes in a header (placement = \"header\")",
                ),
                CredentialPlacement::Header(h) => {
                    if headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(h)) {
                        shadow(&format!("header \"{h}\" in `headers`"), sink);
                    }
                }
            },
        },
        (ConnectorKind::Api(api), CredentialPlacement::Header(h)) => {
            if api.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(h)) {
                shadow(&format!("header \"{h}\" in `headers`"), sink);
            }
            for t in &api.tools {
                if t.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(h)) {
                    shadow(&format!("tool \"{}\": header \"{h}\"", t.name), sink);
                }
                if t.header_args.iter().any(|(_, k)| k.eq_ignore_ascii_case(h)) {
                    shadow(
                        &format!("tool \"{}\": a header argument sent as \"{h}\"", t.name),
                        sink,
                    );
                }
            }
        }
        (ConnectorKind::Api(api), CredentialPlacement::Query(q)) => {
            for t in &api.tools {
                let is_property = t
                    .input_schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|p| p.contains_key(q));
                if t.query.contains(q) || is_property {
                    shadow(
                        &format!("tool \"{}\": the argument \"{q}\"", t.name),
                        sink,
                    );
                }
            }
        }
    }
}

/// At most this many configured search terms per connector.
const MAX_SEARCH_TERMS: usize = 256;

/// `search_terms = { close = "update" }`: each side one content word, the
/// two different, the whole table of a modest size.
fn lower_search_terms(
    table: &Spanned<BTreeMap<String, Spanned<String>>>,
    sink: &mut Sink<'_>,
) -> Vec<(String, String)> {
    if table.get_ref().len() > MAX_SEARCH_TERMS {
        sink.at(
            table.span(),
            format!("search_terms may have at most {MAX_SEARCH_TERMS} entries"),
        );
        return Vec::new();
    }
    let mut out = Vec::new();
    for (query_word, name_word) in table.get_ref() {
        let terms = (
            crate::search::search_term(query_word),
            crate::search::search_term(name_word.get_ref()),
        );
        let problem = match &terms {
            (Some(q), Some(n)) if q == n => "maps a word to itself",
            (Some(_), Some(_)) => {
                out.extend(terms.0.zip(terms.1));
                continue;
            }
            _ => "needs one word on each side (not a function word like \"the\" or \"up\")",
        };
        sink.at(
            name_word.span(),
            format!(
                "search_terms: \"{}\" = \"{}\" {problem}",
                crate::error::clamp_text(query_word, 40),
                crate::error::clamp_text(name_word.get_ref(), 40)
            ),
        );
    }
    out
}

fn reject_without_guide(summary: &Option<Spanned<String>>, sink: &mut Sink<'_>) {
    if let Some(s) = summary {
        sink.at(s.span(), "guide_summary needs a guide");
    }
}

/// The first sentence of a guide, cut to 120 characters on a word boundary.
fn summarize(text: &str) -> String {
    let first = text
        .split_terminator(['\n'])
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("");
    let sentence = first.split_inclusive(". ").next().unwrap_or(first).trim();
    if sentence.chars().count() <= 120 {
        return sentence.to_owned();
    }
    let mut out = String::new();
    for word in sentence.split_whitespace() {
        if out.chars().count() + word.chars().count() + 2 > 119 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out.push('…');
    out
}

fn headers(
    raw: &Option<Spanned<BTreeMap<String, String>>>,
    sink: &mut Sink<'_>,
) -> Vec<(String, Secret)> {
    let Some(h) = raw else { return Vec::new() };
    let mut out = Vec::new();
    for (k, v) in h.get_ref() {
        if !is_header_name(k) {
            sink.at(h.span(), format!("\"{k}\" is not a valid HTTP header name"));
        } else if v.chars().any(|c| c.is_control()) {
            sink.at(
                h.span(),
                format!("the value of header \"{k}\" contains control characters"),
            );
        } else {
            out.push((k.clone(), Secret::new(v.clone())));
        }
    }
    out
}

fn is_header_name(k: &str) -> bool {
    !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn lower_mcp(
    raw: &RawConnector,
    id: &str,
    span: std::ops::Range<usize>,
    sink: &mut Sink<'_>,
) -> Option<ConnectorKind> {
    {
        let (f, key) = (&raw.base_url, "base_url");
        reject_foreign(f, key, "mcp", sink);
    }
    if let Some(t) = raw.tool.as_ref().and_then(|t| t.first()) {
        sink.at(
            t.span(),
            "`[[connector.tool]]` does not apply to a connector of kind \"mcp\"",
        );
    }
    reject_foreign(&raw.test, "test", "mcp", sink);
    reject_foreign(&raw.spec, "spec", "mcp", sink);
    reject_foreign(&raw.include_tags, "include_tags", "mcp", sink);
    reject_foreign(&raw.exclude_tags, "exclude_tags", "mcp", sink);
    reject_foreign(&raw.max_response_bytes, "max_response_bytes", "mcp", sink);
    reject_foreign(&raw.max_request_bytes, "max_request_bytes", "mcp", sink);
    if raw.allow_private_network.is_some() {
        sink.at(
            span.clone(),
            "`allow_private_network` does not apply to a connector of kind \"mcp\"",
        );
    }
    let transport = match (&raw.url, &raw.command) {
        (Some(url), None) => {
            let u = url.get_ref();
            if let Some(problem) = http_url_problem(u) {
                sink.at(url.span(), format!("connector \"{id}\": `url` {problem}"));
                return None;
            }
            for (present, key) in [
                (raw.args.is_some(), "args"),
                (raw.env.is_some(), "env"),
                (raw.cwd.is_some(), "cwd"),
            ] {
                if present {
                    sink.at(url.span(), format!("`{key}` applies only to stdio connectors (with `command`), not to `url`"));
                }
            }
            reject_foreign(&raw.start, "start", "mcp over HTTP", sink);
            reject_foreign(
                &raw.restart_backoff_ms,
                "restart_backoff_ms",
                "mcp over HTTP",
                sink,
            );
            McpTransport::Http {
                url: u.clone(),
                headers: headers(&raw.headers, sink),
            }
        }
        (None, Some(cmd)) => {
            if cmd.get_ref().trim().is_empty() {
                sink.at(cmd.span(), "command is empty");
                return None;
            }
            reject_foreign(&raw.headers, "headers", "mcp over stdio (use env)", sink);
            McpTransport::Stdio {
                command: cmd.get_ref().clone(),
                args: raw.args.clone().unwrap_or_default(),
                env: raw
                    .env
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, Secret::new(v)))
                    .collect(),
                cwd: raw.cwd.clone(),
            }
        }
        (Some(url), Some(_)) => {
            sink.at(
                url.span(),
                format!("connector \"{id}\" sets both `url` and `command`; choose one"),
            );
            return None;
        }
        (None, None) => {
            sink.at(span, format!("connector \"{id}\" of kind \"mcp\" needs `url` (streamable HTTP) or `command` (stdio)"));
            return None;
        }
    };
    let handshake = match raw
        .handshake
        .as_ref()
        .map(|h| (h.get_ref().as_str(), h.span()))
    {
        None | Some(("initialize", _)) => Handshake::Initialize,
        Some(("discover", _)) => Handshake::Discover,
        Some((other, s)) => {
            sink.at(
                s,
                format!("handshake \"{other}\" must be \"initialize\" or \"discover\""),
            );
            Handshake::Initialize
        }
    };
    let start = match raw.start.as_ref().map(|h| (h.get_ref().as_str(), h.span())) {
        None | Some(("boot", _)) => StartMode::Boot,
        Some(("lazy", _)) => StartMode::Lazy,
        Some((other, s)) => {
            sink.at(s, format!("start \"{other}\" must be \"boot\" or \"lazy\""));
            StartMode::Boot
        }
    };
    let (min, max) = match &raw.restart_backoff_ms {
        None => (d::RESTART_BACKOFF_MS[0], d::RESTART_BACKOFF_MS[1]),
        Some(b) => match b.get_ref().as_slice() {
            [min, max] if *min > 0 && min <= max => (*min, *max),
            _ => {
                sink.at(
                    b.span(),
                    "restart_backoff_ms must be [min, max] with 0 < min <= max",
                );
                (d::RESTART_BACKOFF_MS[0], d::RESTART_BACKOFF_MS[1])
            }
        },
    };
    Some(ConnectorKind::Mcp(McpConfig {
        transport,
        handshake,
        start,
        restart_backoff_min: Duration::from_millis(min),
        restart_backoff_max: Duration::from_millis(max),
    }))
}

fn lower_credential(raw: &Spanned<RawCredential>, sink: &mut Sink<'_>) -> Option<CredentialSlot> {
    let c = raw.get_ref();
    let in_query = c.placement.as_ref().is_some_and(|p| p.get_ref() == "query");
    let scheme = match c.scheme.as_ref().map(|s| (s.get_ref().as_str(), s.span())) {
        // A query parameter carries the value as is: `api_key=Bearer+…`
        // is never what an API wants.
        None if in_query => CredentialScheme::Raw,
        Some(("bearer", s)) if in_query => {
            sink.at(
                s,
                "a credential in the query goes as is: use scheme = \"raw\" (the default there), not \"bearer\"",
            );
            return None;
        }
        None | Some(("bearer", _)) => CredentialScheme::Bearer,
        Some(("raw", _)) => CredentialScheme::Raw,
        Some(("basic", _)) => CredentialScheme::Basic,
        Some((other, s)) => {
            sink.at(
                s,
                format!("credential scheme \"{other}\" must be \"bearer\", \"raw\" or \"basic\""),
            );
            return None;
        }
    };
    let placement = match c
        .placement
        .as_ref()
        .map(|s| (s.get_ref().as_str(), s.span()))
    {
        None | Some(("header", _)) => {
            CredentialPlacement::Header(c.header.clone().unwrap_or_else(|| "Authorization".into()))
        }
        Some(("query", s)) => match &c.query_param {
            Some(q) => CredentialPlacement::Query(q.clone()),
            None => {
                sink.at(s, "credential placement \"query\" needs `query_param`");
                return None;
            }
        },
        Some((other, s)) => {
            sink.at(
                s,
                format!("credential placement \"{other}\" must be \"header\" or \"query\""),
            );
            return None;
        }
    };
    if let CredentialPlacement::Header(h) = &placement
        && !is_header_name(h)
    {
        sink.at(
            raw.span(),
            format!("\"{h}\" is not a valid HTTP header name"),
        );
        return None;
    }
    if scheme == CredentialScheme::Basic && !matches!(placement, CredentialPlacement::Header(_)) {
        sink.at(raw.span(), "the basic scheme goes in a header");
        return None;
    }
    let fields = match (&c.fields, scheme) {
        (Some(f), _) if !f.is_empty() => f.clone(),
        (_, CredentialScheme::Basic) => vec!["user".into(), "secret".into()],
        _ => vec!["secret".into()],
    };
    let expected = if scheme == CredentialScheme::Basic {
        2
    } else {
        1
    };
    if fields.len() != expected {
        sink.at(
            raw.span(),
            format!(
                "credential scheme needs exactly {expected} field(s), got {}",
                fields.len()
            ),
        );
        return None;
    }
    Some(CredentialSlot {
        label: c.label.clone().unwrap_or_else(|| "API credential".into()),
        fields,
        placement,
        scheme,
        help: c.help.clone(),
    })
}

fn lower_api(
    raw: &RawConnector,
    id: &str,
    span: std::ops::Range<usize>,
    sink: &mut Sink<'_>,
) -> Option<ConnectorKind> {
    reject_non_http(raw, "api", span.clone(), sink);
    reject_foreign(&raw.spec, "spec", "api (use kind = \"openapi\")", sink);
    reject_foreign(&raw.include_tags, "include_tags", "api", sink);
    reject_foreign(&raw.exclude_tags, "exclude_tags", "api", sink);
    let Some(base) = &raw.base_url else {
        sink.at(
            span,
            format!("connector \"{id}\" of kind \"api\" needs `base_url`"),
        );
        return None;
    };
    let mut tools = Vec::new();
    let mut names = HashMap::new();
    for t in raw.tool.as_deref().unwrap_or_default() {
        if let Some(tool) = lower_api_tool(t, sink) {
            if names.insert(tool.name.clone(), ()).is_some() {
                sink.at(
                    t.span(),
                    format!("tool \"{}\" is declared twice", tool.name),
                );
                continue;
            }
            tools.push(tool);
        }
    }
    if tools.is_empty() && raw.tool.is_none() {
        sink.at(
            base.span(),
            format!("connector \"{id}\" declares no [[connector.tool]]"),
        );
    }
    finish_api(raw, id, base, tools, None, sink).map(ConnectorKind::Api)
}

/// Keys of stdio and streamable-HTTP mcp connectors, refused on the HTTP
/// API kinds (`api`, `openapi`).
pub(super) fn reject_non_http(
    raw: &RawConnector,
    kind: &str,
    span: std::ops::Range<usize>,
    sink: &mut Sink<'_>,
) {
    reject_foreign(&raw.url, "url", &format!("{kind} (use base_url)"), sink);
    reject_foreign(&raw.command, "command", kind, sink);
    reject_foreign(&raw.start, "start", kind, sink);
    reject_foreign(&raw.handshake, "handshake", kind, sink);
    reject_foreign(&raw.restart_backoff_ms, "restart_backoff_ms", kind, sink);
    if raw.args.is_some() || raw.env.is_some() || raw.cwd.is_some() {
        sink.at(
            span,
            "`args`, `env` and `cwd` apply only to stdio mcp connectors",
        );
    }
}

/// What `api` and `openapi` connectors share once their tools are known:
/// the base URL, `[connector.test]`, headers and size limits.
pub(super) fn finish_api(
    raw: &RawConnector,
    id: &str,
    base: &Spanned<String>,
    tools: Vec<ApiTool>,
    spec: Option<String>,
    sink: &mut Sink<'_>,
) -> Option<ApiConfig> {
    let base_url = base.get_ref().trim_end_matches('/').to_owned();
    // A bad base_url is reported and the rest is still checked.
    let problem = http_url_problem(&base_url).or_else(|| {
        let u = url::Url::parse(&base_url).ok()?;
        let extra = u.query().is_some()
            || u.fragment().is_some()
            || !u.username().is_empty()
            || u.password().is_some();
        extra.then(|| "must have no query, fragment or user info".to_owned())
    });
    let base_ok = problem.is_none();
    if let Some(problem) = problem {
        sink.at(
            base.span(),
            format!("connector \"{id}\": `base_url` {problem}"),
        );
    }
    let test = raw.test.as_ref().and_then(|t| {
        let v = t.get_ref();
        if !tools.iter().any(|tool| tool.name == v.tool) {
            sink.at(
                t.span(),
                format!("test.tool \"{}\" is not a tool of this connector", v.tool),
            );
            return None;
        }
        Some(ApiTest {
            tool: v.tool.clone(),
            args: v
                .args
                .as_ref()
                .map(toml_to_json)
                .unwrap_or(Value::Object(Default::default())),
        })
    });
    let headers = headers(&raw.headers, sink);
    let max_response_bytes = raw
        .max_response_bytes
        .as_ref()
        .and_then(|m| positive(m, "max_response_bytes", sink))
        .unwrap_or(d::API_MAX_RESPONSE_BYTES) as usize;
    let max_request_bytes = raw
        .max_request_bytes
        .as_ref()
        .and_then(|m| positive(m, "max_request_bytes", sink))
        .unwrap_or(d::API_MAX_REQUEST_BYTES) as usize;
    base_ok.then_some(ApiConfig {
        spec,
        base_url,
        allow_private_network: raw.allow_private_network.unwrap_or(false),
        headers,
        max_response_bytes,
        max_request_bytes,
        tools,
        test,
    })
}

fn lower_api_tool(t: &Spanned<RawApiTool>, sink: &mut Sink<'_>) -> Option<ApiTool> {
    let raw = t.get_ref();
    let mut ok = true;
    let mut need = |present: bool, key: &str, sink: &mut Sink<'_>| {
        if !present {
            sink.at(t.span(), format!("a [[connector.tool]] needs `{key}`"));
            ok = false;
        }
    };
    need(raw.name.is_some(), "name", sink);
    need(raw.description.is_some(), "description", sink);
    need(
        raw.read_only.is_some(),
        "read_only (classification is never inferred)",
        sink,
    );
    need(raw.path.is_some(), "path", sink);
    need(raw.input_schema.is_some(), "input_schema", sink);
    // Schemas are compiled here, not first at boot, so a broken one is
    // reported at its place and together with every other problem.
    let tool_name = raw.name.as_ref().map_or("?", |n| n.get_ref().as_str());
    for (key, schema) in [
        ("input_schema", &raw.input_schema),
        ("output_schema", &raw.output_schema),
    ] {
        let Some(schema) = schema else { continue };
        let json = toml_to_json(schema.get_ref());
        if !json.is_object() {
            continue;
        }
        if let Err(e) = jsonschema::validator_for(&json) {
            sink.at(
                schema.span(),
                format!(
                    "tool \"{}\": {key} does not compile: {}",
                    crate::error::clamp_text(tool_name, 128),
                    crate::error::clamp_text(&e.to_string(), 200)
                ),
            );
            ok = false;
        }
    }
    // The method and the path are checked even when a key is missing, so
    // one `check` shows every problem of the tool.
    let method = match raw
        .method
        .as_ref()
        .map(|m| (m.get_ref().to_ascii_uppercase(), m.span()))
    {
        None => Some(HttpMethod::Get),
        Some((m, s)) => match m.as_str() {
            "GET" => Some(HttpMethod::Get),
            "HEAD" => Some(HttpMethod::Head),
            "POST" => Some(HttpMethod::Post),
            "PUT" => Some(HttpMethod::Put),
            "PATCH" => Some(HttpMethod::Patch),
            "DELETE" => Some(HttpMethod::Delete),
            _ => {
                sink.at(
                    s,
                    format!("method \"{m}\" must be GET, HEAD, POST, PUT, PATCH or DELETE"),
                );
                None
            }
        },
    };
    let placeholders = raw.path.as_ref().and_then(|path| {
        if !path.get_ref().starts_with('/') {
            sink.at(path.span(), "path must start with /");
            return None;
        }
        let found = placeholders(path.get_ref());
        if found.is_none() {
            sink.at(path.span(), "path has an unbalanced {placeholder}");
        }
        found
    });
    if let Some(description) = &raw.description
        && description.get_ref().trim().is_empty()
    {
        sink.at(description.span(), "description must not be empty");
    }
    let (true, Some(method), Some(placeholders)) = (ok, method, placeholders) else {
        return None;
    };
    let name = raw.name.as_ref()?;
    let description = raw.description.as_ref()?;
    let path = raw.path.as_ref()?;
    let schema_t = raw.input_schema.as_ref()?;
    let input_schema = toml_to_json(schema_t.get_ref());
    if !input_schema.is_object() {
        sink.at(
            schema_t.span(),
            "input_schema must be a table (a JSON Schema object)",
        );
        return None;
    }
    let props: Vec<String> = input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    for p in &placeholders {
        if !props.contains(p) {
            sink.at(
                path.span(),
                format!("path placeholder {{{p}}} is not a property of input_schema"),
            );
        }
    }
    let query = raw.query.clone().unwrap_or_default();
    let body = raw.body.clone().unwrap_or_default();
    let header_args: Vec<(String, String)> = raw
        .header_args
        .clone()
        .unwrap_or_default()
        .into_iter()
        .collect();
    for a in query
        .iter()
        .chain(body.iter())
        .chain(header_args.iter().map(|(a, _)| a))
    {
        if !props.contains(a) {
            sink.at(
                t.span(),
                format!("argument \"{a}\" is not a property of input_schema"),
            );
        }
    }
    for (_, h) in &header_args {
        if !is_header_name(h) {
            sink.at(t.span(), format!("\"{h}\" is not a valid HTTP header name"));
        }
    }
    let project = raw.project.as_ref().and_then(|p| match p.get_ref() {
        toml::Value::String(s) if s.is_empty() || s.starts_with('/') => {
            Some(Projection::Pointer(s.clone()))
        }
        toml::Value::Array(items) => {
            let fields: Option<Vec<String>> = items
                .iter()
                .map(|i| i.as_str().map(str::to_owned))
                .collect();
            match fields {
                Some(f) if !f.is_empty() => Some(Projection::Fields(f)),
                _ => {
                    sink.at(
                        p.span(),
                        "project must be a JSON pointer (\"/data\") or a list of field paths",
                    );
                    None
                }
            }
        }
        _ => {
            sink.at(
                p.span(),
                "project must be a JSON pointer (\"/data\") or a list of field paths",
            );
            None
        }
    });
    let tool_headers = raw
        .headers
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, Secret::new(v)))
        .collect();
    Some(ApiTool {
        name: name.get_ref().clone(),
        title: raw.title.clone(),
        description: description.get_ref().clone(),
        read_only: *raw.read_only.as_ref()?.get_ref(),
        idempotent: raw.idempotent,
        method,
        path: path.get_ref().clone(),
        query,
        body,
        body_arg: None,
        header_args,
        headers: tool_headers,
        input_schema,
        output_schema: raw
            .output_schema
            .as_ref()
            .map(|s| toml_to_json(s.get_ref())),
        project,
    })
}

/// `{name}` placeholders of a path template, or `None` when braces do not
/// balance.
pub(crate) fn placeholders(path: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = path;
    while let Some(i) = rest.find(['{', '}']) {
        if rest.as_bytes()[i] == b'}' {
            return None;
        }
        let after = &rest[i + 1..];
        let end = after.find('}')?;
        let name = &after[..end];
        if name.is_empty() || name.contains('{') {
            return None;
        }
        out.push(name.to_owned());
        rest = &after[end + 1..];
    }
    Some(out)
}

pub(crate) fn toml_to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
        }
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guide_summary_is_first_sentence_capped() {
        assert_eq!(
            summarize("Use search first. Then call."),
            "Use search first."
        );
        let long = "word ".repeat(60);
        let s = summarize(&long);
        assert!(s.chars().count() <= 120, "{s}");
        assert!(s.ends_with('…'));
    }

    #[test]
    fn path_placeholders() {
        assert_eq!(
            placeholders("/a/{x}/b/{y}"),
            Some(vec!["x".into(), "y".into()])
        );
        assert_eq!(placeholders("/a/{x"), None);
        assert_eq!(placeholders("/a/x}"), None);
        assert_eq!(placeholders("/a/{}"), None);
    }

    #[test]
    fn hosts_from_urls() {
        assert_eq!(
            host_of("https://gw.example.com:8443/x").as_deref(),
            Some("gw.example.com")
        );
        assert_eq!(host_of("http://[::1]:8787").as_deref(), Some("::1"));
        assert_eq!(host_of("http://localhost").as_deref(), Some("localhost"));
    }

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("an address")
    }

    fn config(text: &str) -> Config {
        let env = |_: &str| Some("a-bearer-token-of-32-characters!".to_owned());
        crate::config::parse_config(text, "c.toml", &env).expect("valid config")
    }

    #[test]
    fn listen_flag_moves_a_derived_public_url_and_keeps_an_explicit_one() {
        let mut c = config("[auth]\nbearer_tokens = [\"${T}\"]\n");
        assert_eq!(c.server.public_url, "http://localhost:8787");
        c.listen_on(addr("10.0.0.5:9000")).expect("tokens set");
        assert_eq!(c.server.listen, addr("10.0.0.5:9000"));
        assert_eq!(c.server.public_url, "http://10.0.0.5:9000");
        assert!(c.server.allowed_hosts.contains(&"10.0.0.5".to_owned()));

        let mut c = config(
            "[server]\npublic_url = \"https://gw.example.com\"\n[auth]\nbearer_tokens = [\"${T}\"]\n",
        );
        c.listen_on(addr("0.0.0.0:9000")).expect("tokens set");
        assert_eq!(c.server.public_url, "https://gw.example.com");
    }

    #[test]
    fn listen_flag_cannot_open_the_endpoint_off_loopback() {
        let mut c = config("[auth]\nopen = true\n");
        let err = c
            .listen_on(addr("0.0.0.0:8787"))
            .expect_err("open off loopback");
        assert!(err.contains("refused on a non-loopback listen"), "{err}");
        assert_eq!(c.server.listen, addr("127.0.0.1:8787"));
        c.listen_on(addr("127.0.0.1:9000")).expect("loopback");
        assert_eq!(c.server.public_url, "http://localhost:9000");
    }
}
