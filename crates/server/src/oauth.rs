//! connecta as an OAuth 2.1 resource server (`[auth.oauth]`): `/mcp`
//! accepts JWT access tokens signed by the configured issuer, and serves the
//! protected-resource metadata (RFC 9728) that tells a client where to get
//! one.
//!
//! A token is accepted when its signature verifies against a key from the
//! issuer's JWKS (picked by `kid`; asymmetric algorithms only), `iss` is the
//! issuer exactly, `aud` includes the audience (`<public_url>/mcp` unless
//! configured), `exp` has not passed (60 s leeway; `nbf` too), and its
//! `scope` has every required scope. The caller is the actor `oauth:<sub>`.
//!
//! Keys are fetched on first use (discovered from the issuer's metadata,
//! whose `issuer` must be the configured one, unless `jwks_url` is set),
//! kept for [`KEYS_FRESH`], and fetched again early when a token names a
//! `kid` not in the set. Fetches, failed ones included, happen at most once
//! per [`REFETCH_AT_MOST`]: meanwhile stale keys still verify, and with no
//! keys at all a JWT is refused with 503. A fetch holds no lock the other
//! requests need: the request that started it waits for it, and so do
//! requests that arrive before any key was ever fetched (nothing could
//! verify them); every other request is answered with the keys at hand
//! (a `kid` not among them is refused at once), so a forged `kid` delays
//! its own request and nobody else's. Documents are read up to
//! [`MAX_DOCUMENT_BYTES`] and cut there, never read whole first.
//!
//! Must never: accept `none` or an HMAC algorithm (a public key used as an
//! HMAC secret), accept a token when the keys could not be fetched, use
//! keys named by metadata about another issuer, or log a token.

use std::sync::Arc;
use std::time::{Duration, Instant};

use connecta_core::activity::Actor;
use connecta_core::config::OAuthConfig;
use jsonwebtoken::jwk::{JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Value, json};

/// How long fetched keys are used before they are fetched again.
pub const KEYS_FRESH: Duration = Duration::from_secs(600);

/// An unknown `kid` triggers a fetch at most this often (a flood of forged
/// tokens must not become a flood of requests to the issuer).
pub const REFETCH_AT_MOST: Duration = Duration::from_secs(30);

/// The longest one metadata or JWKS request may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Clock skew allowed on `exp` and `nbf`.
const LEEWAY_S: u64 = 60;

/// A metadata or JWKS document larger than this is refused.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    /// Not valid (bad signature, wrong issuer or audience, expired, …): the
    /// description is safe to show the caller.
    Invalid(&'static str),
    /// Valid, but without these scopes.
    InsufficientScope(String),
    /// The keys could not be fetched: refuse, and say it may be retried.
    Unavailable,
}

struct Keys {
    set: JwkSet,
    fetched: Instant,
}

pub struct OAuthVerifier {
    config: OAuthConfig,
    audience: String,
    http: reqwest::Client,
    /// The key set in use, replaced whole when a fetch brings a new one;
    /// never locked across a fetch.
    keys: std::sync::Mutex<Option<Arc<Keys>>>,
    /// When the last fetch started (a failed one too).
    last_fetch: std::sync::Mutex<Option<Instant>>,
    /// Held by the one fetch in flight. Only a request that needs new keys
    /// waits on it.
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Deserialize)]
struct Claims {
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
struct ServerMetadata {
    #[serde(default)]
    issuer: Option<String>,
    jwks_uri: String,
}

impl OAuthVerifier {
    /// `public_url` is the gateway's own (the default audience is
    /// `<public_url>/mcp`).
    pub fn new(config: OAuthConfig, public_url: &str) -> OAuthVerifier {
        let audience = config
            .audience
            .clone()
            .unwrap_or_else(|| resource(public_url));
        OAuthVerifier {
            config,
            audience,
            http: reqwest::Client::builder()
                .timeout(FETCH_TIMEOUT)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default(),
            keys: std::sync::Mutex::new(None),
            last_fetch: std::sync::Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// Whether `token` has the shape of a JWT (three dot-separated parts).
    pub fn looks_like_jwt(token: &str) -> bool {
        token.split('.').count() == 3
    }

    pub async fn verify(&self, token: &str) -> Result<Actor, Denial> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| Denial::Invalid("the token is not a JWT"))?;
        if !asymmetric(header.alg) {
            return Err(Denial::Invalid(
                "the token's algorithm is not accepted (asymmetric signatures only)",
            ));
        }
        let key = self.key_for(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = LEEWAY_S;
        validation.validate_nbf = true;
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            Denial::Invalid(match e.kind() {
                K::ExpiredSignature => "the token has expired",
                K::ImmatureSignature => "the token is not valid yet",
                K::InvalidIssuer => "the token was issued by another issuer",
                K::InvalidAudience => "the token is for another audience",
                K::MissingRequiredClaim(_) => "the token lacks a valid exp, iss or aud",
                K::InvalidSignature => "the token's signature does not verify",
                _ => "the token is not valid",
            })
        })?;
        let granted: Vec<&str> = data
            .claims
            .scope
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        let missing: Vec<&str> = self
            .config
            .required_scopes
            .iter()
            .map(String::as_str)
            .filter(|s| !granted.contains(s))
            .collect();
        if !missing.is_empty() {
            return Err(Denial::InsufficientScope(
                self.config.required_scopes.join(" "),
            ));
        }
        let named = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        let who = named(data.claims.sub)
            .or_else(|| named(data.claims.client_id))
            .ok_or(Denial::Invalid(
                "the token names no caller (sub or client_id)",
            ))?;
        Ok(Actor {
            kind: "oauth".into(),
            id: Some(who),
        })
    }

