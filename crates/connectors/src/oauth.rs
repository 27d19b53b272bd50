//! Downstream OAuth 2.1 as the MCP authorization spec asks of a client, the
//! protocol half: find the authorization server (RFC 9728 protected-resource
//! metadata, then RFC 8414 / OpenID metadata, with the issuer checked),
//! register (RFC 7591), build the PKCE authorization URL with the RFC 8707
//! `resource`, and exchange a code or a refresh token for tokens.
//!
//! Keeping state (the vault rows, the pending flow, the callback) is the
//! gateway's; nothing here stores anything.
//!
//! Architecture invariants: every URL fetched or handed out is https, or
//! http on a loopback host; nothing is fetched from an address closer to
//! the gateway than the connector's configuration allows (`ReachLimits`: a
//! public connector's metadata cannot aim it at a private network or this
//! host, and no connector's at link-local addresses such as a cloud
//! metadata service), checked on IP literals before a request and on the
//! resolved addresses a name connects to, with no proxy in between; no
//! redirect is followed; no error built here
//! contains a token, a code, a verifier or a client secret (the server's
//! own `error` / `error_description` are quoted, clamped).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use connecta_core::error::clamp_text;
use connecta_core::secret::Secret;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Url;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::fetch::{AddressRefused, GuardedResolver, within};
pub use crate::api::fetch::{Reach, reach};

/// Metadata and token answers larger than this are refused.
const MAX_ANSWER_BYTES: usize = 256 * 1024;
const TIMEOUT: Duration = Duration::from_secs(10);
/// Error text quoted from a server is cut here.
const MAX_QUOTED: usize = 300;

/// `application/x-www-form-urlencoded` and query values: all but unreserved.
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    /// The server's metadata is missing, unreadable or not acceptable.
    #[error("{0}")]
    Discovery(String),
    #[error("dynamic client registration failed: {0}")]
    Registration(String),
    /// The token endpoint refused (`error` as the server said it).
    #[error("the token endpoint refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Token {
        error: String,
        description: Option<String>,
    },
    #[error("{0}")]
    Transport(String),
}

impl OAuthError {
    /// Worth trying again later (the server was unreachable or failed), as
    /// opposed to a server the gateway refuses to use.
    pub fn is_transient(&self) -> bool {
        match self {
            OAuthError::Transport(_) => true,
            OAuthError::Token { error, .. } => {
                error == "temporarily_unavailable"
                    || error == "server_error"
                    || error.starts_with("HTTP 5")
            }
            _ => false,
        }
    }

    /// The refresh token is no good any more: a new consent is needed.
    pub fn is_invalid_grant(&self) -> bool {
        matches!(self, OAuthError::Token { error, .. } if error == "invalid_grant")
    }

    /// The server no longer knows the gateway's client (it forgot its
    /// registrations, or the client was removed): register again.
    pub fn is_unknown_client(&self) -> bool {
        matches!(self, OAuthError::Token { error, .. }
            if error == "invalid_client" || error == "unauthorized_client")
    }
}

/// What the gateway needs to know about one downstream's authorization
/// server, from discovery (kept with the registration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub scopes_supported: Vec<String>,
    /// RFC 9207: the server puts `iss` on its redirects; a callback
    /// without it is refused.
    #[serde(default)]
    pub iss_in_response: bool,
    #[serde(default)]
    pub auth_methods: Vec<String>,
    /// The resource the tokens are for (RFC 8707): the MCP endpoint.
    pub resource: String,
}

/// A registered client.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientCredentials {
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
    /// How the secret is sent (`client_secret_basic` or
    /// `client_secret_post`); `None` picks from the server's metadata.
    #[serde(default)]
    pub auth_method: Option<String>,
}

impl ClientCredentials {
    /// A client registered by hand (no method known: the server's list, or
    /// RFC 8414's default, decides).
    pub fn configured(client_id: &str, client_secret: Option<&str>) -> ClientCredentials {
        ClientCredentials {
            client_id: client_id.to_owned(),
            client_secret: client_secret.map(str::to_owned),
            auth_method: None,
        }
    }

