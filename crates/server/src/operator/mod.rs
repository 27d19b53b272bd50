//! The operator web UI at `/ui`: a page and two assets embedded in the
//! binary, and a JSON API under `/ui/api` for what an operator may do —
//! see connections, manage credentials and access tokens, answer approval
//! questions, read activity.
//!
//! Sign-in is separate from MCP access: the operator secret (config or a
//! generated file) opens a session kept in a signed cookie (HMAC-SHA-256
//! under a key derived from the secret), so any replica that shares the
//! secret accepts it and changing the secret ends every session.
//!
//! Architecture invariants: nothing here can add, remove or change a
//! connector or a tool (that is the config file); a mutation needs a session
//! *and* a same-origin JSON request (no form post, no cross-site fetch can
//! make one); no credential value is ever sent back, only a masked suffix.
//! These routes bypass request admission, like `/health`.

mod api;
mod assets;
mod session;

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use connecta_core::config::{Config, defaults};
use connecta_core::secret::Secret;

use crate::AppState;
pub use session::Operator;

/// Where the operator secret comes from, for the boot log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    Config,
    /// A file in the data directory; `created` when this boot wrote it.
    File {
        path: std::path::PathBuf,
        created: bool,
    },
}

/// The operator secret: `[operator] secret`, else the file
/// `<data_dir>/operator-secret`, created (256 random bits, mode 0600) when
/// missing. `None` when the UI is turned off.
pub fn resolve_secret(
    config: &Config,
    data_dir: &Path,
) -> std::io::Result<Option<(Secret, SecretSource)>> {
    if !config.operator.enabled {
        return Ok(None);
    }
    if let Some(s) = &config.operator.secret {
        return Ok(Some((s.clone(), SecretSource::Config)));
    }
    let path = data_dir.join(defaults::OPERATOR_SECRET_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().chars().count() >= 16 => {
            return Ok(Some((
                Secret::new(text.trim().to_owned()),
                SecretSource::File {
                    path,
                    created: false,
                },
            )));
        }
        Ok(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{} holds fewer than 16 characters; delete it to have a new secret generated",
                    path.display()
                ),
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let secret = session::generate_secret();
    write_private(&path, secret.expose())?;
    Ok(Some((
        secret,
        SecretSource::File {
            path,
            created: true,
        },
    )))
}

/// Create `path` with mode 0600 and `text` in it; never overwrite.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent() {
        connecta_store::create_private_dir(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()
}

/// `/ui`, its assets and `/ui/api/…`. Empty when the UI is off.
pub(crate) fn routes(state: &AppState) -> Router<AppState> {
    if state.operator.is_none() {
        return Router::new();
    }
    let api = Router::new()
        .route(
            "/session",
            get(api::session_get)
                .post(api::session_post)
                .delete(api::session_delete),
        )
        .route("/connections", get(api::connections))
        .route("/connections/{id}/refresh", post(api::connection_refresh))
        .route(
            "/connections/{id}/authorize",
            post(api::connection_authorize),
        )
        .route(
            "/connections/{id}/authorization",
            axum::routing::delete(api::connection_deauthorize),
        )
        .route("/credentials", get(api::credentials))
        .route(
            "/credentials/{id}",
            axum::routing::put(api::credential_put).delete(api::credential_delete),
        )
        .route("/credentials/{id}/test", post(api::credential_test))
        .route("/tokens", get(api::tokens).post(api::token_create))
        .route("/tokens/{id}", axum::routing::patch(api::token_rename))
        .route("/tokens/{id}/revoke", post(api::token_revoke))
        .route("/approvals", get(api::approvals))
        .route("/approvals/{id}", post(api::approval_decide))
        .route("/activity", get(api::activity))
        .fallback(api::not_found)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(public_origin(&state.gateway.config.server.public_url)),
            same_origin_json,
        ))
        .layer(axum::middleware::from_fn(api::json_errors));
    Router::new()
        .route("/ui", get(assets::page))
        .route("/ui/", get(assets::page))
        .route("/ui/assets/{name}", get(assets::asset))
        .nest("/ui/api", api)
        .layer(axum::middleware::from_fn(security_headers))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(crate::allowed_hosts(&state.gateway.config)),
            known_host,
        ))
}

/// Headers on every `/ui` answer: a strict content policy (no inline
/// script or style, nothing from elsewhere, no framing), no sniffing, no
/// referrer; API answers are never cached.
async fn security_headers(req: Request, next: Next) -> Response {
    let is_api = req.uri().path().starts_with("/ui/api");
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if is_api {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    res
}

/// Only a `Host` this gateway answers to: a page on another name that
/// resolves here (DNS rebinding) gets nothing.
async fn known_host(
    axum::extract::State(hosts): axum::extract::State<Arc<Vec<String>>>,
    req: Request,
    next: Next,
) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(host_name);
    match host {
        Some(h) if hosts.iter().any(|k| k.eq_ignore_ascii_case(h)) => next.run(req).await,
        _ => api::refuse(
            StatusCode::FORBIDDEN,
            "this Host is not one the gateway answers to (add it to server.allowed_hosts)",
        ),
    }
}

