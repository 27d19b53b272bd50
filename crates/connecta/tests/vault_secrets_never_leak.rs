//! A secret set through the CLI is used on requests and appears nowhere
//! else: not in trace-level logs, activity, errors (even when the provider
//! quotes it back), results (an API echoing its request headers), `credential
//! list` output, or the raw SQLite database and WAL files. Key rotation keeps
//! values readable under the new key and unreadable under the old one.
//!
//! Programs (S6: every call a program makes goes through the same credential
//! containment) see the echo redacted too, in their results, their logs and
//! the typed errors they catch.

mod api_support;
mod support;

use std::path::Path;

use api_support::*;
use serde_json::json;
use support::*;

fn assert_absent(what: &str, haystack: &[u8], secret: &str) {
    assert!(
        !haystack
            .windows(secret.len())
            .any(|w| w == secret.as_bytes()),
        "the secret appears in {what}"
    );
}

fn db_bytes(data: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for name in ["connecta.db", "connecta.db-wal"] {
        if let Ok(b) = std::fs::read(data.join(name)) {
            all.extend(b);
        }
    }
    assert!(!all.is_empty(), "the database files exist");
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_a_secret_set_through_the_cli_is_used_and_never_leaks() {
    let provider = start_provider().await;
    let mut gw = Gateway::start_with_env(
        &format!(
            "[auth]\nopen = true\n{}{}",
            connector_toml("wx", &provider.base_url(), true),
            query_key_connector_toml("kq", &provider.base_url())
        ),
        &[("RUST_LOG", "trace")],
    );
    gw.wait_catalogs().await;
    let cfg = gw.config_path.display().to_string();
    set_credential(&gw.config_path, "wx", GOOD_TOKEN, &[]);
    set_credential(&gw.config_path, "kq", GOOD_KEY, &[]);
    let client = connect(&gw.url()).await;

    let mut agent_saw = String::new();
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "wx.get_forecast", "args": {"city": "Lima"}, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{v}");
    agent_saw.push_str(&v.to_string());
    assert!(
        provider
            .seen
            .auth()
            .contains(&format!("Bearer {GOOD_TOKEN}")),
        "the secret was used on the request"
    );
    // A careless API echoes the credential in a result and in an error.
    for (tool, args) in [
        ("wx.request_headers", json!({})),
        ("wx.echo_error", json!({})),
        ("wx.status", json!({"code": 401})),
    ] {
        let raw = call_raw(&client, "call_tool", json!({"address": tool, "args": args})).await;
        let text = serde_json::to_string(&raw).expect("serializes");
        agent_saw.push_str(&text);
    }
    let (a, _) = call(&client, "authorize_connector", json!({"connector": "wx"})).await;
    agent_saw.push_str(&a.to_string());
    // A key in the query string, echoed back in the request target: the
    // encoded form is redacted too. An argument cannot take its place.
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "kq.whoami", "args": {}, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "the key was accepted: {v}");
    assert_eq!(v["target"], "/v1/keyed?api_key=[redacted]", "{v}");
    agent_saw.push_str(&v.to_string());
    let seen_before = provider.seen.count();
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "kq.whoami", "args": {"api_key": "attacker"}}),
    )
    .await;
    assert!(err, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("would shadow the credential"),
        "{v}"
    );
    assert_eq!(provider.seen.count(), seen_before, "nothing was sent");
    agent_saw.push_str(&v.to_string());
    // A program calling the same careless API: result, logs, caught error.
    let (p, err) = program(
        &client,
        r#"async () => {
            const h = await wx.request_headers({});
            console.log("seen", JSON.stringify(h));
            let caught = null;
            try { await wx.echo_error({}); } catch (e) { caught = {code: e.code, message: e.message}; }
            return {auth: h.authorization, caught};
        }"#,
    )
    .await;
    assert!(!err, "{p}");
    assert_eq!(p["result"]["auth"], "Bearer [redacted]", "{p}");
    assert_eq!(
        p["result"]["caught"]["code"], "connector_call_failed",
        "{p}"
    );
    agent_saw.push_str(&p.to_string());
    assert!(
        agent_saw.contains("[redacted]"),
        "the echoes were redacted: {agent_saw}"
    );
    for secret in [GOOD_TOKEN, GOOD_KEY, GOOD_KEY_ENCODED] {
        assert_absent("what the agent saw", agent_saw.as_bytes(), secret);
    }

    // `credential list`: configured, with a masked suffix only.
    let (status, out, err) = cli(&["credential", "list", "--config", &cfg], "", &[]);
    assert!(status.success(), "{out}\n{err}");
    assert!(out.contains("Provider API token"), "{out}");
    assert!(out.contains("secret: set ••••48aa"), "{out}");
    assert!(out.contains("Provider API key"), "{out}");
    for secret in [GOOD_TOKEN, GOOD_KEY] {
        assert_absent("credential list", format!("{out}{err}").as_bytes(), secret);
    }

    // Activity (through the CLI, as an operator reads it).
    gw.stop();
    let (status, out, err) = cli(
        &["activity", "tail", "--json", "-n", "100", "--config", &cfg],
        "",
        &[],
    );
    assert!(status.success(), "{err}");
    assert!(out.contains("wx"), "events were recorded: {out}");
    for secret in [GOOD_TOKEN, GOOD_KEY, GOOD_KEY_ENCODED] {
        assert_absent("activity", out.as_bytes(), secret);
    }

    // Trace-level logs of the whole run.
    let logs = gw.stderr();
    assert!(logs.contains("TRACE"), "logs were captured at trace level");
    let db = db_bytes(&gw.data_dir());
    for secret in [GOOD_TOKEN, GOOD_KEY, GOOD_KEY_ENCODED] {
        assert_absent("the gateway's logs", logs.as_bytes(), secret);
        // The raw database and its WAL.
        assert_absent("the SQLite files", &db, secret);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rotation_keeps_values_readable_under_the_new_key_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg_path = dir.path().join("connecta.toml");
    std::fs::write(
        &cfg_path,
        format!(
            "[auth]\nopen = true\n{}",
            connector_toml("wx", "http://127.0.0.1:9/v1", true)
        ),
    )
    .expect("config");
    let cfg = cfg_path.display().to_string();

    // Key file: created 0600 by the first `set`, rotated in place.
    set_credential(&cfg_path, "wx", GOOD_TOKEN, &[]);
    let key_file = dir.path().join("data/vault.key");
    let old_key = std::fs::read_to_string(&key_file).expect("key file created");
    let old_key = old_key.trim();
    let (status, out, err) = cli(&["vault", "rotate-key", "--config", &cfg], "", &[]);
    assert!(status.success(), "{out}\n{err}");
    assert!(out.contains("re-encrypted 1 value(s)"), "{out}");
    assert_absent(
        "rotate-key output",
        format!("{out}{err}").as_bytes(),
        GOOD_TOKEN,
    );
    let new_key = std::fs::read_to_string(&key_file).expect("new key file");
    assert_ne!(new_key.trim(), old_key);
    let (_, out, _) = cli(&["credential", "list", "--config", &cfg], "", &[]);
    assert!(
        out.contains("secret: set ••••48aa"),
        "readable after rotation: {out}"
    );
    let (_, out, _) = cli(
        &["credential", "list", "--config", &cfg],
        "",
        &[("CONNECTA_VAULT_KEY", old_key)],
    );
    assert!(
        out.contains("unreadable") && out.contains("different key"),
        "unreadable with the old key: {out}"
    );
    // Setting a value under the wrong key is refused, not mixed in.
    let (status, _, err) = cli(
        &["credential", "set", "wx", "--config", &cfg],
        "another-value-123456\n",
        &[("CONNECTA_VAULT_KEY", old_key)],
    );
    assert!(!status.success());
    assert!(err.contains("different key"), "{err}");
    assert_absent(
        "the SQLite files",
        &db_bytes(&dir.path().join("data")),
        GOOD_TOKEN,
    );

    // Environment key: rotation prints the new key once.
    let env_dir = tempfile::tempdir().expect("tempdir");
    let env_cfg = env_dir.path().join("connecta.toml");
    std::fs::copy(&cfg_path, &env_cfg).expect("copy config");
    let env_cfg_s = env_cfg.display().to_string();
    let first = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    set_credential(&env_cfg, "wx", GOOD_TOKEN, &[("CONNECTA_VAULT_KEY", first)]);
    assert!(
        !env_dir.path().join("data/vault.key").exists(),
        "no key file when the key comes from the environment"
    );
    let (status, out, err) = cli(
        &["vault", "rotate-key", "--config", &env_cfg_s],
        "",
        &[("CONNECTA_VAULT_KEY", first)],
    );
    assert!(status.success(), "{err}");
    assert!(err.contains("CONNECTA_VAULT_KEY"), "{err}");
    let printed = out.trim().to_owned();
    assert_eq!(printed.len(), 44, "one base64 key: {out}");
    let (_, out, _) = cli(
        &["credential", "list", "--config", &env_cfg_s],
        "",
        &[("CONNECTA_VAULT_KEY", &printed)],
    );
    assert!(out.contains("secret: set ••••48aa"), "{out}");
    let (_, out, _) = cli(
        &["credential", "list", "--config", &env_cfg_s],
        "",
        &[("CONNECTA_VAULT_KEY", first)],
    );
    assert!(out.contains("different key"), "{out}");
}

