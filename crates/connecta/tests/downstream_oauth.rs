//! Downstream OAuth through the real binary, against an MCP server that is
//! its own authorization server, built on the official Python SDK
//! (`tests/peers/py_oauth_server.py`: RFC 9728 and 8414 metadata, dynamic
//! client registration, PKCE, refresh tokens). An agent meets
//! `auth_required`, gets a consent link from `authorize_connector`, a person
//! opens it, and calls work; the callback takes a state once and answers
//! every refusal alike, a real code included when the response names
//! another issuer (RFC 9207); short-lived tokens are refreshed, and a
//! refresh that fails for a while is a retryable failure that keeps the
//! authorization; an authorization
//! server that forgot the gateway gets a new registration and consent; no
//! token is ever in a log, an answer, the activity log or the database file.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

fn oauth_connector(peer: &HttpPeer) -> String {
    format!(
        "[[connector]]\nid = \"notes\"\nkind = \"mcp\"\nurl = {}\n[connector.oauth]\n",
        q(&peer.url())
    )
}

/// `authorize_connector`'s answer, which must not be an error.
async fn authorize(client: &Client, force: bool) -> Value {
    let (v, is_error) = call(
        client,
        "authorize_connector",
        json!({"connector": "notes", "force": force}),
    )
    .await;
    assert!(!is_error, "{v}");
    v
}

/// The person: opens the consent link in "a browser" (following the
/// authorization server's redirect to the gateway's callback).
async fn consent(url: &str) -> (u16, String) {
    let r = reqwest::get(url).await.expect("consent");
    (r.status().as_u16(), r.text().await.expect("page"))
}

/// A signed-in operator UI session: (client, cookie pair).
async fn operator(gw: &Gateway) -> (reqwest::Client, String) {
    let secret = std::fs::read_to_string(gw.data_dir().join("operator-secret")).expect("secret");
    let http = reqwest::Client::new();
    let signed = http
        .post(format!("{}/ui/api/session", gw.base()))
        .header("origin", gw.base())
        .header("content-type", "application/json")
        .body(json!({"secret": secret.trim()}).to_string())
        .send()
        .await
        .expect("sign in");
    let cookie = signed.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .expect("pair")
        .to_owned();
    (http, cookie)
}

/// The callback page for these query parameters, as a browser gets it.
async fn callback(gw: &Gateway, query: &str) -> (u16, String) {
    let r = reqwest::get(format!("{}/oauth/callback{query}", gw.base()))
        .await
        .expect("callback");
    (r.status().as_u16(), r.text().await.expect("page"))
}

