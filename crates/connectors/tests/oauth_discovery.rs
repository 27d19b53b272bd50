//! Downstream OAuth discovery against metadata served on loopback: what a
//! well-formed server gives, and the servers the gateway must refuse (an
//! issuer that names another, no PKCE, an endpoint over plain http
//! elsewhere), and token errors quoted without a secret.

use axum::Json;
use axum::Router;
use axum::routing::{get, post};
use connecta_connectors::oauth::{self, ClientCredentials, OAuthError, OAuthHttp};
use serde_json::{Value, json};

/// Serves `/.well-known/oauth-protected-resource/mcp` naming this server as
/// the issuer, its metadata built by `meta(base)`, and a token endpoint that
/// refuses with `invalid_grant`.
async fn serve(meta: fn(&str) -> Value) -> String {
    serve_with(meta, good_prm, "/.well-known/oauth-protected-resource/mcp").await
}

fn good_prm(base: &str) -> Value {
    json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
           "scopes_supported": ["files.read"]})
}

/// [`serve`] with the resource metadata built by `prm(base)` at `prm_path`;
/// `/mcp` answers 401 naming that path in `resource_metadata`.
async fn serve_with(
    meta: fn(&str) -> Value,
    prm: fn(&str) -> Value,
    prm_path: &'static str,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("addr").port()
    );
    let (b1, b2, b3) = (base.clone(), base.clone(), base.clone());
    let app = Router::new()
        .route(
            prm_path,
            get(move || {
                let v = prm(&b1);
                async move { Json(v) }
            }),
        )
        .route(
            "/mcp",
            post(move || {
                let b = b3.clone();
                async move {
                    (
                        axum::http::StatusCode::UNAUTHORIZED,
                        [(
                            "www-authenticate",
                            format!("Bearer resource_metadata=\"{b}{prm_path}\""),
                        )],
                        "",
                    )
                }
            }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || {
                let m = meta(&b2);
                async move { Json(m) }
            }),
        )
        .route(
            "/token",
            post(|| async {
                (
                    axum::http::StatusCode::BAD_REQUEST,
                    Json(json!({"error": "invalid_grant", "error_description": "refresh token expired"})),
                )
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

/// The OAuth client of a connector at `{base}/mcp`.
async fn client(base: &str) -> OAuthHttp {
    OAuthHttp::for_connector(&format!("{base}/mcp"), None, false).expect("client")
}

/// Discovery of `{base}/mcp`, which must be refused.
async fn refusal(base: &str) -> OAuthError {
    let http = client(base).await;
    oauth::discover(&http, &format!("{base}/mcp"), None)
        .await
        .expect_err("refused")
}

fn good(base: &str) -> Value {
    json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": ["files.read", "files.write"],
        "authorization_response_iss_parameter_supported": true,
    })
}

#[tokio::test]
async fn a_well_formed_server_is_found_through_the_resource_metadata() {
    let base = serve(good).await;
    let http = client(&base).await;
    let info = oauth::discover(&http, &format!("{base}/mcp"), None)
        .await
        .expect("discovered");
    assert_eq!(info.issuer, base);
    assert_eq!(info.token_endpoint, format!("{base}/token"));
    assert_eq!(
        info.scopes_supported,
        ["files.read"],
        "the resource's scopes first"
    );
    assert!(info.iss_in_response);
    assert_eq!(info.resource, format!("{base}/mcp"));
}

#[tokio::test]
async fn an_issuer_that_names_another_is_refused() {
    let base = serve(|b| {
        let mut m = good(b);
        m["issuer"] = json!("https://evil.example");
        m
    })
    .await;
    let err = refusal(&base).await;
    assert!(
        matches!(&err, OAuthError::Discovery(m) if m.contains("names issuer https://evil.example")),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_without_pkce_s256_is_refused() {
    let base = serve(|b| {
        let mut m = good(b);
        m["code_challenge_methods_supported"] = json!(["plain"]);
        m
    })
    .await;
    let err = refusal(&base).await;
    assert!(err.to_string().contains("PKCE"), "{err}");
}

#[tokio::test]
async fn an_endpoint_over_plain_http_elsewhere_is_refused() {
    let base = serve(|b| {
        let mut m = good(b);
        m["token_endpoint"] = json!("http://tokens.example.com/token");
        m
    })
    .await;
    let err = refusal(&base).await;
    assert!(err.to_string().contains("must be https"), "{err}");
}

#[tokio::test]
async fn a_refused_refresh_is_invalid_grant_and_quotes_no_secret() {
    let base = serve(good).await;
    let http = client(&base).await;
    let info = oauth::discover(&http, &format!("{base}/mcp"), None)
        .await
        .expect("discovered");
    let client = ClientCredentials::configured("c1", Some("client-secret-Zk3"));
    let err = oauth::refresh(&http, &info, &client, "refresh-token-Qm7", 0)
        .await
        .expect_err("refused");
    assert!(err.is_invalid_grant(), "{err}");
    let text = err.to_string();
    assert!(text.contains("refresh token expired"), "{text}");
    assert!(!text.contains("client-secret-Zk3") && !text.contains("refresh-token-Qm7"));
}

#[tokio::test]
async fn the_metadata_named_in_the_401_is_found_off_the_well_known_path() {
    let base = serve_with(good, good_prm, "/custom-prm").await;
    let http = client(&base).await;
    let info = oauth::discover(&http, &format!("{base}/mcp"), None)
        .await
        .expect("found through resource_metadata");
    assert_eq!(info.issuer, base);
}

#[tokio::test]
async fn resource_metadata_about_another_resource_is_refused() {
    let base = serve_with(
        good,
        |b| json!({"resource": "https://other.example/mcp", "authorization_servers": [b]}),
        "/.well-known/oauth-protected-resource/mcp",
    )
    .await;
    let err = refusal(&base).await;
    assert!(
        err.to_string().contains("is for https://other.example/mcp"),
        "{err}"
    );
}

#[tokio::test]
async fn a_loopback_endpoint_off_the_issuer_origin_is_refused() {
    let base = serve(|b| {
        let mut m = good(b);
        m["registration_endpoint"] = json!("http://localhost:9/admin/users/create");
        m
    })
    .await;
    let err = refusal(&base).await;
    assert!(err.to_string().contains("outside its own origin"), "{err}");
    assert!(!err.is_transient());
}

fn prm_naming_a_metadata_service(base: &str) -> Value {
    json!({"resource": format!("{base}/mcp"),
           "authorization_servers": ["https://169.254.169.254/latest"]})
}

#[tokio::test]
async fn an_authorization_server_on_a_link_local_address_is_never_fetched() {
    // A downstream naming the cloud metadata service as its authorization
    // server gets no request sent there, even from a loopback connector.
    let base = serve_with(
        good,
        prm_naming_a_metadata_service,
        "/.well-known/oauth-protected-resource/mcp",
    )
    .await;
    let err = refusal(&base).await;
    let text = err.to_string();
    assert!(text.contains("169.254.169.254"), "{text}");
    assert!(
        text.contains("closer to the gateway than the connector"),
        "{text}"
    );
}

#[tokio::test]
async fn a_public_connector_reaches_no_private_or_loopback_address() {
    let http = OAuthHttp::for_connector("https://1.1.1.1/mcp", None, false).expect("client");
    assert_eq!(http.limits().literals, oauth::Reach::Public);
    for resource in [
        "https://10.1.2.3/mcp",
        "https://[fd00::5]/mcp",
        "http://127.0.0.1:9/mcp",
    ] {
        let err = oauth::discover(&http, resource, None)
            .await
            .expect_err("refused before any request");
        assert!(
            err.to_string()
                .contains("closer to the gateway than the connector"),
            "{resource}: {err}"
        );
    }
    // An operator who names a private authorization server allows it.
    let http = OAuthHttp::for_connector("https://1.1.1.1/mcp", Some("https://10.0.0.9"), false)
        .expect("client");
    assert_eq!(http.limits().literals, oauth::Reach::Private);
    assert_eq!(http.limits().names, oauth::Reach::Public);
}