/// A downstream (or a proxy before it) that answers with a page quoting the
/// Authorization it was sent: the vault value and a config header secret
/// are redacted in `/health` (open to anyone), the operator's view of it,
/// and every log line, the MCP library's own included.
#[tokio::test]
async fn a_downstream_quoting_the_credential_in_a_failure_leaks_it_nowhere() {
    const VAULT_VALUE: &str = "VaultMcpSecret-0123456789abcdef";
    const HEADER_SECRET: &str = "HeaderSecretFromEnv-ZZZ-987654";
    let peer = HttpPeer::start("http_401_server.py", &["--echo"]).await;
    let mut gw = Gateway::start_with_env(
        &format!(
            "[auth]\nopen = true\n\n[[connector]]\nid = \"vaultmcp\"\nurl = {url}\n[connector.credential]\nlabel = \"token\"\n\n[[connector]]\nid = \"hdrmcp\"\nurl = {url}\nheaders = {{ Authorization = \"Bearer ${{HDR_SECRET}}\" }}\n",
            url = q(&peer.url())
        ),
        &[("HDR_SECRET", HEADER_SECRET), ("RUST_LOG", "trace")],
    );
    set_credential(
        &gw.config_path,
        "vaultmcp",
        VAULT_VALUE,
        &[("HDR_SECRET", HEADER_SECRET)],
    );
    let client = connect(&gw.url()).await;
    for address in ["vaultmcp.anything", "hdrmcp.anything"] {
        let raw = call_raw(
            &client,
            "call_tool",
            json!({"address": address, "args": {}}),
        )
        .await;
        let text = serde_json::to_string(&raw).expect("serializes");
        assert_absent("an error the agent saw", text.as_bytes(), VAULT_VALUE);
        assert_absent("an error the agent saw", text.as_bytes(), HEADER_SECRET);
    }
    let health = gw
        .wait_health("both connectors failed", |h| {
            h["connectors"]
                .as_array()
                .is_some_and(|cs| cs.iter().all(|c| c["lastError"].is_string()))
        })
        .await
        .to_string();
    assert!(health.contains("auth=Bearer [redacted]"), "{health}");
    assert_absent("/health", health.as_bytes(), VAULT_VALUE);
    assert_absent("/health", health.as_bytes(), HEADER_SECRET);
    gw.stop();
    let log = gw.stderr();
    assert!(log.contains("[redacted]"), "the failure was logged");
    assert_absent("the log", log.as_bytes(), VAULT_VALUE);
    assert_absent("the log", log.as_bytes(), HEADER_SECRET);
}