    /// Whether the secret goes in an `Authorization: Basic` header: when the
    /// registration said so, or the server lists basic (or lists nothing,
    /// RFC 8414's default) and not post only.
    fn uses_basic(&self, info: &ServerInfo) -> bool {
        match self.auth_method.as_deref() {
            Some(m) => m == "client_secret_basic",
            None => {
                let listed = |m: &str| info.auth_methods.iter().any(|x| x == m);
                info.auth_methods.is_empty()
                    || listed("client_secret_basic")
                    || !listed("client_secret_post")
            }
        }
    }
}

/// Tokens from the token endpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tokens {
    pub access_token: String,
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// When the access token stops working, if the server said.
    #[serde(default)]
    pub expires_at_ms: Option<i64>,
    #[serde(default)]
    pub scope: Option<String>,
    /// When these tokens were obtained (to refresh a short-lived token
    /// halfway through its life).
    #[serde(default)]
    pub obtained_at_ms: i64,
}

/// How close the gateway's OAuth client may go for one connector, from its
/// config alone: discovery follows URLs the downstream publishes, and may
/// lead no closer than the connector the operator configured (a public MCP
/// server cannot aim the gateway at its private network or at its own
/// host). Only what the operator wrote counts: an IP literal (or
/// `localhost`) in the connector's `url` or `authorization_server` sets how
/// close IP literals may lead, and `allow_private_network` lets names lead
/// to private and loopback addresses. What a name in the config resolves to
/// never widens anything: the downstream may control that name's DNS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReachLimits {
    /// How close an IP literal (or `localhost`) may lead.
    pub literals: Reach,
    /// How close a host name may lead, on the addresses it resolves to.
    pub names: Reach,
}

impl ReachLimits {
    /// The limits for a connector at `resource` (its MCP endpoint URL),
    /// whose operator may have named its `authorization_server` and may
    /// have allowed private networks.
    pub fn for_connector(
        resource: &str,
        authorization_server: Option<&str>,
        allow_private_network: bool,
    ) -> Result<ReachLimits, OAuthError> {
        if allow_private_network {
            return Ok(ReachLimits {
                literals: Reach::Loopback,
                names: Reach::Loopback,
            });
        }
        let mut literals = Reach::Public;
        for configured in std::iter::once(resource).chain(authorization_server) {
            let url = Url::parse(configured).map_err(|e| {
                OAuthError::Discovery(format!("{} is not a URL: {e}", clamp_text(configured, 200)))
            })?;
            let r = literal_reach(&url);
            if r != Reach::Never {
                literals = literals.max(r);
            }
        }
        Ok(ReachLimits {
            literals,
            names: Reach::Public,
        })
    }
}

/// The HTTP client of one connector's OAuth: no redirects, no proxy from
/// the environment (a proxy would resolve names out of the guard's sight),
/// a timeout, and nothing closer than [`ReachLimits`] allows: a URL with an
/// IP literal is checked before it is fetched, a host name on the
/// addresses it resolves to, which are the ones connected to (the `api`
/// connectors' [`GuardedResolver`]).
#[derive(Debug, Clone)]
pub struct OAuthHttp {
    client: reqwest::Client,
    limits: ReachLimits,
}

impl OAuthHttp {
    /// A client for the connector at `resource`; see
    /// [`ReachLimits::for_connector`].
    pub fn for_connector(
        resource: &str,
        authorization_server: Option<&str>,
        allow_private_network: bool,
    ) -> Result<OAuthHttp, OAuthError> {
        OAuthHttp::with_limits(ReachLimits::for_connector(
            resource,
            authorization_server,
            allow_private_network,
        )?)
    }