    /// The key `kid` names (or the only one, when the token names none),
    /// fetching the set when it is stale or lacks that key.
    async fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, Denial> {
        let mut keys = self.current_keys();
        let stale = keys
            .as_ref()
            .is_none_or(|k| k.fetched.elapsed() >= KEYS_FRESH);
        let missing = keys.as_ref().is_some_and(|k| find(&k.set, kid).is_none());
        if keys.is_none() {
            // Nothing can be verified yet: wait for the fetch in flight (its
            // keys may be here when it ends), else start one if the window
            // allows.
            let _one = self.fetching.lock().await;
            keys = self.current_keys();
            if keys.is_none()
                && self.claim_fetch()
                && let Some(fetched) = self.fetch_and_keep().await
            {
                keys = Some(fetched);
            }
        } else if (stale || missing)
            && let Ok(_one) = self.fetching.try_lock()
        {
            // Renew the keys for this request only (if the window allows);
            // while a fetch is in flight the others are answered with the
            // keys at hand (a `kid` not among them is refused at once).
            if self.claim_fetch()
                && let Some(fetched) = self.fetch_and_keep().await
            {
                keys = Some(fetched);
            }
        }
        let set = &keys.as_ref().ok_or(Denial::Unavailable)?.set;
        let jwk = find(set, kid).ok_or(Denial::Invalid("the token's signing key is unknown"))?;
        if let Some(declared) = jwk.common.key_algorithm
            && !same_algorithm(declared, alg)
        {
            return Err(Denial::Invalid(
                "the token's algorithm does not match its key",
            ));
        }
        DecodingKey::from_jwk(jwk)
            .map_err(|_| Denial::Invalid("the token's signing key is unusable"))
    }

    fn current_keys(&self) -> Option<Arc<Keys>> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether a fetch may start now (none started within the refetch
    /// window); if so, the window starts again. Every fetch, a failed one
    /// too, waits out the window: an issuer that is down is not asked again
    /// by every request.
    fn claim_fetch(&self) -> bool {
        let mut last = self.last_fetch.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|t| t.elapsed() < REFETCH_AT_MOST) {
            return false;
        }
        *last = Some(Instant::now());
        true
    }

    /// Fetch the key set and keep it; `None` (logged) when it could not be
    /// fetched, which leaves the keys in use as they are.
    async fn fetch_and_keep(&self) -> Option<Arc<Keys>> {
        match self.fetch_keys().await {
            Ok(set) => {
                let keys = Arc::new(Keys {
                    set,
                    fetched: Instant::now(),
                });
                *self.keys.lock().unwrap_or_else(|p| p.into_inner()) = Some(keys.clone());
                Some(keys)
            }
            Err(why) => {
                tracing::warn!("could not fetch the OAuth signing keys: {why}");
                None
            }
        }
    }

    async fn fetch_keys(&self) -> Result<JwkSet, String> {
        let jwks_url = match &self.config.jwks_url {
            Some(u) => u.clone(),
            None => self.discover_jwks_url().await?,
        };
        let set: JwkSet = self.get_json(&jwks_url).await?;
        if set.keys.is_empty() {
            return Err(format!("{jwks_url} lists no keys"));
        }
        Ok(set)
    }