#[tokio::test]
async fn an_agent_gets_a_consent_link_and_calls_work_once_a_person_consents() {
    let peer = HttpPeer::start("py_oauth_server.py", &[]).await;
    let mut gw = Gateway::start(&oauth_connector(&peer));
    let client = connect(&gw.url()).await;

    // Before consent: auth_required that points at authorize_connector and
    // says a person must consent (not an operator).
    let (v, is_error) = whoami(&client).await;
    assert!(is_error, "{v}");
    assert_eq!(v["error"]["code"], "auth_required", "{v}");
    assert_eq!(v["error"]["recovery"], "user_consent", "{v}");
    assert_eq!(v["error"]["nextAction"]["tool"], "authorize_connector");

    let first = authorize(&client, false).await;
    assert_eq!(first["status"], "consent_required", "{first}");
    let url = first["authorizationUrl"].as_str().expect("link").to_owned();
    let base = format!("http://127.0.0.1:{}", peer.port);
    assert!(url.starts_with(&format!("{base}/authorize?")), "{url}");
    for part in [
        "response_type=code",
        "code_challenge_method=S256",
        "code_challenge=",
        "state=",
        "scope=notes",
        &format!("resource={}", urlencode(&peer.url())),
        &format!(
            "redirect_uri={}",
            urlencode(&format!("http://localhost:{}/oauth/callback", gw.port))
        ),
    ] {
        assert!(url.contains(part), "{part} is not in {url}");
    }
    // Asking again hands out the same link, without a new registration.
    let again = authorize(&client, false).await;
    assert_eq!(again["authorizationUrl"], first["authorizationUrl"]);
    assert_eq!(peer.stats().await["registrations"], 1);

    let (status, page) = consent(&url).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Authorized"), "{page}");

    let (v, is_error) = whoami(&client).await;
    assert!(!is_error, "{v}");
    assert_eq!(v["subject"], "user-ada", "{v}");
    let s = peer.stats().await;
    assert_eq!(
        (s["exchanges"].as_u64(), s["refreshes"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(
        s["resource"],
        peer.url(),
        "the token is for this resource (RFC 8707)"
    );
    let authorized = authorize(&client, false).await;
    assert_eq!(authorized["status"], "authorized", "{authorized}");

    // The state works once: the same link again gets a new code from the
    // server, but the gateway refuses it, exactly as it refuses nonsense.
    let (status, replayed) = consent(&url).await;
    assert_eq!(status, 400, "{replayed}");
    let (s1, garbage) = callback(&gw, "?state=not-a-state&code=x").await;
    let (s2, bare) = callback(&gw, "").await;
    let (s3, denied) = callback(&gw, "?error=access_denied&state=x").await;
    let (s4, doubled) = callback(&gw, "?state=a&state=b").await;
    assert_eq!((s1, s2, s3, s4), (400, 400, 400, 400));
    assert!(replayed == garbage && garbage == bare && bare == denied && denied == doubled);
    assert!(!replayed.contains("notes"), "the refusal names a connector");

    // A refused access token (the server forgot it; the refresh token is
    // still good) costs the agent nothing: refreshed, and the call made again.
    peer.post("/drop-access-tokens", json!({})).await;
    let (v, is_error) = whoami(&client).await;
    assert!(!is_error, "a refused token failed the call: {v}");
    assert_eq!(peer.stats().await["refreshes"], 1);

    // The authorization serves every caller: an agent cannot replace a
    // working one, even with force.
    let agent_forced = authorize(&client, true).await;
    assert_eq!(agent_forced["status"], "authorized", "{agent_forced}");
    assert!(agent_forced["authorizationUrl"].is_null(), "{agent_forced}");
    // An operator can: a new consent that leaves the authorization working
    // until it is given, under the same registration.
    let (ui, cookie) = operator(&gw).await;
    let forced: Value = ui
        .post(format!("{}/ui/api/connections/notes/authorize", gw.base()))
        .header("cookie", &cookie)
        .header("origin", gw.base())
        .header("content-type", "application/json")
        .body(json!({"force": true}).to_string())
        .send()
        .await
        .expect("re-authorize")
        .json()
        .await
        .expect("json");
    assert_eq!(forced["status"], "consent_required", "{forced}");
    let (v, is_error) = whoami(&client).await;
    assert!(!is_error, "a forced consent broke the authorization: {v}");
    let again = authorize(&client, false).await;
    assert_eq!(again["status"], "authorized", "{again}");
    assert_eq!(
        again["authorizationUrl"], forced["authorizationUrl"],
        "the link is still offered"
    );
    assert_eq!(
        peer.stats().await["registrations"],
        1,
        "no new registration"
    );
    let (status, _) = consent(forced["authorizationUrl"].as_str().expect("link")).await;
    assert_eq!(status, 200);
    assert!(!whoami(&client).await.1);

    // No token anywhere it must not be.
    let s = peer.stats().await;
    let access = s["last_access_token"].as_str().expect("token").to_owned();
    let refresh = s["last_refresh_token"].as_str().expect("token").to_owned();
    let events = serde_json::to_string(&activity(&gw)).expect("json");
    let mut db = Vec::new();
    for entry in std::fs::read_dir(gw.data_dir()).expect("data dir") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            db.extend(std::fs::read(&path).expect("read"));
        }
    }
    let db = String::from_utf8_lossy(&db);
    for secret in [&access, &refresh] {
        assert!(!gw.stderr().contains(secret.as_str()), "a token was logged");
        assert!(
            !events.contains(secret.as_str()),
            "a token is in the activity log"
        );
        assert!(!db.contains(secret.as_str()), "a token is stored in clear");
        assert!(!authorized.to_string().contains(secret.as_str()));
    }

    // The operator UI shows it, and can take it back.
    let (http, cookie) = operator(&gw).await;
    let conns: Value = http
        .get(format!("{}/ui/api/connections", gw.base()))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("connections")
        .json()
        .await
        .expect("json");
    assert_eq!(
        conns["connectors"][0]["oauth"]["status"], "authorized",
        "{conns}"
    );
    let forgot = http
        .delete(format!(
            "{}/ui/api/connections/notes/authorization",
            gw.base()
        ))
        .header("cookie", &cookie)
        .header("origin", gw.base())
        .header("content-type", "application/json")
        .send()
        .await
        .expect("forget");
    assert_eq!(forgot.status().as_u16(), 200);
    let (v, is_error) = whoami(&client).await;
    assert!(is_error, "{v}");
    assert_eq!(v["error"]["recovery"], "user_consent", "{v}");
    gw.stop();
}

/// The value of query parameter `name` in `url`, as written.
fn query_param<'u>(url: &'u str, name: &str) -> &'u str {
    url.split(['?', '&'])
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {name} in {url}"))
}