    fn with_limits(limits: ReachLimits) -> Result<OAuthHttp, OAuthError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(TIMEOUT)
            .dns_resolver(Arc::new(GuardedResolver::with_limits(
                limits.names,
                limits.literals,
            )))
            .build()
            .map_err(|e| OAuthError::Transport(format!("no HTTP client: {e}")))?;
        Ok(OAuthHttp { client, limits })
    }

    /// How close this client may go.
    pub fn limits(&self) -> ReachLimits {
        self.limits
    }

    fn get(&self, url: &str) -> Result<reqwest::RequestBuilder, OAuthError> {
        self.request(reqwest::Method::GET, url)
    }

    fn post(&self, url: &str) -> Result<reqwest::RequestBuilder, OAuthError> {
        self.request(reqwest::Method::POST, url)
    }

    fn request(
        &self,
        method: reqwest::Method,
        url: &str,
    ) -> Result<reqwest::RequestBuilder, OAuthError> {
        let url = Url::parse(url).map_err(|e| {
            OAuthError::Discovery(format!("{} is not a URL: {e}", clamp_text(url, 200)))
        })?;
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            _ => None,
        };
        if let Some(ip) = literal
            && !within(reach(ip), self.limits.literals)
        {
            return Err(refused_address(url.host_str().unwrap_or_default()));
        }
        Ok(self.client.request(method, url))
    }
}

fn refused_address(host: &str) -> OAuthError {
    OAuthError::Discovery(format!(
        "{} is closer to the gateway than the connector itself (a private, loopback or link-local address); refusing it",
        clamp_text(host, 200)
    ))
}

/// A request that could not be sent: a refused address is the server's
/// fault (not worth retrying), anything else a transport failure. The URL
/// is left out of reqwest's text (it is named once, by `what`).
fn send_failed(what: &str, e: reqwest::Error) -> OAuthError {
    let e = e.without_url();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(cur) = source {
        if let Some(refused) = cur.downcast_ref::<AddressRefused>() {
            return OAuthError::Discovery(format!(
                "{what}: {refused}, closer to the gateway than the connector itself; refusing it"
            ));
        }
        source = cur.source();
    }
    OAuthError::Transport(format!("{what} could not be reached: {e}"))
}

/// The reach of `url`'s host as written: its IP literal, `localhost`, or
/// public for a name (never looked up).
fn literal_reach(url: &Url) -> Reach {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => reach(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => reach(IpAddr::V6(ip)),
        Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => Reach::Loopback,
        Some(url::Host::Domain(_)) | None => Reach::Public,
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// https anywhere, http only on a loopback host.
pub fn acceptable_url(text: &str) -> Result<Url, String> {
    let url =
        Url::parse(text).map_err(|e| format!("{} is not a URL: {e}", clamp_text(text, 200)))?;
    let loopback = is_loopback(&url);
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        _ => Err(format!(
            "{} must be https (http only on a loopback host)",
            clamp_text(text, 200)
        )),
    }
}

/// `issuer` values compare equal when they differ only by a trailing `/`.
fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

async fn get_json(http: &OAuthHttp, url: &Url) -> Result<Option<Value>, OAuthError> {
    let res = http
        .get(url.as_str())?
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| send_failed(url.as_str(), e))?;
    if res.status().as_u16() == 404 {
        return Ok(None);
    }
    if !res.status().is_success() {
        return Err(OAuthError::Discovery(format!(
            "{url} answered HTTP {}",
            res.status().as_u16()
        )));
    }
    let bytes = read_capped(res).await?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| OAuthError::Discovery(format!("{url} is not JSON: {e}")))
}