    /// RFC 8414 metadata first, then OpenID Connect discovery.
    async fn discover_jwks_url(&self) -> Result<String, String> {
        let issuer = self.config.issuer.trim_end_matches('/');
        let (origin, path) = split_issuer(issuer);
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{issuer}/.well-known/openid-configuration"),
        ];
        let mut last = String::new();
        for url in candidates {
            match self.get_json::<ServerMetadata>(&url).await {
                // RFC 8414 §3.3 (and OpenID Connect Discovery §4.3): the
                // metadata must name the issuer it was fetched for.
                Ok(m) if m.issuer.as_deref().map(|i| i.trim_end_matches('/')) == Some(issuer) => {
                    return Ok(m.jwks_uri);
                }
                Ok(m) => {
                    return Err(format!(
                        "{url} names the issuer {} rather than {issuer}; its keys are not used",
                        m.issuer.as_deref().map_or("(none)".into(), |i| {
                            connecta_core::error::clamp_text(i, 200).into_owned()
                        })
                    ));
                }
                Err(e) => last = e,
            }
        }
        Err(format!(
            "no authorization server metadata for {issuer}: {last}"
        ))
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, String> {
        let r = self
            .http
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !r.status().is_success() {
            return Err(format!("{url}: HTTP {}", r.status().as_u16()));
        }
        let too_large = || format!("{url}: the document is larger than 1 MiB");
        if r.content_length()
            .is_some_and(|l| l > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(too_large());
        }
        let mut r = r;
        let mut body = Vec::new();
        while let Some(chunk) = r.chunk().await.map_err(|e| format!("{url}: {e}"))? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| format!("{url}: {e}"))
    }

    /// The RFC 9728 protected-resource metadata for `/mcp`.
    pub fn metadata(&self, public_url: &str) -> Value {
        let mut m = json!({
            "resource": resource(public_url),
            "authorization_servers": [self.config.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "connecta",
        });
        if !self.config.required_scopes.is_empty() {
            m["scopes_supported"] = json!(self.config.required_scopes);
        }
        m
    }
}

/// The resource `/mcp` is: `<public_url>/mcp`.
pub fn resource(public_url: &str) -> String {
    format!("{}/mcp", public_url.trim_end_matches('/'))
}

/// Where the metadata for `/mcp` is served (RFC 9728 §3.1).
pub fn metadata_url(public_url: &str) -> String {
    format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        public_url.trim_end_matches('/')
    )
}

fn find<'s>(set: &'s JwkSet, kid: Option<&str>) -> Option<&'s jsonwebtoken::jwk::Jwk> {
    match kid {
        Some(kid) => set.find(kid),
        None if set.keys.len() == 1 => set.keys.first(),
        None => None,
    }
}

fn asymmetric(alg: Algorithm) -> bool {
    !matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

fn same_algorithm(declared: KeyAlgorithm, alg: Algorithm) -> bool {
    format!("{declared:?}") == format!("{alg:?}")
}

/// `https://a.example/tenant` → (`https://a.example`, `/tenant`).
fn split_issuer(issuer: &str) -> (&str, &str) {
    let after_scheme = issuer.find("://").map_or(0, |i| i + 3);
    match issuer[after_scheme..].find('/') {
        Some(i) => issuer.split_at(after_scheme + i),
        None => (issuer, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issuer_paths_split_for_rfc_8414_discovery() {
        assert_eq!(
            split_issuer("https://a.example/tenant/x"),
            ("https://a.example", "/tenant/x")
        );
        assert_eq!(
            split_issuer("http://127.0.0.1:9/"),
            ("http://127.0.0.1:9", "/")
        );
        assert_eq!(split_issuer("https://a.example"), ("https://a.example", ""));
    }

    #[test]
    fn only_asymmetric_algorithms_are_accepted() {
        assert!(!asymmetric(Algorithm::HS256));
        assert!(asymmetric(Algorithm::RS256) && asymmetric(Algorithm::ES256));
        assert!(asymmetric(Algorithm::EdDSA));
        assert!(same_algorithm(KeyAlgorithm::RS256, Algorithm::RS256));
        assert!(!same_algorithm(KeyAlgorithm::RS256, Algorithm::PS256));
    }

    #[test]
    fn the_metadata_names_the_resource_and_the_issuer() {
        let v = OAuthVerifier::new(
            OAuthConfig {
                issuer: "https://idp.example".into(),
                audience: None,
                jwks_url: None,
                required_scopes: vec!["mcp".into()],
            },
            "https://gw.example/",
        );
        let m = v.metadata("https://gw.example/");
        assert_eq!(m["resource"], "https://gw.example/mcp");
        assert_eq!(m["authorization_servers"], json!(["https://idp.example"]));
        assert_eq!(m["scopes_supported"], json!(["mcp"]));
        assert_eq!(v.audience, "https://gw.example/mcp");
        assert_eq!(
            metadata_url("https://gw.example/"),
            "https://gw.example/.well-known/oauth-protected-resource/mcp"
        );
    }
}