#[tokio::test]
async fn a_callback_naming_another_issuer_is_refused_and_uses_up_its_state() {
    let peer = HttpPeer::start("py_oauth_server.py", &[]).await;
    let gw = Gateway::start(&oauth_connector(&peer));
    let client = connect(&gw.url()).await;
    let link = authorize(&client, false).await;
    let url = link["authorizationUrl"].as_str().expect("link").to_owned();
    let state = query_param(&url, "state").to_owned();

    // The person consents, and the authorization server redirects back
    // with a real code for the pending state; but the response arriving
    // says another authorization server issued it (RFC 9207 mix-up):
    // refused like any other refusal, before the code is exchanged.
    let redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .get(&url)
        .send()
        .await
        .expect("consent");
    let location = redirect.headers()["location"].to_str().expect("location");
    let code = query_param(location, "code").to_owned();
    assert_eq!(query_param(location, "state"), state);
    let (status, mixed_up) = callback(
        &gw,
        &format!("?code={code}&state={state}&iss=https%3A%2F%2Fevil.example"),
    )
    .await;
    assert_eq!(status, 400, "{mixed_up}");
    let (_, garbage) = callback(&gw, "?state=not-a-state&code=x").await;
    assert_eq!(mixed_up, garbage);
    assert_eq!(peer.stats().await["exchanges"], 0);
    // The state was taken: the same code delivered without the foreign
    // issuer is refused too, and nothing is authorized.
    let (status, page) = callback(&gw, &format!("?code={code}&state={state}")).await;
    assert_eq!(status, 400, "{page}");
    assert_eq!(peer.stats().await["exchanges"], 0);
    let (v, is_error) = whoami(&client).await;
    assert!(is_error, "{v}");
    assert_eq!(v["error"]["code"], "auth_required", "{v}");

    // A new link, and a callback naming the right issuer, work.
    let fresh = authorize(&client, false).await;
    let url = fresh["authorizationUrl"].as_str().expect("link").to_owned();
    assert_ne!(query_param(&url, "state"), state);
    let (status, page) = consent(&url).await;
    assert_eq!(status, 200, "{page}");
    let (v, is_error) = whoami(&client).await;
    assert!(!is_error, "{v}");
}

#[tokio::test]
async fn a_refresh_that_fails_for_a_while_keeps_the_authorization() {
    let peer = HttpPeer::start("py_oauth_server.py", &[]).await;
    let gw = Gateway::start(&oauth_connector(&peer));
    let client = connect(&gw.url()).await;
    let link = authorize(&client, false).await["authorizationUrl"]
        .as_str()
        .expect("link")
        .to_owned();
    assert_eq!(consent(&link).await.0, 200);
    assert!(!whoami(&client).await.1);

    // The access token is refused (the server forgot it) and the token
    // endpoint fails (HTTP 500) while the gateway refreshes: the call is a
    // retryable failure, not a request for a new consent.
    peer.post("/drop-access-tokens", json!({})).await;
    peer.post("/refresh-fails", json!({"on": true})).await;
    let (v, is_error) = whoami(&client).await;
    assert!(is_error, "{v}");
    assert_ne!(v["error"]["code"], "auth_required", "{v}");
    assert_eq!(v["error"]["retryable"], true, "{v}");
    assert!(peer.stats().await["failed_refreshes"].as_u64() >= Some(1));
    let status = authorize(&client, false).await;
    assert_eq!(status["status"], "authorized", "{status}");

    // The endpoint is back: the kept refresh token works, with no new
    // consent or code exchange.
    peer.post("/refresh-fails", json!({"on": false})).await;
    let (v, is_error) = whoami(&client).await;
    assert!(!is_error, "{v}");
    let s = peer.stats().await;
    assert_eq!(
        (s["exchanges"].as_u64(), s["refreshes"].as_u64()),
        (Some(1), Some(1)),
        "{s}"
    );
}