async fn read_capped(mut res: reqwest::Response) -> Result<Vec<u8>, OAuthError> {
    let mut out = Vec::new();
    while let Some(chunk) = res
        .chunk()
        .await
        .map_err(|e| OAuthError::Transport(format!("the answer broke off: {e}")))?
    {
        if out.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(OAuthError::Transport(format!(
                "the answer is larger than {MAX_ANSWER_BYTES} bytes"
            )));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// The metadata URL the MCP endpoint names in its 401 challenge
/// (`WWW-Authenticate: Bearer resource_metadata="…"`), if it names one on
/// its own origin.
async fn advertised_metadata(http: &OAuthHttp, resource: &Url) -> Option<Url> {
    let res = http
        .post(resource.as_str())
        .ok()?
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#)
        .send()
        .await
        .ok()?;
    if res.status().as_u16() != 401 {
        return None;
    }
    let challenge = res
        .headers()
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| {
            let at = v.find("resource_metadata=\"")? + "resource_metadata=\"".len();
            v[at..].split('"').next().map(str::to_owned)
        })?;
    let url = acceptable_url(&challenge).ok()?;
    (url.origin() == resource.origin()).then_some(url)
}

/// The first of `urls` that answers (a 404 is "not here", anything else
/// that fails is an error).
async fn first_json(http: &OAuthHttp, urls: Vec<Url>) -> Result<Option<Value>, OAuthError> {
    for url in urls {
        if let Some(v) = get_json(http, &url).await? {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// The strings of the array at `key` (none when it is not an array).
fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `{origin}/.well-known/{name}{path}` (RFC 8414 / 9728 path insertion),
/// then, for a URL with a path, `{origin}/.well-known/{name}`.
fn well_known(base: &Url, name: &str) -> Vec<Url> {
    let path = base.path().trim_end_matches('/');
    let mut out = Vec::new();
    let mut at = base.clone();
    at.set_query(None);
    at.set_fragment(None);
    at.set_path(&format!("/.well-known/{name}{path}"));
    out.push(at.clone());
    if !path.is_empty() {
        at.set_path(&format!("/.well-known/{name}"));
        out.push(at);
    }
    out
}

/// Find the authorization server of the MCP endpoint `resource`: its
/// protected-resource metadata names the issuer (or `issuer` is given by the
/// operator), whose metadata must name itself the same issuer and support
/// PKCE with S256.
pub async fn discover(
    http: &OAuthHttp,
    resource: &str,
    issuer: Option<&str>,
) -> Result<ServerInfo, OAuthError> {
    let resource_url = acceptable_url(resource).map_err(OAuthError::Discovery)?;
    // The resource's own scopes are the ones to ask for (MCP authorization);
    // the server's list is the fallback.
    let mut resource_scopes = Vec::new();
    let issuer = match issuer {
        Some(i) => i.to_owned(),
        None => {
            let mut urls = Vec::new();
            if let Some(advertised) = advertised_metadata(http, &resource_url).await {
                urls.push(advertised);
            }
            urls.extend(well_known(&resource_url, "oauth-protected-resource"));
            let found = first_json(http, urls).await?;
            let prm = found.ok_or_else(|| {
                OAuthError::Discovery(format!(
                    "{resource} publishes no protected-resource metadata (RFC 9728); set [connector.oauth] authorization_server"
                ))
            })?;
            // RFC 9728 §3.3: metadata about another resource is not this
            // server's, whoever serves it.
            let named = prm.get("resource").and_then(Value::as_str).unwrap_or("");
            if named.trim_end_matches('/') != resource.trim_end_matches('/') {
                return Err(OAuthError::Discovery(format!(
                    "the protected-resource metadata is for {} rather than {resource}; refusing it",
                    clamp_text(named, 200)
                )));
            }
            resource_scopes = strings(&prm, "scopes_supported");
            prm.get("authorization_servers")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| {
                    OAuthError::Discovery(format!(
                        "the protected-resource metadata of {resource} names no authorization server"
                    ))
                })?
        }
    };
    let issuer_url = acceptable_url(&issuer).map_err(OAuthError::Discovery)?;
    let mut candidates = well_known(&issuer_url, "oauth-authorization-server");
    candidates.extend(well_known(&issuer_url, "openid-configuration"));
    let meta = first_json(http, candidates).await?.ok_or_else(|| {
        OAuthError::Discovery(format!(
            "the authorization server {issuer} publishes no metadata (RFC 8414 or OpenID)"
        ))
    })?;
    let text = |k: &str| meta.get(k).and_then(Value::as_str).map(str::to_owned);
    let list = |k: &str| strings(&meta, k);
    let claimed = text("issuer").unwrap_or_default();
    if !same_issuer(&claimed, &issuer) {
        return Err(OAuthError::Discovery(format!(
            "the authorization server's metadata names issuer {} instead of {issuer}; refusing it",
            clamp_text(&claimed, 200)
        )));
    }
    if !list("code_challenge_methods_supported")
        .iter()
        .any(|m| m == "S256")
    {
        return Err(OAuthError::Discovery(format!(
            "the authorization server {issuer} does not say it supports PKCE with S256"
        )));
    }
    let endpoint = |k: &str| -> Result<String, OAuthError> {
        let v = text(k).ok_or_else(|| {
            OAuthError::Discovery(format!("the authorization server's metadata has no {k}"))
        })?;
        let url = acceptable_url(&v).map_err(OAuthError::Discovery)?;
        // A loopback endpoint is the issuer's own or nothing: metadata from
        // elsewhere must not aim the gateway at services on its own host.
        if is_loopback(&url) && url.origin() != issuer_url.origin() {
            return Err(OAuthError::Discovery(format!(
                "the authorization server's {k} is a loopback address outside its own origin; refusing it"
            )));
        }
        Ok(v)
    };
    let registration_endpoint = match text("registration_endpoint") {
        Some(_) => Some(endpoint("registration_endpoint")?),
        None => None,
    };
    Ok(ServerInfo {
        issuer: claimed,
        authorization_endpoint: endpoint("authorization_endpoint")?,
        token_endpoint: endpoint("token_endpoint")?,
        registration_endpoint,
        scopes_supported: if resource_scopes.is_empty() {
            list("scopes_supported")
        } else {
            resource_scopes
        },
        iss_in_response: meta
            .get("authorization_response_iss_parameter_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        auth_methods: list("token_endpoint_auth_methods_supported"),
        resource: resource.to_owned(),
    })
}

/// Register the gateway as a client with `redirect_uri` (RFC 7591): a
/// public client when the server allows it, else one with a secret.
pub async fn register(
    http: &OAuthHttp,
    info: &ServerInfo,
    redirect_uri: &str,
    scopes: &[String],
) -> Result<ClientCredentials, OAuthError> {
    let Some(endpoint) = &info.registration_endpoint else {
        return Err(OAuthError::Registration(format!(
            "the authorization server {} offers no dynamic client registration; register a client there and set [connector.oauth] client_id",
            info.issuer
        )));
    };
    let method = if info.auth_methods.iter().any(|m| m == "none") {
        "none"
    } else {
        "client_secret_post"
    };
    let mut body = serde_json::json!({
        "client_name": "connecta",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    });
    if !scopes.is_empty() {
        body["scope"] = Value::String(scopes.join(" "));
    }
    let res = http
        .post(endpoint)?
        .json(&body)
        .send()
        .await
        .map_err(|e| send_failed(endpoint, e))?;
    let status = res.status().as_u16();
    let bytes = read_capped(res).await?;
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        return Err(OAuthError::Registration(format!(
            "HTTP {status}: {}",
            quoted_error(&v)
        )));
    }
    let client_id = v
        .get("client_id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| OAuthError::Registration("the answer has no client_id".into()))?;
    Ok(ClientCredentials {
        client_id: client_id.to_owned(),
        client_secret: v
            .get("client_secret")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        auth_method: v
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

fn quoted_error(v: &Value) -> String {
    let e = v
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("no error code");
    match v.get("error_description").and_then(Value::as_str) {
        Some(d) => clamp_text(&format!("{e} ({d})"), MAX_QUOTED).into_owned(),
        None => clamp_text(e, MAX_QUOTED).into_owned(),
    }
}

/// A PKCE pair (RFC 7636): the verifier (256 random bits) and its S256
/// challenge.
pub fn pkce() -> (Secret, String) {
    let verifier = random_token();
    let challenge = URL_SAFE_NO_PAD.encode(sha256(verifier.as_bytes()));
    (Secret::new(verifier), challenge)
}

/// 256 random bits, base64url: states and verifiers.
pub fn random_token() -> String {
    use rand::RngExt;
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

/// The URL a person opens to consent.
pub fn authorization_url(
    info: &ServerInfo,
    client: &ClientCredentials,
    redirect_uri: &str,
    scopes: &[String],
    state: &str,
    challenge: &str,
) -> String {
    let mut pairs = vec![
        ("response_type", "code".to_owned()),
        ("client_id", client.client_id.clone()),
        ("redirect_uri", redirect_uri.to_owned()),
        ("state", state.to_owned()),
        ("code_challenge", challenge.to_owned()),
        ("code_challenge_method", "S256".to_owned()),
        ("resource", info.resource.clone()),
    ];
    if !scopes.is_empty() {
        pairs.push(("scope", scopes.join(" ")));
    }
    let sep = if info.authorization_endpoint.contains('?') {
        '&'
    } else {
        '?'
    };
    format!("{}{sep}{}", info.authorization_endpoint, form(&pairs))
}

fn form(pairs: &[(&str, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, FORM)))
        .collect::<Vec<_>>()
        .join("&")
}

async fn token_request(
    http: &OAuthHttp,
    info: &ServerInfo,
    client: &ClientCredentials,
    mut pairs: Vec<(&str, String)>,
    now_ms: i64,
) -> Result<Tokens, OAuthError> {
    let mut req = http
        .post(&info.token_endpoint)?
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json");
    match &client.client_secret {
        // RFC 6749 §2.3.1: each part form-encoded, then base64.
        Some(secret) if client.uses_basic(info) => {
            let pair = format!(
                "{}:{}",
                utf8_percent_encode(&client.client_id, FORM),
                utf8_percent_encode(secret, FORM)
            );
            let mut value = reqwest::header::HeaderValue::from_str(&format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            ))
            .map_err(|_| OAuthError::Transport("the client credentials cannot be sent".into()))?;
            value.set_sensitive(true);
            req = req.header("authorization", value);
            // Not a second authentication: servers (the MCP SDK's among
            // them) look the client up by it before checking the header.
            pairs.push(("client_id", client.client_id.clone()));
        }
        Some(secret) => {
            pairs.push(("client_id", client.client_id.clone()));
            pairs.push(("client_secret", secret.clone()));
        }
        None => pairs.push(("client_id", client.client_id.clone())),
    }
    pairs.push(("resource", info.resource.clone()));
    let res = req
        .body(form(&pairs))
        .send()
        .await
        .map_err(|e| send_failed(&info.token_endpoint, e))?;
    let status = res.status().as_u16();
    let bytes = read_capped(res).await?;
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        return Err(OAuthError::Token {
            error: v.get("error").and_then(Value::as_str).map_or_else(
                || format!("HTTP {status}"),
                |e| clamp_text(e, 64).into_owned(),
            ),
            description: v
                .get("error_description")
                .and_then(Value::as_str)
                .map(|d| clamp_text(d, MAX_QUOTED).into_owned()),
        });
    }
    let access_token = v
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| OAuthError::Token {
            error: "invalid_response".into(),
            description: Some("the answer has no access_token".into()),
        })?;
    let kind = v.get("token_type").and_then(Value::as_str).unwrap_or("");
    if !kind.eq_ignore_ascii_case("bearer") {
        return Err(OAuthError::Token {
            error: "invalid_response".into(),
            description: Some(format!("token_type {} is not Bearer", clamp_text(kind, 32))),
        });
    }
    Ok(Tokens {
        access_token: access_token.to_owned(),
        refresh_token: v
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_owned),
        expires_at_ms: v
            .get("expires_in")
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite())
            .map(|s| now_ms + (s.max(0.0) * 1000.0) as i64),
        scope: v.get("scope").and_then(Value::as_str).map(str::to_owned),
        obtained_at_ms: now_ms,
    })
}

/// Exchange an authorization code (with the PKCE verifier).
pub async fn exchange_code(
    http: &OAuthHttp,
    info: &ServerInfo,
    client: &ClientCredentials,
    code: &str,
    verifier: &Secret,
    redirect_uri: &str,
    now_ms: i64,
) -> Result<Tokens, OAuthError> {
    token_request(
        http,
        info,
        client,
        vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.to_owned()),
            ("redirect_uri", redirect_uri.to_owned()),
            ("code_verifier", verifier.expose().to_owned()),
        ],
        now_ms,
    )
    .await
}

