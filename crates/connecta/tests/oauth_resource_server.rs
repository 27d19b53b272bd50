//! connecta as an OAuth 2.1 resource server, through the real binary and a
//! test authorization server written with PyJWT (`tests/peers/oauth_issuer.py`):
//! a JWT signed by the issuer's key opens `/mcp` and names its subject in the
//! activity log; expired, foreign, forged, HMAC-signed and unknown-key
//! tokens get 401 `invalid_token` saying why; a missing scope is 403
//! `insufficient_scope`; every challenge points to the RFC 9728 metadata,
//! which is served; an unreachable issuer fails closed with 503, and an
//! issuer whose keys cannot be fetched is asked once per refetch window,
//! not by every request.

mod support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use support::*;

const PUBLIC_URL: &str = "http://gateway.test";
const AUDIENCE: &str = "http://gateway.test/mcp";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

async fn mint(issuer: &HttpPeer, body: Value) -> String {
    let r: Value = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}/mint", issuer.port))
        .json(&body)
        .send()
        .await
        .expect("mint")
        .json()
        .await
        .expect("mint JSON");
    r["token"].as_str().expect("token").to_owned()
}

fn claims(issuer: &HttpPeer, extra: Value) -> Value {
    let mut c = json!({
        "iss": format!("http://127.0.0.1:{}", issuer.port),
        "aud": AUDIENCE,
        "sub": "alice",
        "exp": now() + 600,
        "scope": "mcp tools",
    });
    for (k, v) in extra.as_object().expect("object") {
        c[k] = v.clone();
    }
    c
}

fn config(issuer_url: &str, scopes: &str) -> String {
    format!(
        "[server]\npublic_url = \"{PUBLIC_URL}\"\n\n[auth.oauth]\nissuer = \"{issuer_url}\"\nrequired_scopes = [{scopes}]\n\n{}",
        demo_connector()
    )
}

