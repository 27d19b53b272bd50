//! Inbound authentication for `/mcp`: an explicitly open endpoint, or static
//! bearer tokens compared in constant time. The authenticated caller becomes
//! an [`Actor`] in the request's extensions, where the MCP handler finds it.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use connecta_core::activity::Actor;
use connecta_core::config::AuthConfig;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::AppState;

pub struct Authenticator {
    open: bool,
    /// SHA-256 of each static token: comparing digests in constant time also
    /// hides the tokens' lengths.
    token_digests: Vec<[u8; 32]>,
}

impl Authenticator {
    pub fn new(auth: &AuthConfig) -> Authenticator {
        Authenticator {
            open: auth.open,
            token_digests: auth
                .bearer_tokens
                .iter()
                .map(|t| Sha256::digest(t.expose().as_bytes()).into())
                .collect(),
        }
    }

    fn check(&self, req: &Request) -> Option<Actor> {
        if self.open {
            return Some(Actor::anonymous());
        }
        let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
        let (scheme, token) = value.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let digest: [u8; 32] = Sha256::digest(token.trim().as_bytes()).into();
        let mut matched: Option<usize> = None;
        for (i, d) in self.token_digests.iter().enumerate() {
            // Check every token, whatever matched, so timing says nothing.
            if bool::from(d.ct_eq(&digest)) && matched.is_none() {
                matched = Some(i);
            }
        }
        matched.map(|i| Actor {
            kind: "bearer".into(),
            id: Some(format!("static-{}", i + 1)),
        })
    }
}

pub(crate) async fn authenticate(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    if req.method() == Method::OPTIONS {
        return next.run(req).await;
    }
    match state.auth.check(&req) {
        Some(actor) => {
            req.extensions_mut().insert(actor);
            next.run(req).await
        }
        None => unauthorized(&state),
    }
}

fn unauthorized(state: &AppState) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32001, "message": "authentication required: send Authorization: Bearer <token>"}
    });
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = StatusCode::UNAUTHORIZED;
    let realm = format!(
        "Bearer realm=\"connecta\", resource=\"{}/mcp\"",
        state.gateway.config.server.public_url
    );
    if let Ok(v) = HeaderValue::from_str(&realm) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
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
