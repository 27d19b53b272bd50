//! The operator web UI through the real binary: its page and assets, its
//! sign-in (separate from MCP access), the guards on every change (a
//! session, a same-origin JSON request, a known Host), what an operator can
//! do (tokens, credentials, approvals, activity), and a real Chromium
//! driving the page the way a person would (`tests/peers/ui_browser.mjs`).

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use support::*;

const SECRET: &str = "operator-secret-for-tests-4Rk9";
const REASON_MARKER: &str = "ui-reason-marker-2Wq";
const ARGS_MARKER: &str = "ui-args-marker-8Jd";
const CREDENTIAL_VALUE: &str = "s3cret-value-123456";

fn config(extra: &str) -> String {
    format!(
        "[operator]\nsecret = {}\n\n[approvals]\npolicy = \"ask\"\n\n{}\n\n{extra}",
        q(SECRET),
        demo_connector()
    )
}

/// An `api` connector with a one-field credential slot (nothing listens at
/// its address; its catalog is declared, so it is ready without a call).
fn keyed_api_connector() -> &'static str {
    r#"[[connector]]
id = "keyed"
kind = "api"
base_url = "http://127.0.0.1:9"
allow_private_network = true
[connector.credential]
label = "API key"
fields = ["token"]
[connector.test]
tool = "get_thing"
[[connector.tool]]
name = "get_thing"
description = "Read a thing"
read_only = true
method = "GET"
path = "/thing"
input_schema = { type = "object" }
"#
}

/// A client that keeps the session cookie and speaks as the UI's own page.
struct Operator {
    http: reqwest::Client,
    base: String,
    cookie: Option<String>,
}

impl Operator {
    fn new(gw: &Gateway) -> Operator {
        Operator {
            http: reqwest::Client::new(),
            base: gw.base(),
            cookie: None,
        }
    }

    /// A request as the page sends it: same-origin, JSON.
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut r = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("origin", &self.base)
            .header("content-type", "application/json");
        if let Some(c) = &self.cookie {
            r = r.header("cookie", c);
        }
        r
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut r = self.request(method, path);
        if let Some(b) = body {
            r = r.body(b.to_string());
        }
        let res = r.send().await.expect("answered");
        let status = res.status().as_u16();
        let v = res.json().await.unwrap_or(Value::Null);
        (status, v)
    }

    async fn sign_in(&mut self, secret: &str) -> (u16, Value) {
        let res = self
            .request(reqwest::Method::POST, "/ui/api/session")
            .body(json!({"secret": secret, "name": "ops-alice"}).to_string())
            .send()
            .await
            .expect("answered");
        let status = res.status().as_u16();
        if let Some(c) = res.headers().get("set-cookie") {
            let text = c.to_str().expect("ascii").to_owned();
            assert!(
                text.contains("HttpOnly") && text.contains("SameSite=Strict"),
                "{text}"
            );
            self.cookie = Some(text.split(';').next().expect("pair").to_owned());
        }
        (status, res.json().await.unwrap_or(Value::Null))
    }
}

fn cli(gw: &Gateway, args: &[&str]) -> (bool, String, String) {
    let (status, out, err) = run(
        Command::new(bin())
            .args(args)
            .arg("--config")
            .arg(&gw.config_path),
        Duration::from_secs(30),
    );
    (status.success(), out, err)
}

/// Starts `call_destructive_tool demo.create_note {title}` on its own
/// client, with the markers in its body and reason.
fn create_note(gw: &Gateway, title: &'static str) -> tokio::task::JoinHandle<(Value, bool)> {
    destructive_create_note(gw, title, ARGS_MARKER, REASON_MARKER)
}