async fn fetches(issuer: &HttpPeer) -> u64 {
    let r: Value = reqwest::get(format!("http://127.0.0.1:{}/jwks-fetches", issuer.port))
        .await
        .expect("fetches")
        .json()
        .await
        .expect("JSON");
    r["fetches"].as_u64().expect("count")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_from_the_issuer_opens_mcp_and_every_bad_one_is_refused_with_its_reason() {
    let issuer = HttpPeer::start("oauth_issuer.py", &[]).await;
    let issuer_url = format!("http://127.0.0.1:{}", issuer.port);
    let gw = Gateway::start_raw(&config(&issuer_url, "\"mcp\""));
    gw.wait_catalogs().await;
    let metadata_url = format!("{PUBLIC_URL}/.well-known/oauth-protected-resource/mcp");

    // No token: the challenge points to the metadata, which is served.
    let (status, challenge, _) = ping_with_token(&gw, None).await;
    assert_eq!(status, 401);
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let m: Value = reqwest::get(format!("{}{path}", gw.base()))
            .await
            .expect("metadata")
            .json()
            .await
            .expect("JSON");
        assert_eq!(m["resource"], AUDIENCE, "{m}");
        assert_eq!(m["authorization_servers"], json!([issuer_url]), "{m}");
        assert_eq!(m["scopes_supported"], json!(["mcp"]), "{m}");
    }

    // RS256 and ES256 tokens from the issuer work; the subject is the actor.
    let rsa = mint(&issuer, json!({"claims": claims(&issuer, json!({}))})).await;
    assert_eq!(ping_with_token(&gw, Some(&rsa)).await.0, 200);
    let ec = mint(
        &issuer,
        json!({"claims": claims(&issuer, json!({"sub": "bob"})), "key": "ec"}),
    )
    .await;
    assert_eq!(ping_with_token(&gw, Some(&ec)).await.0, 200);
    let event = call_and_find_event(&gw, &rsa, "demo.list_notes").await;
    assert_eq!(
        event["actor"],
        json!({"kind": "oauth", "id": "alice"}),
        "{event}"
    );

    // Each bad token is refused with invalid_token and says why.
    let bad = [
        (
            json!({"claims": claims(&issuer, json!({"exp": now() - 600}))}),
            "expired",
        ),
        (
            json!({"claims": claims(&issuer, json!({"aud": "http://other.test/mcp"}))}),
            "audience",
        ),
        (
            json!({"claims": claims(&issuer, json!({"iss": "http://127.0.0.1:1"}))}),
            "issuer",
        ),
        (
            json!({"claims": claims(&issuer, json!({})), "key": "stranger"}),
            "signature",
        ),
        (
            json!({"claims": claims(&issuer, json!({})), "kid": "nobody"}),
            "key is unknown",
        ),
    ];
    for (body, says) in bad {
        let token = mint(&issuer, body.clone()).await;
        let (status, challenge, text) = ping_with_token(&gw, Some(&token)).await;
        assert_eq!(status, 401, "{body}: {text}");
        assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
        assert!(challenge.contains(says), "{says}: {challenge}");
        assert!(challenge.contains("resource_metadata="), "{challenge}");
    }
    // HMAC is refused whatever the secret (no key confusion).
    let hmac = {
        let header = base64_url(br#"{"alg":"HS256","typ":"JWT","kid":"rsa-1"}"#);
        let payload = base64_url(claims(&issuer, json!({})).to_string().as_bytes());
        format!("{header}.{payload}.c2lnbmF0dXJl")
    };
    let (status, challenge, _) = ping_with_token(&gw, Some(&hmac)).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("algorithm"), "{challenge}");

    // An empty subject names nobody: client_id stands in, or it is refused.
    let by_client = mint(
        &issuer,
        json!({"claims": claims(&issuer, json!({"sub": "", "client_id": "robot"}))}),
    )
    .await;
    assert_eq!(ping_with_token(&gw, Some(&by_client)).await.0, 200);
    let nobody = mint(
        &issuer,
        json!({"claims": claims(&issuer, json!({"sub": " "}))}),
    )
    .await;
    let (status, challenge, _) = ping_with_token(&gw, Some(&nobody)).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("names no caller"), "{challenge}");

    // A valid token without the required scope is 403.
    let narrow = mint(
        &issuer,
        json!({"claims": claims(&issuer, json!({"scope": "tools"}))}),
    )
    .await;
    let (status, challenge, _) = ping_with_token(&gw, Some(&narrow)).await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\"") && challenge.contains("scope=\"mcp\""),
        "{challenge}"
    );

    // The keys were fetched once: the unknown kid did not refetch them
    // within the refetch window.
    assert_eq!(fetches(&issuer).await, 1);
    assert!(!gw.stderr().contains(&rsa), "a token was logged");
}