#[tokio::test]
async fn short_lived_tokens_are_refreshed_and_a_forgetful_server_gets_a_new_consent() {
    let mut peer = HttpPeer::start("py_oauth_server.py", &["4"]).await;
    let mut gw = Gateway::start(&oauth_connector(&peer));
    let client = connect(&gw.url()).await;
    let link = authorize(&client, false).await["authorizationUrl"]
        .as_str()
        .expect("link")
        .to_owned();
    assert_eq!(consent(&link).await.0, 200);
    assert!(!whoami(&client).await.1);

    // Past half of a 4 s life the token is refreshed before it is used.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (v, is_error) = whoami(&client).await;
        assert!(!is_error, "{v}");
        if peer.stats().await["refreshes"].as_u64() >= Some(2) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the token was never refreshed twice"
        );
    }
    assert!(
        gw.stderr()
            .contains("refreshed the downstream access token")
    );

    // The server restarts and forgets every client and token: the gateway's
    // token and refresh are refused, and the agent is asked for consent;
    // the new consent registers the gateway again, with no operator.
    let port = peer.port;
    drop(peer);
    peer = HttpPeer::start_on(port, "py_oauth_server.py", &[]).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let link = loop {
        let (v, is_error) = whoami(&client).await;
        assert!(is_error, "a forgotten token worked: {v}");
        assert_eq!(v["error"]["code"], "auth_required", "{v}");
        let answer = authorize(&client, false).await;
        if answer["status"] == "consent_required" {
            break answer["authorizationUrl"]
                .as_str()
                .expect("link")
                .to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "never asked for a new consent: {answer}"
        );
    };
    let (status, page) = consent(&link).await;
    assert_eq!(status, 200, "{page}");
    let (v, is_error) = whoami(&client).await;
    assert!(!is_error, "{v}");
    assert_eq!(peer.stats().await["registrations"], 1, "registered again");
    assert!(
        gw.stderr()
            .contains("the downstream refused the refresh; a new consent is needed"),
        "{}",
        gw.stderr()
    );
    gw.stop();
}

/// A client registered by hand whose secret goes by HTTP Basic (what the
/// SDK's server asks of a `client_secret_basic` client): no registration,
/// and the secret in no log.
#[tokio::test]
async fn a_client_registered_by_hand_authenticates_with_basic() {
    const CLIENT_SECRET: &str = "hand-made-client-secret-7Yq";
    let peer = HttpPeer::start("py_oauth_server.py", &[]).await;
    let mut gw = Gateway::start_with_env(
        &format!(
            "[auth]\nopen = true\n[[connector]]\nid = \"notes\"\nurl = {}\n[connector.oauth]\nclient_id = \"by-hand\"\nclient_secret = \"${{HAND_SECRET}}\"\n",
            q(&peer.url())
        ),
        &[("HAND_SECRET", CLIENT_SECRET), ("RUST_LOG", "trace")],
    );
    let registered = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}/preregister", peer.port))
        .json(&json!({
            "client_id": "by-hand",
            "client_secret": CLIENT_SECRET,
            "redirect_uri": format!("http://localhost:{}/oauth/callback", gw.port),
            "auth_method": "client_secret_basic",
        }))
        .send()
        .await
        .expect("preregister");
    assert_eq!(registered.status().as_u16(), 200);
    let client = connect(&gw.url()).await;
    let link = authorize(&client, false).await["authorizationUrl"]
        .as_str()
        .expect("link")
        .to_owned();
    assert!(link.contains("client_id=by-hand"), "{link}");
    let (status, page) = consent(&link).await;
    assert_eq!(status, 200, "{page}");
    let (v, is_error) = whoami(&client).await;
    assert!(!is_error, "{v}");
    assert_eq!(v["client"], "by-hand", "{v}");
    assert_eq!(
        peer.stats().await["registrations"],
        0,
        "nothing registered itself"
    );
    gw.stop();
    assert!(
        !gw.stderr().contains(CLIENT_SECRET),
        "the client secret was logged"
    );
}