/// Exchange a refresh token. A server that does not rotate it gets the old
/// one kept.
pub async fn refresh(
    http: &OAuthHttp,
    info: &ServerInfo,
    client: &ClientCredentials,
    refresh_token: &str,
    now_ms: i64,
) -> Result<Tokens, OAuthError> {
    let mut t = token_request(
        http,
        info,
        client,
        vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.to_owned()),
        ],
        now_ms,
    )
    .await?;
    if t.refresh_token.is_none() {
        t.refresh_token = Some(refresh_token.to_owned());
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_placed_by_how_close_they_lead() {
        let cases = [
            ("8.8.8.8", Reach::Public),
            ("2606:4700::1111", Reach::Public),
            ("10.0.0.1", Reach::Private),
            ("172.16.5.4", Reach::Private),
            ("192.168.1.1", Reach::Private),
            ("100.64.0.1", Reach::Private),
            ("fd00::5", Reach::Private),
            ("::ffff:10.0.0.1", Reach::Private),
            ("127.0.0.1", Reach::Loopback),
            ("127.8.8.8", Reach::Loopback),
            ("::1", Reach::Loopback),
            ("::ffff:127.0.0.1", Reach::Loopback),
            ("169.254.169.254", Reach::Never),
            ("fe80::1", Reach::Never),
            ("0.0.0.0", Reach::Never),
            ("::", Reach::Never),
            ("255.255.255.255", Reach::Never),
            ("224.0.0.1", Reach::Never),
            ("64:ff9b::a00:1", Reach::Private),
            ("fd00:ec2::254", Reach::Never),
        ];
        for (ip, want) in cases {
            let ip: IpAddr = ip.parse().expect("an address");
            assert_eq!(reach(ip), want, "{ip}");
        }
        assert!(within(Reach::Public, Reach::Public));
        assert!(!within(Reach::Private, Reach::Public));
        assert!(within(Reach::Private, Reach::Loopback));
        assert!(!within(Reach::Loopback, Reach::Private));
        assert!(!within(Reach::Never, Reach::Loopback));
    }

    /// This machine's name, which resolves to an address of this host (or
    /// of its private network) without being `localhost` or a literal.
    fn inward_name() -> String {
        let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .expect("the host name")
            .trim()
            .to_owned();
        let resolved: Vec<IpAddr> = std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), 0))
            .map(|a| a.map(|a| a.ip()).collect())
            .unwrap_or_default();
        assert!(
            !resolved.is_empty() && resolved.iter().all(|ip| reach(*ip) != Reach::Public),
            "this test needs the host name {name} to resolve to a loopback or private address (it does in /etc/hosts on most systems); it resolves to {resolved:?}"
        );
        name
    }

    #[tokio::test]
    async fn a_name_is_resolved_only_to_addresses_the_client_may_reach() {
        use reqwest::dns::Resolve as _;
        use std::str::FromStr as _;
        let name = |n: &str| reqwest::dns::Name::from_str(n).expect("a name");
        let inward = inward_name();
        // A connector configured at a loopback literal: `localhost` reaches
        // this host, any other name only public addresses.
        let limits =
            ReachLimits::for_connector("http://127.0.0.1:9/mcp", None, false).expect("limits");
        let resolver = GuardedResolver::with_limits(limits.names, limits.literals);
        let err = match resolver.resolve(name(&inward)).await {
            Ok(addrs) => panic!("resolved to {:?}", addrs.collect::<Vec<_>>()),
            Err(e) => e,
        };
        assert!(err.downcast_ref::<AddressRefused>().is_some(), "{err}");
        let addrs: Vec<std::net::SocketAddr> = resolver
            .resolve(name("localhost"))
            .await
            .expect("resolved")
            .collect();
        assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()));
        // Allowed private networks: the name resolves.
        let open =
            ReachLimits::for_connector("https://mcp.example.com/mcp", None, true).expect("limits");
        let resolver = GuardedResolver::with_limits(open.names, open.literals);
        assert!(resolver.resolve(name(&inward)).await.is_ok());
    }

    /// The limits come from what the operator wrote, never from what a
    /// configured name resolves to (the downstream may control its DNS).
    #[test]
    fn the_reach_comes_from_the_config_not_from_dns() {
        let inward = inward_name();
        let by_name = OAuthHttp::for_connector(&format!("https://{inward}:8443/mcp"), None, false)
            .expect("client");
        assert_eq!(
            by_name.limits(),
            ReachLimits {
                literals: Reach::Public,
                names: Reach::Public
            }
        );
        for url in ["https://127.0.0.1/x", "https://10.0.0.1/x"] {
            assert!(by_name.get(url).is_err(), "{url}");
        }
        let local =
            OAuthHttp::for_connector("http://localhost:8080/mcp", None, false).expect("client");
        assert_eq!(local.limits().literals, Reach::Loopback);
        assert_eq!(local.limits().names, Reach::Public);
        assert!(local.get("http://127.0.0.1:8080/.well-known/x").is_ok());
        let public = OAuthHttp::for_connector("https://8.8.8.8/mcp", None, false).expect("client");
        for url in [
            "https://127.0.0.1/",
            "https://10.0.0.1/",
            "https://[fe80::1]/",
        ] {
            assert!(public.get(url).is_err(), "{url}");
        }
        assert!(public.get("https://1.1.1.1/").is_ok());
        let private =
            OAuthHttp::for_connector("https://10.1.2.3/mcp", None, false).expect("client");
        assert!(private.get("https://192.168.0.9/").is_ok());
        assert!(private.get("https://127.0.0.1/").is_err());
        let allowed =
            OAuthHttp::for_connector(&format!("https://{inward}/mcp"), None, true).expect("client");
        assert!(allowed.get("https://127.0.0.1/").is_ok());
        assert!(allowed.get("https://169.254.169.254/").is_err(), "never");
    }

    #[test]
    fn well_known_urls_insert_the_path() {
        let u = Url::parse("https://api.example.com/v1/mcp").expect("url");
        let got: Vec<String> = well_known(&u, "oauth-protected-resource")
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            got,
            [
                "https://api.example.com/.well-known/oauth-protected-resource/v1/mcp",
                "https://api.example.com/.well-known/oauth-protected-resource"
            ]
        );
        let root = Url::parse("http://127.0.0.1:9000/").expect("url");
        assert_eq!(
            well_known(&root, "oauth-authorization-server")
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>(),
            ["http://127.0.0.1:9000/.well-known/oauth-authorization-server"]
        );
    }

    #[test]
    fn only_https_or_loopback_http_is_acceptable() {
        assert!(acceptable_url("https://auth.example.com/token").is_ok());
        assert!(acceptable_url("http://127.0.0.1:9000/token").is_ok());
        assert!(acceptable_url("http://localhost/token").is_ok());
        assert!(acceptable_url("http://[::1]:9/token").is_ok());
        for bad in [
            "http://auth.example.com/token",
            "http://10.0.0.5/token",
            "file:///etc/passwd",
            "nonsense",
        ] {
            assert!(acceptable_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_challenge_is_s256_of_the_verifier() {
        let (verifier, challenge) = pkce();
        assert_eq!(verifier.expose().len(), 43);
        assert_eq!(
            challenge,
            URL_SAFE_NO_PAD.encode(sha256(verifier.expose().as_bytes()))
        );
        // RFC 7636 appendix B.
        assert_eq!(
            URL_SAFE_NO_PAD.encode(sha256(b"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn the_authorization_url_carries_pkce_state_and_resource() {
        let info = ServerInfo {
            issuer: "https://as.example.com".into(),
            authorization_endpoint: "https://as.example.com/authorize".into(),
            token_endpoint: "https://as.example.com/token".into(),
            registration_endpoint: None,
            scopes_supported: vec![],
            iss_in_response: false,
            auth_methods: vec![],
            resource: "https://mcp.example.com/mcp".into(),
        };
        let client = ClientCredentials::configured("abc 123", None);
        let url = authorization_url(
            &info,
            &client,
            "http://localhost:8787/oauth/callback",
            &["notes".into(), "read".into()],
            "st4te",
            "ch&llenge",
        );
        assert_eq!(
            url,
            "https://as.example.com/authorize?response_type=code&client_id=abc%20123&redirect_uri=http%3A%2F%2Flocalhost%3A8787%2Foauth%2Fcallback&state=st4te&code_challenge=ch%26llenge&code_challenge_method=S256&resource=https%3A%2F%2Fmcp.example.com%2Fmcp&scope=notes%20read"
        );
    }

    #[test]
    fn issuers_differing_by_a_trailing_slash_are_one() {
        assert!(same_issuer("http://127.0.0.1:9/", "http://127.0.0.1:9"));
        assert!(!same_issuer("https://a.example", "https://b.example"));
    }
}