async fn pending_question(op: &Operator) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, v) = op
            .send(reqwest::Method::GET, "/ui/api/approvals", None)
            .await;
        assert_eq!(status, 200, "{v}");
        if let Some(q) = v["approvals"].as_array().and_then(|a| a.first()) {
            return q.clone();
        }
        assert!(Instant::now() < deadline, "no question was asked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_page_and_assets_are_embedded_and_an_unknown_asset_is_a_plain_404() {
    let mut gw = Gateway::start(&config(""));
    let http = reqwest::Client::new();
    let page = http
        .get(format!("{}/ui", gw.base()))
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), StatusCode::OK);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_owned();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    let html = page.text().await.expect("html");
    let script = html
        .split("src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("a script URL")
        .to_owned();
    assert!(script.starts_with("/ui/assets/app.js?rev="), "{script}");

    let js = http
        .get(format!("{}{script}", gw.base()))
        .send()
        .await
        .expect("js");
    assert_eq!(js.status(), StatusCode::OK);
    assert_eq!(
        js.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    assert!(
        js.headers()["cache-control"]
            .to_str()
            .expect("ascii")
            .contains("immutable")
    );
    let stale = http
        .get(format!("{}/ui/assets/app.js?rev=0000", gw.base()))
        .send()
        .await
        .expect("stale rev");
    assert_eq!(stale.status(), StatusCode::OK);
    assert_eq!(stale.headers()["cache-control"], "no-cache");

    for unknown in [
        "/ui/assets/nope.js",
        "/ui/assets/app.js.map",
        "/ui/assets/..%2Fapp.js",
    ] {
        let r = http
            .get(format!("{}{unknown}", gw.base()))
            .send()
            .await
            .expect("unknown asset");
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{unknown}");
        assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
        assert!(!r.text().await.expect("body").contains("<html"));
    }
    gw.stop();
}

#[tokio::test]
async fn sign_in_is_separate_and_every_change_needs_a_session_and_the_same_origin() {
    let mut gw = Gateway::start_raw(&format!(
        "[auth]\nbearer_tokens = [{}]\n\n{}",
        q("mcp-bearer-token-0123456789"),
        config("")
    ));
    let mut op = Operator::new(&gw);

    // No session: nothing but the session routes answer.
    let (status, v) = op.send(reqwest::Method::GET, "/ui/api/tokens", None).await;
    assert_eq!((status, v["error"].is_string()), (401, true), "{v}");
    // The MCP bearer token is not the operator secret.
    let (status, v) = op.sign_in("mcp-bearer-token-0123456789").await;
    assert_eq!(status, 401, "{v}");
    assert!(op.cookie.is_none());

    // A sign-in from another origin, or not as JSON, is refused before the
    // secret is looked at.
    let cross = op
        .http
        .post(format!("{}/ui/api/session", gw.base()))
        .header("origin", "http://evil.example")
        .header("content-type", "application/json")
        .body(json!({"secret": SECRET}).to_string())
        .send()
        .await
        .expect("answered");
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);
    assert!(cross.headers().get("set-cookie").is_none());
    let form = op
        .http
        .post(format!("{}/ui/api/session", gw.base()))
        .header("origin", gw.base())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("secret={SECRET}"))
        .send()
        .await
        .expect("answered");
    assert_eq!(form.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let (status, v) = op.sign_in(SECRET).await;
    assert_eq!((status, &v["name"]), (200, &json!("ops-alice")), "{v}");
    let (status, v) = op.send(reqwest::Method::GET, "/ui/api/session", None).await;
    assert_eq!((status, v["signedIn"].as_bool()), (200, Some(true)));

    // With the session cookie but from another origin: a forged change.
    let forged = op
        .http
        .post(format!("{}/ui/api/tokens", gw.base()))
        .header("cookie", op.cookie.clone().expect("cookie"))
        .header("origin", "http://evil.example")
        .header("content-type", "application/json")
        .body(json!({"name": "forged"}).to_string())
        .send()
        .await
        .expect("answered");
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    // A Host the gateway does not answer to (DNS rebinding) gets nothing.
    let rebound = op
        .http
        .get(format!("{}/ui/api/tokens", gw.base()))
        .header("cookie", op.cookie.clone().expect("cookie"))
        .header("host", "evil.example")
        .send()
        .await
        .expect("answered");
    assert_eq!(rebound.status(), StatusCode::FORBIDDEN);

    // Tokens: issued once, then only its id and name; it opens /mcp, a
    // rename keeps it working, a revoke ends it.
    let (status, issued) = op
        .send(
            reqwest::Method::POST,
            "/ui/api/tokens",
            Some(json!({"name": "ci-bot", "expiresInDays": 30})),
        )
        .await;
    assert_eq!(status, 200, "{issued}");
    let token = issued["token"].as_str().expect("token").to_owned();
    let id = issued["id"].as_str().expect("id").to_owned();
    assert!(token.starts_with("cnt_") && id.starts_with("tok_"));
    assert_eq!(ping_with_token(&gw, Some(&token)).await.0, 200);
    let (status, dup) = op
        .send(
            reqwest::Method::POST,
            "/ui/api/tokens",
            Some(json!({"name": "ci-bot"})),
        )
        .await;
    assert_eq!(status, 409, "{dup}");
    let (status, bad) = op
        .send(
            reqwest::Method::POST,
            "/ui/api/tokens",
            Some(json!({"name": "tok_x"})),
        )
        .await;
    assert_eq!(status, 400, "{bad}");
    let (status, renamed) = op
        .send(
            reqwest::Method::PATCH,
            &format!("/ui/api/tokens/{id}"),
            Some(json!({"name": "ci-bot-2"})),
        )
        .await;
    assert_eq!(
        (status, &renamed["name"]),
        (200, &json!("ci-bot-2")),
        "{renamed}"
    );
    let (_, list) = op.send(reqwest::Method::GET, "/ui/api/tokens", None).await;
    assert!(
        !list.to_string().contains(&token),
        "the list shows the token"
    );
    assert_eq!(list["tokens"][0]["name"], "ci-bot-2");
    let (status, _) = op
        .send(
            reqwest::Method::POST,
            &format!("/ui/api/tokens/{id}/revoke"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ping_with_token(&gw, Some(&token)).await.0 != 401 {
        assert!(
            Instant::now() < deadline,
            "a revoked token still opens /mcp"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (status, again) = op
        .send(
            reqwest::Method::POST,
            &format!("/ui/api/tokens/{id}/revoke"),
            None,
        )
        .await;
    assert_eq!(status, 404, "{again}");

    // Errors axum answers itself are in the API's shape too.
    let (status, v) = op
        .send(reqwest::Method::PUT, "/ui/api/tokens", Some(json!({})))
        .await;
    assert_eq!((status, v["error"].is_string()), (405, true), "{v}");
    let (status, v) = op
        .send(reqwest::Method::GET, "/ui/api/activity?limit=-1", None)
        .await;
    assert_eq!((status, v["error"].is_string()), (400, true), "{v}");
    // Just over the 2 MiB body limit, on a connection of its own.
    let big = reqwest::Client::new()
        .post(format!("{}/ui/api/tokens", gw.base()))
        .header("origin", gw.base())
        .header("content-type", "application/json")
        .header("cookie", op.cookie.clone().expect("cookie"))
        .body(json!({"name": "x".repeat(2 * 1024 * 1024 + 16 * 1024)}).to_string())
        .send()
        .await
        .expect("answered");
    assert_eq!(big.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let v: Value = big.json().await.expect("a JSON error");
    assert!(v["error"].is_string(), "{v}");

    // Signing out clears the cookie; an old cookie is still a valid
    // signature until it expires, so the server-side check is the expiry.
    let out = op
        .request(reqwest::Method::DELETE, "/ui/api/session")
        .send()
        .await
        .expect("answered");
    assert!(
        out.headers()["set-cookie"]
            .to_str()
            .expect("ascii")
            .contains("Max-Age=0")
    );

    let log = gw.stderr();
    assert!(!log.contains(SECRET), "the operator secret was logged");
    assert!(!log.contains(&token), "an issued token was logged");
    assert!(log.contains("operator issued an access token"), "{log}");
    gw.stop();
}

#[tokio::test]
async fn guessing_the_secret_is_limited_and_the_ui_can_be_turned_off() {
    let mut gw = Gateway::start(&config(""));
    let mut op = Operator::new(&gw);
    let mut statuses = Vec::new();
    for _ in 0..11 {
        statuses.push(op.sign_in("not-the-secret").await.0);
    }
    assert_eq!(statuses[..10], [401; 10]);
    assert_eq!(statuses[10], 429);
    let (status, v) = op.sign_in(SECRET).await;
    assert_eq!(
        status, 429,
        "the right secret waits out the window too: {v}"
    );
    gw.stop();

    // Off, on a gateway whose /mcp needs a token: /ui is simply not there
    // (not a 401 that says something is).
    let mut off = Gateway::start_raw(
        "[auth]\nbearer_tokens = [\"mcp-bearer-token-0123456789\"]\n[operator]\nenabled = false\n",
    );
    for path in ["/ui", "/ui/api/session", "/nothing-here"] {
        let r = reqwest::get(format!("{}{path}", off.base()))
            .await
            .expect("answered");
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
    }
    assert!(!off.data_dir().join("operator-secret").exists());
    off.stop();
}

#[tokio::test]
async fn without_a_configured_secret_one_is_generated_privately() {
    use std::os::unix::fs::PermissionsExt;
    let mut gw = Gateway::start(&demo_connector());
    let path = gw.data_dir().join("operator-secret");
    let secret = std::fs::read_to_string(&path).expect("generated");
    assert_eq!(
        std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777,
        0o600
    );
    // The line follows the ready line on stdout, so it may be a moment late.
    gw.wait_stderr("operator UI: ").await;
    assert!(
        gw.stderr().contains("operator-secret"),
        "the boot log says where"
    );
    assert!(
        !gw.stderr().contains(secret.trim()),
        "the secret was logged"
    );
    let mut op = Operator::new(&gw);
    assert_eq!(op.sign_in(secret.trim()).await.0, 200);
    gw.stop();
}

#[tokio::test]
async fn operators_answer_questions_and_manage_credentials_over_the_api() {
    let mut gw = Gateway::start(&config(keyed_api_connector()));
    let mut op = Operator::new(&gw);
    assert_eq!(op.sign_in(SECRET).await.0, 200);

    // Connections: both connectors, the keyed one's slot not set yet.
    let (status, c) = op
        .send(reqwest::Method::GET, "/ui/api/connections", None)
        .await;
    assert_eq!(status, 200, "{c}");
    let keyed = c["connectors"]
        .as_array()
        .expect("list")
        .iter()
        .find(|x| x["id"] == "keyed")
        .expect("keyed")
        .clone();
    assert_eq!(keyed["credential"]["fields"][0]["set"], false, "{keyed}");

    // Credentials: set, shown masked, readable by the CLI, refused for a
    // field the slot lacks, removed.
    let (status, v) = op
        .send(
            reqwest::Method::PUT,
            "/ui/api/credentials/keyed",
            Some(json!({"values": {"token": CREDENTIAL_VALUE}})),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["fields"][0]["set"], true);
    assert_eq!(v["fields"][0]["masked"], "••••3456");
    let (_, listed) = op
        .send(reqwest::Method::GET, "/ui/api/credentials", None)
        .await;
    assert!(!listed.to_string().contains(CREDENTIAL_VALUE));
    let (ok, out, err) = cli(&gw, &["credential", "list"]);
    assert!(ok, "{err}");
    assert!(out.contains("token: set ••••3456"), "{out}");
    let (status, v) = op
        .send(
            reqwest::Method::PUT,
            "/ui/api/credentials/keyed",
            Some(json!({"values": {"password": "x"}})),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    let (status, v) = op
        .send(
            reqwest::Method::PUT,
            "/ui/api/credentials/demo",
            Some(json!({"values": {"token": "x"}})),
        )
        .await;
    assert_eq!(status, 404, "{v}");
    // The test runs the connector's declared request; nothing listens
    // there, so it fails, saying why and nothing secret.
    let (status, v) = op
        .send(
            reqwest::Method::POST,
            "/ui/api/credentials/keyed/test",
            None,
        )
        .await;
    assert_eq!((status, &v["ok"]), (200, &json!(false)), "{v}");
    assert!(v["detail"].as_str().is_some_and(|d| !d.is_empty()), "{v}");
    assert!(!v.to_string().contains(CREDENTIAL_VALUE), "{v}");
    let (status, v) = op
        .send(reqwest::Method::POST, "/ui/api/credentials/demo/test", None)
        .await;
    assert_eq!(status, 404, "{v}");
    let (status, v) = op
        .send(reqwest::Method::DELETE, "/ui/api/credentials/keyed", None)
        .await;
    assert_eq!((status, &v["removed"]), (200, &json!(1)), "{v}");

    // Approvals: the question shows the reason and the arguments; the
    // first answer decides, and the call runs once.
    let waiting = create_note(&gw, "from-the-ui");
    let question = pending_question(&op).await;
    assert_eq!(question["reason"], REASON_MARKER);
    assert_eq!(question["args"]["body"], ARGS_MARKER);
    let id = question["id"].as_str().expect("id").to_owned();
    let (status, decided) = op
        .send(
            reqwest::Method::POST,
            &format!("/ui/api/approvals/{id}"),
            Some(json!({"decision": "approve"})),
        )
        .await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["status"], "allowed-once");
    assert_eq!(decided["decidedBy"], "ui:ops-alice");
    let (result, is_error) = waiting.await.expect("call");
    assert!(!is_error, "{result}");
    let (status, late) = op
        .send(
            reqwest::Method::POST,
            &format!("/ui/api/approvals/{id}"),
            Some(json!({"decision": "reject"})),
        )
        .await;
    assert_eq!(status, 409, "{late}");
    assert!(
        late["error"]
            .as_str()
            .expect("error")
            .contains("already decided")
    );
    let (_, history) = op
        .send(reqwest::Method::GET, "/ui/api/approvals?all=true", None)
        .await;
    assert_eq!(history["approvals"][0]["status"], "allowed-once");

    // Activity: the decision is there with who decided; filters and the
    // cursor page through it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let events = loop {
        let (status, v) = op
            .send(
                reqwest::Method::GET,
                "/ui/api/activity?connector=demo&limit=1",
                None,
            )
            .await;
        assert_eq!(status, 200, "{v}");
        let mut all = v["events"].as_array().expect("events").clone();
        let mut next = v["next"].as_str().map(str::to_owned);
        while let Some(cursor) = next {
            let (_, page) = op
                .send(
                    reqwest::Method::GET,
                    &format!("/ui/api/activity?connector=demo&limit=1&before={cursor}"),
                    None,
                )
                .await;
            all.extend(page["events"].as_array().expect("events").iter().cloned());
            next = page["next"].as_str().map(str::to_owned);
        }
        if all
            .iter()
            .any(|e| e["toolName"] == "create_note" && e["kind"].is_null())
        {
            break all;
        }
        assert!(
            Instant::now() < deadline,
            "the call was never recorded: {all:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let decided = events
        .iter()
        .find(|e| e["kind"] == "approval_decided")
        .expect("approval_decided");
    assert_eq!(
        decided["approval"]["decidedBy"], "ui:ops-alice",
        "{decided}"
    );
    let text = serde_json::to_string(&events).expect("json");
    assert!(!text.contains(REASON_MARKER) && !text.contains(ARGS_MARKER));
    let (status, v) = op
        .send(
            reqwest::Method::GET,
            "/ui/api/activity?outcome=nonsense",
            None,
        )
        .await;
    assert_eq!(status, 400, "{v}");
    gw.stop();
}

fn chromium() -> Option<String> {
    std::env::var("CONNECTA_CHROMIUM").ok().or_else(|| {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .map(str::to_owned)
    })
}

#[tokio::test]
async fn a_real_browser_signs_in_issues_a_token_sets_a_credential_and_approves_a_call() {
    let chromium = chromium().expect(
        "Chromium is needed for this test (scripts/test installs it; or set CONNECTA_CHROMIUM)",
    );
    let mut gw = Gateway::start(&config(keyed_api_connector()));
    gw.wait_catalogs().await;
    let mut op = Operator::new(&gw);
    assert_eq!(op.sign_in(SECRET).await.0, 200);
    // Arguments with a right-to-left override: shown escaped, so the
    // approver reads what was sent (`fdp.exe`), not what it pretends.
    let waiting = destructive_create_note(
        &gw,
        "from-the-browser",
        "invoice_\u{202e}fdp.exe",
        REASON_MARKER,
    );
    let question = pending_question(&op).await;
    let id = question["id"].as_str().expect("id").to_owned();

    let (status, out, err) = run(
        Command::new(node())
            .arg(peers().join("ui_browser.mjs"))
            .env("UI_URL", gw.base())
            .env("UI_SECRET", SECRET)
            .env("UI_APPROVAL_ID", &id)
            .env("UI_CREDENTIAL_CONNECTOR", "keyed")
            .env("CONNECTA_CHROMIUM", &chromium),
        Duration::from_secs(120),
    );
    assert!(
        status.success(),
        "the browser scenario failed:\n{err}\n{out}"
    );
    let seen: Value = serde_json::from_str(out.trim()).expect("one JSON object");

    assert!(
        seen["wrongSecretError"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{seen}"
    );
    let connectors = seen["connectors"].as_array().expect("connectors");
    let demo = connectors
        .iter()
        .find(|c| c["id"] == "demo")
        .expect("demo row");
    assert_eq!(demo["state"], "ready", "{seen}");
    assert_eq!(demo["tools"].to_string().trim_matches('"'), "7", "{seen}");
    assert!(connectors.iter().any(|c| c["id"] == "keyed"), "{seen}");

    // The token shown once opens /mcp; it is gone after a reload.
    let token = seen["issuedToken"].as_str().expect("token");
    assert!(token.starts_with("cnt_"), "{seen}");
    assert_eq!(seen["tokenVisibleAfterReload"], false);
    assert!(
        seen["tokenNames"]
            .as_array()
            .expect("names")
            .contains(&json!("from-browser-2")),
        "{seen}"
    );
    assert_eq!(ping_with_token(&gw, Some(token)).await.0, 200);

    // The credential is stored (the CLI reads it) and never shown whole.
    assert_eq!(seen["credentialValueVisible"], false);
    let masked = seen["credentialMasked"].as_str().expect("masked");
    assert!(
        masked.contains("3456") && !masked.contains(CREDENTIAL_VALUE),
        "{masked}"
    );
    let (ok, listed, err) = cli(&gw, &["credential", "list"]);
    assert!(ok, "{err}");
    assert!(listed.contains("token: set ••••3456"), "{listed}");

    // The approval: the browser saw the reason, approved, and the call ran.
    assert_eq!(seen["approvalReason"], REASON_MARKER, "{seen}");
    let args = seen["approvalArgs"].as_str().expect("args text");
    assert!(args.contains("invoice_\\u{202e}fdp.exe"), "{args}");
    assert!(
        !args.contains('\u{202e}'),
        "a bidi override reached the page: {args}"
    );
    assert_eq!(seen["approvalStatus"], "allowed-once", "{seen}");
    assert!(
        seen["approvalDecidedBy"]
            .as_str()
            .is_some_and(|s| s.contains("ui:browser-test")),
        "{seen}"
    );
    let (result, is_error) = waiting.await.expect("call");
    assert!(!is_error, "{result}");

    assert!(
        seen["activityRows"].as_u64().is_some_and(|n| n > 0),
        "{seen}"
    );
    assert_eq!(seen["unknownAsset"]["status"], 404);
    assert!(
        seen["unknownAsset"]["contentType"]
            .as_str()
            .is_some_and(|t| t.starts_with("text/plain")),
        "{seen}"
    );
    assert_eq!(seen["signedOutShowsSignIn"], true);
    assert_eq!(seen["pageErrors"], json!([]), "{seen}");
    gw.stop();
}
