//! Operator-issued access tokens through the real binary: `connecta token
//! create` prints a token once, a real MCP client uses it at `/mcp` and is
//! named in the activity log, `token list` never shows it, `token revoke`
//! shuts it out of a running gateway, an expired token gets a clear
//! refusal, and bad input creates nothing.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

/// The static token of the second test's config, which the CLI reads too.
const STATIC: &str = "static-token-0123456789abcdef";

fn token_cli(gw: &Gateway, args: &[&str]) -> (bool, String, String) {
    let (status, out, err) = run(
        Command::new(bin())
            .arg("token")
            .args(args)
            .arg("--config")
            .arg(&gw.config_path)
            .env("CONNECTA_TEST_TOKEN", STATIC),
        Duration::from_secs(30),
    );
    (status.success(), out, err)
}

fn create(gw: &Gateway, args: &[&str]) -> String {
    let mut all = vec!["create"];
    all.extend_from_slice(args);
    let (ok, out, err) = token_cli(gw, &all);
    assert!(ok, "token create {args:?} failed: {err}");
    assert!(err.contains("shown once"), "{err}");
    let token = out.trim().to_owned();
    assert_eq!(out.lines().count(), 1, "stdout is the token alone: {out:?}");
    assert!(token.starts_with("cnt_"), "{token}");
    token
}

#[tokio::test(flavor = "multi_thread")]
async fn an_issued_token_opens_mcp_names_its_caller_and_stops_working_when_revoked() {
    let gw = Gateway::start_raw(&format!("[auth]\nopen = false\n\n{}", demo_connector()));
    gw.wait_catalogs().await;
    gw.wait_stderr("no access token is active").await;
    assert_eq!(ping_with_token(&gw, None).await.0, 401);

    let token = create(&gw, &["ci-bot", "--expires-in", "30d"]);
    assert_eq!(ping_with_token(&gw, Some(&token)).await.0, 200);

    // A real MCP client with the token; its call is recorded as the token's.
    let event = call_and_find_event(&gw, &token, "demo.list_notes").await;
    assert_eq!(event["actor"]["kind"], "token", "{event}");
    let actor_id = event["actor"]["id"].as_str().unwrap_or_default().to_owned();
    assert!(actor_id.starts_with("ci-bot/tok_"), "{event}");

    // The list shows the token's id, name and status, never the token.
    let (ok, out, _) = token_cli(&gw, &["list"]);
    assert!(ok);
    assert!(out.contains("ci-bot") && out.contains("active"), "{out}");
    let (ok, json_out, _) = token_cli(&gw, &["list", "--json"]);
    assert!(ok);
    let rows: Vec<Value> = json_out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "active");
    assert_eq!(
        format!("ci-bot/{}", rows[0]["id"].as_str().unwrap_or("")),
        actor_id
    );
    let secret_part = &token["cnt_".len()..];
    for text in [&out, &json_out, &gw.stderr()] {
        assert!(!text.contains(secret_part), "a token was printed: {text}");
    }

    // A live name cannot be issued twice.
    let (ok, out, err) = token_cli(&gw, &["create", "ci-bot"]);
    assert!(!ok && out.is_empty(), "{out}");
    assert!(err.contains("not revoked"), "{err}");

    // Revoked, it is refused by the running gateway within seconds, and says why.
    let (ok, out, _) = token_cli(&gw, &["revoke", "ci-bot"]);
    assert!(ok && out.contains("revoked token `ci-bot`"), "{out}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let (challenge, body) = loop {
        let (status, challenge, body) = ping_with_token(&gw, Some(&token)).await;
        if status == 401 {
            break (challenge, body);
        }
        assert!(Instant::now() < deadline, "a revoked token still works");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(challenge.contains("revoked"), "{challenge}");
    assert!(body.contains("revoked"), "{body}");
    let (ok, _, err) = token_cli(&gw, &["revoke", "ci-bot"]);
    assert!(!ok && err.contains("ci-bot"), "{err}");
    let (_, out, _) = token_cli(&gw, &["list"]);
    assert!(out.contains("revoked"), "{out}");

    // The name is free again, for a new token and a different caller.
    let second = create(&gw, &["ci-bot"]);
    assert_ne!(second, token);
    assert_eq!(ping_with_token(&gw, Some(&second)).await.0, 200);
    assert_eq!(ping_with_token(&gw, Some(&token)).await.0, 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_token_is_refused_clearly_and_bad_input_creates_nothing() {
    let config = format!(
        "[auth]\nbearer_tokens = [\"${{CONNECTA_TEST_TOKEN}}\"]\n\n{}",
        demo_connector()
    );
    let gw = Gateway::start_with_env(&config, &[("CONNECTA_TEST_TOKEN", STATIC)]);
    assert!(!gw.stderr().contains("no access token is active"));

    let short = create(&gw, &["short-lived", "--expires-in", "1s"]);
    let long = create(&gw, &["long-lived", "--expires-in", "1h"]);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let (status, challenge, body) = ping_with_token(&gw, Some(&short)).await;
    assert_eq!(status, 401, "{body}");
    assert!(challenge.contains("expired"), "{challenge}");
    assert!(body.contains("expired"), "{body}");
    // Static tokens and issued ones work side by side.
    assert_eq!(ping_with_token(&gw, Some(&long)).await.0, 200);
    assert_eq!(ping_with_token(&gw, Some(STATIC)).await.0, 200);
    // An unknown token of the issued shape is just not valid.
    let (status, challenge, _) =
        ping_with_token(&gw, Some("cnt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    let (_, out, _) = token_cli(&gw, &["list"]);
    assert!(out.contains("expired"), "{out}");

    for (args, says) in [
        (vec!["create", "two words"], "not valid"),
        (
            vec!["create", "ok-name", "--expires-in", "3w"],
            "--expires-in",
        ),
        (
            vec!["create", "ok-name", "--expires-in", "0d"],
            "--expires-in",
        ),
        (vec!["revoke", "nobody"], "nobody"),
    ] {
        let (ok, out, err) = token_cli(&gw, &args);
        assert!(!ok, "{args:?} succeeded: {out}");
        assert!(out.is_empty(), "{args:?} printed {out:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (_, out, _) = token_cli(&gw, &["list", "--json"]);
    assert_eq!(out.lines().count(), 2, "bad input created a token: {out}");
}