/// `host:port`, `[v6]:port` or a bare name → the name.
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

/// A request that changes something (any method but GET and HEAD) must come
/// from a page of this origin and carry JSON: a cross-site form cannot set
/// that content type, and a cross-site fetch that does is stopped by the
/// `Origin` check (there is no CORS grant for `/ui`).
async fn same_origin_json(
    axum::extract::State(public): axum::extract::State<Arc<String>>,
    req: Request,
    next: Next,
) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD) {
        return next.run(req).await;
    }
    if !is_same_origin(req.headers(), &public) {
        return api::refuse(
            StatusCode::FORBIDDEN,
            "cross-origin request refused: operator changes must come from the operator UI itself",
        );
    }
    let json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return api::refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "operator changes must be sent as application/json",
        );
    }
    next.run(req).await
}

/// `scheme://host[:port]` of the public URL.
fn public_origin(public_url: &str) -> String {
    let rest = public_url.split_once("://").map_or(public_url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    let scheme = public_url.split_once("://").map_or("http", |(s, _)| s);
    format!("{scheme}://{authority}")
}

/// `Origin` is the gateway's public origin or names the host this request
/// was sent to (the `Host` header); or, without an `Origin`, the browser
/// says the request is same-origin.
fn is_same_origin(headers: &HeaderMap, public_origin: &str) -> bool {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    match text(header::ORIGIN) {
        Some(origin) if origin.eq_ignore_ascii_case(public_origin) => true,
        Some(origin) => {
            let authority = origin
                .strip_prefix("https://")
                .or_else(|| origin.strip_prefix("http://"));
            match (authority, text(header::HOST)) {
                (Some(a), Some(host)) => !a.is_empty() && a.eq_ignore_ascii_case(host),
                _ => false,
            }
        }
        None => headers
            .get("sec-fetch-site")
            .is_some_and(|v| v.as_bytes() == b"same-origin"),
    }
}

/// The UI is served only over HTTP, never in stdio mode.
pub(crate) fn new_operator(secret: &Secret, config: &Config) -> Arc<Operator> {
    Arc::new(Operator::new(
        secret,
        config.operator.session,
        &config.server.public_url,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn only_this_host_or_the_public_origin_is_same_origin() {
        let public = public_origin("http://localhost:8787/");
        assert_eq!(public, "http://localhost:8787");
        let same =
            |pairs: &[(&'static str, &'static str)]| is_same_origin(&headers(pairs), &public);
        assert!(same(&[
            ("origin", "http://127.0.0.1:8787"),
            ("host", "127.0.0.1:8787"),
        ]));
        assert!(same(&[
            ("origin", "https://gw.example.com"),
            ("host", "gw.example.com"),
        ]));
        // Behind a proxy that rewrites Host: the public origin is enough.
        assert!(same(&[
            ("origin", "http://localhost:8787"),
            ("host", "10.0.0.7:9000"),
        ]));
        for bad in [
            [
                ("origin", "http://evil.example"),
                ("host", "127.0.0.1:8787"),
            ],
            [
                ("origin", "http://127.0.0.1:8788"),
                ("host", "127.0.0.1:8787"),
            ],
            [("origin", "null"), ("host", "127.0.0.1:8787")],
            [("origin", "http://"), ("host", "")],
        ] {
            assert!(!same(&bad), "{bad:?}");
        }
        assert!(same(&[("sec-fetch-site", "same-origin")]));
        assert!(!same(&[("sec-fetch-site", "cross-site")]));
        assert!(!same(&[]), "no evidence: refused");
    }

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(host_name("127.0.0.1:8787"), "127.0.0.1");
        assert_eq!(host_name("[::1]:8787"), "::1");
        assert_eq!(host_name("gw.example.com"), "gw.example.com");
    }

    #[test]
    fn a_generated_secret_is_kept_private_and_reused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let config = connecta_core::config::demo_config();
        let (first, src) = resolve_secret(&config, dir.path())
            .expect("resolve")
            .expect("enabled");
        let path = dir.path().join("operator-secret");
        assert_eq!(
            src,
            SecretSource::File {
                path: path.clone(),
                created: true
            }
        );
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let (again, src) = resolve_secret(&config, dir.path())
            .expect("resolve")
            .expect("enabled");
        assert_eq!(again.expose(), first.expose());
        assert!(matches!(src, SecretSource::File { created: false, .. }));
        assert!(first.expose().len() >= 40, "256 bits, encoded");

        std::fs::write(&path, "short\n").expect("write");
        let err = resolve_secret(&config, dir.path()).expect_err("too short");
        assert!(err.to_string().contains("fewer than 16"), "{err}");
    }
}
