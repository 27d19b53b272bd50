//! An `mcp` connector over streamable HTTP takes its credential from the
//! vault: a Python SDK server that answers 401 unless it gets exactly
//! `Authorization: Basic base64(user:secret)` sits behind the gateway, and
//! the operator sets `user` and `secret` through the CLI (stdin, one line per
//! field). Missing and rejected credentials are `auth_required` with the
//! operator recovery (E3); a replaced value takes effect on the next call,
//! without a restart; the secret appears in no output, log or database file.

mod api_support;
mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use api_support::cli;
use base64::Engine;
use serde_json::{Value, json};
use support::*;

const USER: &str = "ann";
const SECRET: &str = "py-SECRET-0d9c8b7a6f5e4d3c";

struct Downstream(Child);

impl Drop for Downstream {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn wait_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the Python server never listened"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn set(cfg: &str, stdin: &str, extra: &[&str]) -> (bool, String) {
    let mut args = vec!["credential", "set", "py", "--config", cfg];
    args.extend_from_slice(extra);
    let (status, out, err) = cli(&args, stdin, &[]);
    (status.success(), format!("{out}{err}"))
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("<none>")
}

#[tokio::test(flavor = "multi_thread")]
async fn e3_an_mcp_connector_over_http_frames_the_vault_credential_as_basic() {
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{SECRET}"))
    );
    let port = free_port();
    let _server = Downstream(
        Command::new(python())
            .arg(peers().join("py_server.py"))
            .args(["http", &port.to_string()])
            .env("REQUIRE_AUTHORIZATION", &expected)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python SDK server"),
    );
    wait_port(port).await;
    let mut gw = Gateway::start_with_env(
        &format!(
            r#"[auth]
open = true

[[connector]]
id = "py"
url = "http://127.0.0.1:{port}/mcp"

[connector.credential]
label = "Python peer login"
scheme = "basic"
"#
        ),
        &[("RUST_LOG", "trace")],
    );
    let cfg = gw.config_path.display().to_string();
    let client = connect(&gw.url()).await;
    let mut agent_saw = String::new();

    // Nothing set: auth_required naming the slot, and what to do about it.
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "py.weather_lookup", "args": {"city": "Oslo"}}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(code(&v), "auth_required", "{v}");
    assert_eq!(v["error"]["recovery"], "operator_config", "{v}");
    assert_eq!(v["error"]["label"], "Python peer login", "{v}");
    assert_eq!(v["error"]["fields"], json!(["user", "secret"]), "{v}");
    assert_eq!(v["error"]["nextAction"]["tool"], "authorize_connector");
    let (a, err) = call(&client, "authorize_connector", json!({"connector": "py"})).await;
    assert!(!err, "{a}");
    assert_eq!(a["credential"], "missing", "{a}");
    assert_eq!(a["how"]["cli"], "connecta credential set py", "{a}");

    // A value with a control character is refused at `set`, without echo.
    let (ok, out) = set(&cfg, &format!("{USER}\nbad\u{7}{SECRET}\n"), &[]);
    assert!(!ok, "{out}");
    assert!(out.contains("control characters"), "{out}");
    assert!(!out.contains(SECRET), "{out}");

    // Set through stdin (user, then secret): the next call carries it.
    let (ok, out) = set(&cfg, &format!("{USER}\n{SECRET}\n"), &[]);
    assert!(ok, "{out}");
    assert!(!out.contains(SECRET), "{out}");
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "py.weather_lookup", "args": {"city": "Oslo"}, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["city"], "Oslo", "{v}");
    agent_saw.push_str(&v.to_string());

    // A downstream that echoes the credential back: the agent and a
    // program get it redacted.
    let raw = call_raw(
        &client,
        "call_tool",
        json!({"address": "py.echo_authorization"}),
    )
    .await;
    let raw = serde_json::to_value(&raw).expect("a result serializes");
    assert!(
        raw["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Basic [redacted]")),
        "{raw}"
    );
    agent_saw.push_str(&raw.to_string());
    let (v, err) = call(
        &client,
        "execute_code",
        json!({"code": "async () => (await py.echo_authorization({})).authorization"}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["result"], "Basic [redacted]", "{v}");
    agent_saw.push_str(&v.to_string());

    let (status, out, err) = cli(&["credential", "test", "py", "--config", &cfg], "", &[]);
    assert!(status.success(), "{out}\n{err}");
    assert!(out.contains("py: ok (listed"), "{out}");

    // Replaced with a wrong secret: the live session is dropped and the
    // downstream's 401 becomes auth_required, with the slot named.
    let (ok, out) = set(&cfg, "wrong-secret-123456\n", &["--field", "secret"]);
    assert!(ok, "{out}");
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "py.weather_lookup", "args": {"city": "Lima"}}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(code(&v), "auth_required", "{v}");
    assert_eq!(v["error"]["label"], "Python peer login", "{v}");
    agent_saw.push_str(&v.to_string());

    // Put back: works again, still without a restart.
    let (ok, out) = set(&cfg, &format!("{SECRET}\n"), &["--field", "secret"]);
    assert!(ok, "{out}");
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "py.weather_lookup", "args": {"city": "Lima"}, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["city"], "Lima", "{v}");
    let (a, _) = call(&client, "authorize_connector", json!({"connector": "py"})).await;
    assert_eq!(a["status"], "configured", "{a}");
    agent_saw.push_str(&a.to_string());

    let (_, listed, _) = cli(&["credential", "list", "--config", &cfg], "", &[]);
    assert!(listed.contains("user: set"), "{listed}");
    assert!(listed.contains("secret: set ••••4d3c"), "{listed}");
    client.cancel().await.ok();
    gw.stop();

    let encoded = expected.trim_start_matches("Basic ");
    let db: Vec<u8> = ["connecta.db", "connecta.db-wal"]
        .iter()
        .filter_map(|n| std::fs::read(gw.data_dir().join(n)).ok())
        .flatten()
        .collect();
    assert!(!db.is_empty());
    for (what, text) in [
        ("what the agent saw", agent_saw.as_bytes()),
        ("credential list", listed.as_bytes()),
        ("the gateway's logs", gw.stderr().as_bytes()),
        ("the SQLite files", db.as_slice()),
    ] {
        for needle in [SECRET, encoded] {
            assert!(
                !text.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "a secret appears in {what}"
            );
        }
    }
}