fn base64_url(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

async fn set_jwks_down(issuer: &HttpPeer, down: bool) {
    reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}/jwks-down", issuer.port))
        .json(&json!({ "down": down }))
        .send()
        .await
        .expect("jwks-down")
        .error_for_status()
        .expect("jwks-down accepted");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_key_fetch_is_not_repeated_by_every_request_within_the_window() {
    let issuer = HttpPeer::start("oauth_issuer.py", &[]).await;
    set_jwks_down(&issuer, true).await;
    let gw = Gateway::start_raw(&config(&format!("http://127.0.0.1:{}", issuer.port), ""));
    gw.wait_catalogs().await;
    let token = mint(&issuer, json!({"claims": claims(&issuer, json!({}))})).await;
    // The issuer answers its JWKS with 503: every request is refused with a
    // retryable 503, and only the first one asked the issuer.
    for _ in 0..3 {
        let (status, _, _) = ping_with_token(&gw, Some(&token)).await;
        assert_eq!(status, 503);
    }
    assert_eq!(fetches(&issuer).await, 1);
    // The issuer is back, but the refetch window (30 s) has not passed: no
    // request asks again, and the token is still refused, not accepted
    // without keys.
    set_jwks_down(&issuer, false).await;
    let (status, _, _) = ping_with_token(&gw, Some(&token)).await;
    assert_eq!(status, 503);
    assert_eq!(fetches(&issuer).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_issuer_fails_closed_and_no_oauth_means_no_metadata() {
    // Nothing listens on this port: the keys cannot be fetched.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let gw = Gateway::start_raw(&config(&format!("http://127.0.0.1:{port}"), ""));
    let token = "eyJhbGciOiJSUzI1NiIsImtpZCI6InJzYS0xIn0.eyJzdWIiOiJhIn0.c2ln";
    let r = reqwest::Client::new()
        .post(gw.url())
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), 503);
    assert!(r.headers().get("retry-after").is_some());

    // Without a public_url, the resource names the port actually bound.
    let derived = Gateway::start_raw(&format!(
        "[auth.oauth]\nissuer = \"https://idp.example\"\n\n{}",
        demo_connector()
    ));
    let m: Value = reqwest::get(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        derived.base()
    ))
    .await
    .expect("metadata")
    .json()
    .await
    .expect("JSON");
    assert_eq!(
        m["resource"],
        format!("http://localhost:{}/mcp", derived.port),
        "{m}"
    );

    let plain = Gateway::start(&demo_connector());
    let r = reqwest::get(format!(
        "{}/.well-known/oauth-protected-resource",
        plain.base()
    ))
    .await
    .expect("answered");
    assert_eq!(r.status(), 404);
}

#[test]
fn check_locates_oauth_config_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    for (body, says) in [
        (
            "[auth.oauth]\naudience = \"x\"\n",
            ":1:1: [auth.oauth] needs `issuer`",
        ),
        (
            "[auth.oauth]\nissuer = \"http://idp.example\"\n",
            ":2:10: auth.oauth.issuer must be an https:// URL",
        ),
        (
            "[auth.oauth]\nissuer = \"https://idp.example\"\nrequired_scopes = [\"two words\"]\n",
            ":3:20: a scope must be one word",
        ),
        (
            "[auth]\nopen = true\n[auth.oauth]\nissuer = \"https://idp.example\"\n",
            ":2:8: auth.open = true accepts every caller",
        ),
    ] {
        std::fs::write(&path, format!("{body}\n{}", demo_connector())).expect("write");
        let (status, out, err) = check_config(&path);
        assert!(!status.success(), "{body}: {out}");
        assert!(err.contains(says), "{says}: {err}");
    }
}

async fn issuer_get(issuer: &HttpPeer, path: &str) -> Value {
    reqwest::get(format!("http://127.0.0.1:{}{path}", issuer.port))
        .await
        .expect("issuer answers")
        .json()
        .await
        .expect("JSON")
}