/// A token the downstream accepts but that lacks a scope (HTTP 403) is not a
/// refused token: no refresh, no consent prompt, and the agent is told an
/// operator must look at the scopes.
#[tokio::test]
async fn a_token_without_the_needed_scope_is_not_refreshed_or_re_consented() {
    let peer = HttpPeer::start("py_oauth_server.py", &[]).await;
    let mut gw = Gateway::start(&format!(
        "[[connector]]\nid = \"notes\"\nurl = {}\n[connector.oauth]\nscopes = [\"other\"]\n",
        q(&peer.url())
    ));
    let client = connect(&gw.url()).await;
    let link = authorize(&client, false).await["authorizationUrl"]
        .as_str()
        .expect("link")
        .to_owned();
    assert!(link.contains("scope=other"), "{link}");
    assert_eq!(consent(&link).await.0, 200);
    let (v, is_error) = whoami(&client).await;
    assert!(is_error, "{v}");
    assert_eq!(v["error"]["code"], "auth_required", "{v}");
    assert_ne!(v["error"]["recovery"], "user_consent", "{v}");
    assert!(
        v["error"]["retry"]
            .as_str()
            .unwrap_or("")
            .contains("HTTP 403"),
        "{v}"
    );
    assert_eq!(peer.stats().await["refreshes"], 0, "a 403 caused a refresh");
    assert_eq!(authorize(&client, false).await["status"], "authorized");
    gw.stop();
}

#[test]
fn check_refuses_oauth_where_it_cannot_apply() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let cases = [
        (
            "[[connector]]\nid = \"a\"\ncommand = \"x\"\n[connector.oauth]\n",
            "[connector.oauth] applies to mcp connectors over HTTP",
        ),
        (
            "[[connector]]\nid = \"a\"\nurl = \"http://127.0.0.1:9/mcp\"\nheaders = { Authorization = \"Bearer x\" }\n[connector.oauth]\n",
            "remove Authorization from `headers`",
        ),
        (
            "[[connector]]\nid = \"a\"\nurl = \"http://127.0.0.1:9/mcp\"\n[connector.oauth]\nclient_secret = \"s3cr3t-value\"\n",
            "oauth.client_secret needs oauth.client_id",
        ),
        (
            "[[connector]]\nid = \"a\"\nurl = \"http://127.0.0.1:9/mcp\"\n[connector.oauth]\nauthorization_server = \"http://auth.example.com\"\n",
            "oauth.authorization_server must be an https:// URL",
        ),
        (
            "[[connector]]\nid = \"a\"\nurl = \"http://127.0.0.1:9/mcp\"\n[connector.oauth]\n[connector.credential]\n",
            "[connector.oauth] or [connector.credential], not both",
        ),
        (
            "[[connector]]\nid = \"a\"\nurl = \"http://notes.example.com/mcp\"\n[connector.oauth]\n",
            "[connector.oauth] needs the connector's url to be https://",
        ),
        (
            "[[connector]]\nid = \"a\"\nurl = \"http://127.0.0.1:9/mcp\"\n[connector.oauth]\nclient_id = \"\"\n",
            "oauth.client_id must not be empty",
        ),
        (
            "[[connector]]\nid = \"a\"\nurl = \"http://127.0.0.1:9/mcp\"\n[connector.oauth]\nauthorization_server = \"https://\"\n",
            "oauth.authorization_server is not a valid URL (empty host)",
        ),
    ];
    for (config, expected) in cases {
        std::fs::write(&path, config).expect("write");
        let (status, out, err) = check_config(&path);
        assert!(!status.success(), "{config}: {out}");
        assert!(err.contains(expected), "{config}\n{err}");
        assert!(!err.contains("s3cr3t-value"), "a secret was echoed: {err}");
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
