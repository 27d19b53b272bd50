//! Inbound authentication for `/mcp`: an explicitly open endpoint, static
//! bearer tokens compared in constant time, or operator-issued access tokens
//! checked against the store (`access_tokens.rs`). The authenticated caller
//! becomes an [`Actor`] in the request's extensions, where the MCP handler
//! finds it.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use connecta_core::activity::Actor;
use connecta_core::config::AuthConfig;
use connecta_store::Store;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::AppState;
use crate::access_tokens::{Refusal, TokenVerifier};
use crate::oauth::{Denial, OAuthVerifier};

pub struct Authenticator {
    open: bool,
    /// SHA-256 of each static token: comparing digests in constant time also
    /// hides the tokens' lengths.
    token_digests: Vec<[u8; 32]>,
    issued: TokenVerifier,
    pub(crate) oauth: Option<OAuthVerifier>,
}

/// Why a request was not let in.
enum Denied {
    /// No bearer token at all.
    Missing,
    /// A bearer token that is not accepted.
    Token(Refusal),
    /// A JWT the OAuth verifier refused.
    OAuth(Denial),
}

impl Authenticator {
    pub fn new(auth: &AuthConfig, store: Arc<dyn Store>, public_url: &str) -> Authenticator {
        Authenticator {
            open: auth.open,
            token_digests: auth
                .bearer_tokens
                .iter()
                .map(|t| Sha256::digest(t.expose().as_bytes()).into())
                .collect(),
            issued: TokenVerifier::new(store),
            oauth: auth
                .oauth
                .clone()
                .map(|o| OAuthVerifier::new(o, public_url)),
        }
    }

    /// `token` is the request's bearer token, if it sent one.
    async fn check(&self, token: Option<&str>) -> Result<Actor, Denied> {
        if self.open {
            return Ok(Actor::anonymous());
        }
        let token = token.ok_or(Denied::Missing)?;
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut matched: Option<usize> = None;
        for (i, d) in self.token_digests.iter().enumerate() {
            // Check every token, whatever matched, so timing says nothing.
            if bool::from(d.ct_eq(&digest)) && matched.is_none() {
                matched = Some(i);
            }
        }
        if let Some(i) = matched {
            return Ok(Actor {
                kind: "bearer".into(),
                id: Some(format!("static-{}", i + 1)),
            });
        }
        if let Some(oauth) = &self.oauth
            && OAuthVerifier::looks_like_jwt(token)
        {
            return oauth.verify(token).await.map_err(Denied::OAuth);
        }
        self.issued
            .verify(token, connecta_gateway::now_ms())
            .await
            .map_err(Denied::Token)
    }
}

fn bearer(req: &Request) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

pub(crate) async fn authenticate(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    if req.method() == Method::OPTIONS {
        return next.run(req).await;
    }
    // Owned: the request (its body is not `Sync`) is not held across a wait.
    let token = bearer(&req).map(str::to_owned);
    match state.auth.check(token.as_deref()).await {
        Ok(actor) => {
            req.extensions_mut().insert(actor);
            next.run(req).await
        }
        Err(denied) => refused(&state, &denied),
    }
}

fn refused(state: &AppState, denied: &Denied) -> Response {
    // RFC 6750: no error code when no token was sent; `invalid_token` with
    // a description when one was; `insufficient_scope` (403) when a valid
    // token lacks a required scope.
    let scope_needed = match denied {
        Denied::OAuth(Denial::InsufficientScope(scopes)) => Some(scopes.as_str()),
        _ => None,
    };
    let (status, message, challenge) = match denied {
        Denied::Missing => (
            StatusCode::UNAUTHORIZED,
            "authentication required: send Authorization: Bearer <token>",
            None,
        ),
        Denied::Token(Refusal::Unknown) => (
            StatusCode::UNAUTHORIZED,
            "the bearer token is not valid",
            Some("the token is not valid"),
        ),
        Denied::Token(Refusal::Expired) => (
            StatusCode::UNAUTHORIZED,
            "the access token has expired; ask an operator for a new one",
            Some("the token has expired"),
        ),
        Denied::Token(Refusal::Revoked) => (
            StatusCode::UNAUTHORIZED,
            "the access token was revoked",
            Some("the token was revoked"),
        ),
        Denied::Token(Refusal::Unavailable) | Denied::OAuth(Denial::Unavailable) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "the access token could not be checked right now; retry shortly",
            None,
        ),
        Denied::OAuth(Denial::Invalid(why)) => (StatusCode::UNAUTHORIZED, *why, Some(*why)),
        Denied::OAuth(Denial::InsufficientScope(_)) => (
            StatusCode::FORBIDDEN,
            "the access token lacks a scope this gateway requires",
            None,
        ),
    };
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32001, "message": message}
    });
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = status;
    if status == StatusCode::SERVICE_UNAVAILABLE {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    } else {
        let public_url = &state.gateway.config.server.public_url;
        let mut realm = format!(
            "Bearer realm=\"connecta\", resource=\"{}\"",
            crate::oauth::resource(public_url)
        );
        if state.auth.oauth.is_some() {
            realm.push_str(&format!(
                ", resource_metadata=\"{}\"",
                crate::oauth::metadata_url(public_url)
            ));
        }
        if let Some(description) = challenge {
            realm.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"{description}\""
            ));
        }
        if let Some(scopes) = scope_needed {
            realm.push_str(&format!(
                ", error=\"insufficient_scope\", scope=\"{scopes}\""
            ));
        }
        if let Ok(v) = HeaderValue::from_str(&realm) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
    }
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// CORS for browser clients on `/mcp`, with `WWW-Authenticate` and
/// `Retry-After` exposed so a browser client can read them.
pub(crate) fn cors(origins: &[String]) -> CorsLayer {
    let allow = if origins.is_empty() {
        AllowOrigin::list(Vec::<HeaderValue>::new())
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("mcp-session-id"),
            HeaderName::from_static("mcp-method"),
            HeaderName::from_static("mcp-name"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([
            header::WWW_AUTHENTICATE,
            header::RETRY_AFTER,
            HeaderName::from_static("mcp-session-id"),
        ])
}