/// A token naming an unknown `kid` makes the gateway fetch the keys again
/// (once the refetch window has passed); while that fetch hangs, other
/// requests are answered with the keys at hand. The issuer holds the JWKS
/// answer and reports whether the gateway is still waiting for it: a valid
/// token is accepted while the gateway still waits (before, every JWT
/// request waited behind the fetch until it timed out).
#[tokio::test(flavor = "multi_thread")]
async fn a_key_fetch_for_a_forged_kid_stalls_no_other_request() {
    let issuer = HttpPeer::start("oauth_issuer.py", &[]).await;
    let gw = Gateway::start_raw(&config(&format!("http://127.0.0.1:{}", issuer.port), ""));
    gw.wait_catalogs().await;
    let valid = mint(&issuer, json!({"claims": claims(&issuer, json!({}))})).await;
    let forged = mint(
        &issuer,
        json!({"claims": claims(&issuer, json!({})), "kid": "forged"}),
    )
    .await;
    assert_eq!(ping_with_token(&gw, Some(&valid)).await.0, 200);
    assert_eq!(fetches(&issuer).await, 1);

    // Past the refetch window, the forged kid triggers a fetch, which the
    // issuer holds.
    tokio::time::sleep(Duration::from_secs(31)).await;
    issuer.post("/jwks-hold", json!({"hold": true})).await;
    let forged_request = {
        let port = gw.port;
        let forged = forged.clone();
        tokio::spawn(async move {
            reqwest::Client::new()
                .post(format!("http://127.0.0.1:{port}/mcp"))
                .bearer_auth(forged)
                .header("Accept", "application/json, text/event-stream")
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
                .send()
                .await
                .map(|r| r.status().as_u16())
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while issuer_get(&issuer, "/jwks-held").await["held"] != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the refetch never came"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A valid token is answered while the gateway still waits for the JWKS.
    let (status, _, _) = ping_with_token(&gw, Some(&valid)).await;
    assert_eq!(status, 200);
    assert_eq!(
        issuer_get(&issuer, "/jwks-held").await["held"],
        1,
        "the valid token waited for the forged kid's fetch to give up"
    );
    // Another forged token is refused at once, without a second fetch.
    let (status, challenge, _) = ping_with_token(&gw, Some(&forged)).await;
    assert_eq!(status, 401, "{challenge}");
    assert_eq!(issuer_get(&issuer, "/jwks-held").await["held"], 1);
    issuer.post("/jwks-hold", json!({"hold": false})).await;
    assert_eq!(forged_request.await.expect("task").expect("answered"), 401);
    assert_eq!(fetches(&issuer).await, 2);
}

/// An oversized JWKS is cut at the 1 MiB cap while it streams in, not
/// read whole first: the issuer streams 256 MiB and counts what the gateway
/// took before it hung up.
#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_jwks_is_cut_at_the_cap_while_it_streams() {
    let issuer = HttpPeer::start("oauth_issuer.py", &[]).await;
    issuer
        .post("/jwks-oversize", json!({"bytes": 256 << 20}))
        .await;
    let gw = Gateway::start_raw(&config(&format!("http://127.0.0.1:{}", issuer.port), ""));
    gw.wait_catalogs().await;
    let token = mint(&issuer, json!({"claims": claims(&issuer, json!({}))})).await;
    let (status, _, _) = ping_with_token(&gw, Some(&token)).await;
    assert_eq!(status, 503, "no keys: refused, fail closed");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let report = loop {
        let r = issuer_get(&issuer, "/jwks-oversize").await;
        if r["done"] == true {
            break r;
        }
        assert!(std::time::Instant::now() < deadline, "{r}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let sent = report["sent"].as_u64().expect("sent");
    // The cap plus what socket buffers hold, far from the whole body.
    assert!(sent < 32 << 20, "the gateway took {sent} bytes");
    gw.wait_stderr("larger than 1 MiB").await;
}

/// Metadata that names another issuer is not this issuer's: its `jwks_uri`
/// is not used, and tokens are refused (fail closed) rather than checked
/// against keys someone else chose (RFC 8414 §3.3).
#[tokio::test(flavor = "multi_thread")]
async fn metadata_naming_another_issuer_is_refused() {
    let issuer = HttpPeer::start("oauth_issuer.py", &[]).await;
    issuer
        .post(
            "/issuer-claim",
            json!({"issuer": "https://idp.elsewhere.example"}),
        )
        .await;
    let gw = Gateway::start_raw(&config(&format!("http://127.0.0.1:{}", issuer.port), ""));
    gw.wait_catalogs().await;
    let token = mint(&issuer, json!({"claims": claims(&issuer, json!({}))})).await;
    let (status, _, _) = ping_with_token(&gw, Some(&token)).await;
    assert_eq!(status, 503);
    assert_eq!(fetches(&issuer).await, 0, "the keys were fetched");
    gw.wait_stderr("idp.elsewhere.example").await;
}
