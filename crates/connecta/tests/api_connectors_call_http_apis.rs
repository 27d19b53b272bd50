//! `api` connectors end to end, through the real binary, against a small
//! provider API on loopback (the connector opts in with
//! `allow_private_network = true`): the credential set through the CLI is
//! applied last; missing and rejected credentials recover through
//! `authorize_connector`; statuses map to the taxonomy; traversal, redirects,
//! oversized bodies and schema-invalid arguments are refused before (or
//! instead of) reaching the provider.

mod api_support;
mod support;

use api_support::*;
use serde_json::{Value, json};
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn e3_api_tools_use_the_vault_credential_recover_auth_and_map_every_answer() {
    let provider = start_provider().await;
    let gw = Gateway::start(&connector_toml("wx", &provider.base_url(), true));
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;

    // The catalog comes from config, classification included.
    let (found, _) = call(
        &client,
        "search_tools",
        json!({"query": "forecast", "connector": "wx", "safety": "readOnly"}),
    )
    .await;
    assert!(found.to_string().contains("wx.get_forecast"), "{found}");

    // No credential yet: auth_required with the operator recovery, and
    // authorize_connector says what to set and how. The provider is not hit.
    let (v, err) = call_tool(&client, "wx.get_forecast", json!({"city": "Paris"})).await;
    assert!(err);
    assert_eq!(code(&v), "auth_required", "{v}");
    assert_eq!(v["error"]["recovery"], "operator_config");
    assert_eq!(v["error"]["label"], "Provider API token");
    assert_eq!(v["error"]["fields"], json!(["secret"]));
    assert_eq!(
        v["error"]["nextAction"],
        json!({"tool": "authorize_connector", "arguments": {"connector": "wx"}})
    );
    assert_eq!(provider.seen.count(), 0);
    // E3: a program meets the same envelope, typed, and cannot recover it.
    let (p, err) = program(
        &client,
        "async () => connecta.call('wx.get_forecast', {city: 'Paris'})",
    )
    .await;
    assert!(err, "{p}");
    assert_eq!(p["error"]["code"], "auth_required", "{p}");
    assert_eq!(p["error"]["recovery"], "operator_config", "{p}");
    assert_eq!(p["error"]["label"], "Provider API token", "{p}");
    assert!(p["error"]["retry"].is_string(), "{p}");
    assert_eq!(provider.seen.count(), 0);
    let (a, err) = call(&client, "authorize_connector", json!({"connector": "wx"})).await;
    assert!(!err, "{a}");
    assert_eq!(a["status"], "operator_action_required");
    assert_eq!(a["recovery"], "operator_config");
    assert_eq!(a["credential"], "missing");
    assert_eq!(a["how"]["cli"], "connecta credential set wx");
    assert_eq!(a["help"], "Create a token in the provider's settings page.");

    // Set through the CLI (stdin) while the gateway runs: the next call uses it.
    set_credential(&gw.config_path, "wx", GOOD_TOKEN, &[]);
    let (a, _) = call(&client, "authorize_connector", json!({"connector": "wx"})).await;
    assert_eq!(a["status"], "configured", "{a}");
    let (v, err) = call_tool(
        &client,
        "wx.get_forecast",
        json!({"city": "Paris", "days": 3}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["city"], "Paris", "projected to /data: {v}");
    assert_eq!(v["days"], 3, "query argument: {v}");
    assert!(v.get("meta").is_none(), "projection applied: {v}");
    assert_eq!(
        provider.seen.auth().last().map(String::as_str),
        Some(format!("Bearer {GOOD_TOKEN}").as_str())
    );

    // The whole MCP result: structured content plus the same compact JSON text.
    let raw = call_raw(
        &client,
        "call_tool",
        json!({"address": "wx.forecast_fields", "args": {"city": "Oslo"}}),
    )
    .await;
    let structured = raw.structured_content.clone().expect("structured");
    assert_eq!(
        structured,
        json!({"data": {"city": "Oslo", "forecast": [{"temp": 21.5}]}})
    );
    let text = raw.content[0].as_text().expect("text").text.clone();
    assert_eq!(
        serde_json::from_str::<Value>(&text).expect("json"),
        structured
    );

    // A `/` in a value is data (encoded), never a path separator.
    let (v, err) = call_tool(&client, "wx.get_forecast", json!({"city": "a/b"})).await;
    assert!(!err, "{v}");
    assert_eq!(v["city"], "a/b");
    assert!(
        provider
            .seen
            .targets()
            .iter()
            .any(|t| t == "/v1/forecast/a%2Fb"),
        "{:?}",
        provider.seen.targets()
    );

    // Path traversal, plain and encoded: refused before any request.
    let before = provider.seen.count();
    for evil in [
        "../admin/x",
        "..",
        "%2e%2e",
        "..%2fadmin%2fx",
        "%252e%252e%252fadmin",
    ] {
        let (v, err) = call_tool(&client, "wx.get_forecast", json!({"city": evil})).await;
        assert!(err, "{evil}: {v}");
        assert_eq!(code(&v), "invalid_args", "{evil}: {v}");
        if evil.len() > 2 {
            // (`..` itself is part of the refusal's fixed wording.)
            assert!(!v.to_string().contains(evil), "value-free: {v}");
        }
    }
    assert_eq!(
        provider.seen.count(),
        before,
        "nothing reached the provider"
    );
    assert!(!provider.seen.targets().iter().any(|t| t.contains("admin")));

    // Schema-invalid arguments: bounded, value-free findings; no request.
    let (v, err) = call_tool(
        &client,
        "wx.get_forecast",
        json!({"city": "Rome", "days": 99, "sneaky": "SNEAKY-VALUE"}),
    )
    .await;
    assert!(err);
    assert_eq!(code(&v), "invalid_args", "{v}");
    let findings = v["error"]["findings"].to_string();
    assert!(findings.contains("/days"), "{findings}");
    assert!(findings.contains("maximum"), "{findings}");
    assert!(findings.contains("sneaky"), "{findings}");
    assert!(!v.to_string().contains("SNEAKY-VALUE"), "{v}");
    assert!(!v.to_string().contains("99"), "{v}");
    assert_eq!(provider.seen.count(), before);

    // Header arguments and static headers arrive; the echoed credential and
    // the static header's value (config header values are secrets) are
    // redacted from the result.
    let (v, err) = call_tool(&client, "wx.request_headers", json!({"trace": "t-42"})).await;
    assert!(!err, "{v}");
    assert_eq!(v["x-trace-id"], "t-42");
    assert_eq!(v["x-client"], "[redacted]");
    assert_eq!(v["authorization"], "Bearer [redacted]");
    assert!(!v.to_string().contains(GOOD_TOKEN));
    let (v, err) = call_tool(
        &client,
        "wx.request_headers",
        json!({"trace": "bad\r\nX-Injected: 1"}),
    )
    .await;
    assert!(err);
    assert_eq!(code(&v), "invalid_args", "{v}");

    // Statuses → the taxonomy.
    let (v, _) = call_tool(&client, "wx.status", json!({"code": 404})).await;
    assert_eq!(code(&v), "not_found", "{v}");
    let (v, _) = call_tool(&client, "wx.status", json!({"code": 429})).await;
    assert_eq!(code(&v), "rate_limited", "{v}");
    assert_eq!(v["error"]["retryAfterMs"], 1000);
    assert_eq!(v["error"]["retryable"], true);
    let (v, _) = call_tool(&client, "wx.status", json!({"code": 503})).await;
    assert_eq!(code(&v), "unavailable", "{v}");
    assert_eq!(v["error"]["retryAfterMs"], 1000);
    let (v, _) = call_tool(&client, "wx.status", json!({"code": 403})).await;
    assert_eq!(code(&v), "auth_required", "{v}");
    assert_eq!(v["error"]["recovery"], "operator_config");
    assert_eq!(v["error"]["label"], "Provider API token");
    let (v, _) = call_tool(&client, "wx.status", json!({"code": 422})).await;
    assert_eq!(code(&v), "connector_call_failed", "{v}");
    assert_eq!(v["error"]["retryable"], false);

    // Redirects are never followed.
    let targets_before = provider.seen.targets().len();
    let (v, _) = call_tool(&client, "wx.redirect", json!({})).await;
    assert_eq!(code(&v), "connector_call_failed", "{v}");
    assert_eq!(v["error"]["refusal"], "redirect");
    let after = provider.seen.targets();
    assert_eq!(after.len(), targets_before + 1);
    assert!(!after.iter().any(|t| t.contains("redirected")), "{after:?}");

    // Size cap: a declared length over the cap, and a streamed body over it.
    let (v, _) = call_tool(&client, "wx.huge_declared", json!({})).await;
    assert_eq!(code(&v), "result_too_large", "{v}");
    assert_eq!(v["error"]["limitBytes"], 1_000_000);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("declared"),
        "{v}"
    );
    let (v, _) = call_tool(&client, "wx.huge_chunked", json!({})).await;
    assert_eq!(code(&v), "result_too_large", "{v}");

    // Request caps: a body over max_request_bytes and an overlong URL are
    // refused before anything is sent, naming sizes only.
    let before = provider.seen.count();
    let long = "x".repeat(9000);
    let (v, err) = call(
        &client,
        "call_destructive_tool",
        json!({"address": "wx.create_item", "args": {"name": long}}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(code(&v), "invalid_args", "{v}");
    assert_eq!(v["error"]["limitBytes"], 4096, "{v}");
    let (v, err) = call_tool(&client, "wx.get_forecast", json!({"city": long})).await;
    assert!(err, "{v}");
    assert_eq!(code(&v), "invalid_args", "{v}");
    assert!(!v.to_string().contains("xxxxxxxx"), "value-free: {v}");
    assert_eq!(provider.seen.count(), before, "nothing was sent");

    // Writes cross call_destructive_tool; the JSON body carries the arguments.
    let (v, err) = call_tool(&client, "wx.create_item", json!({"name": "n1"})).await;
    assert!(err);
    assert_eq!(code(&v), "destructive_tool_requires_approval", "{v}");
    let (v, err) = call(
        &client,
        "call_destructive_tool",
        json!({"address": "wx.create_item", "args": {"name": "n1"}, "resultMode": "value"}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["created"], json!({"name": "n1"}));

    // A rejected credential (replaced by a wrong one): auth_required again.
    set_credential(&gw.config_path, "wx", "wrong-token-0000000000", &[]);
    let (v, _) = call_tool(&client, "wx.get_forecast", json!({"city": "Paris"})).await;
    assert_eq!(code(&v), "auth_required", "{v}");
    assert_eq!(v["error"]["nextAction"]["tool"], "authorize_connector");

    // `credential test` runs the declared test request through the same fetch.
    let cfg = gw.config_path.display().to_string();
    let (status, out, _) = cli(&["credential", "test", "wx", "--config", &cfg], "", &[]);
    assert!(!status.success(), "a wrong token fails the test: {out}");
    assert!(out.contains("auth_required"), "{out}");
    set_credential(&gw.config_path, "wx", GOOD_TOKEN, &[]);
    let (status, out, err) = cli(&["credential", "test", "wx", "--config", &cfg], "", &[]);
    assert!(status.success(), "{out}\n{err}");
    assert!(out.contains("wx: ok"), "{out}");

    // `rm` empties the slot again.
    let (status, out, _) = cli(&["credential", "rm", "wx", "--config", &cfg], "", &[]);
    assert!(status.success(), "{out}");
    let (v, _) = call_tool(&client, "wx.get_forecast", json!({"city": "Paris"})).await;
    assert_eq!(code(&v), "auth_required", "{v}");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn configs_that_would_shadow_the_credential_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("shadow.toml");
    let shadowing = connector_toml("wx", "http://127.0.0.1:1/v1", true).replace(
        "headers = { X-Client = \"connecta-tests\" }",
        "headers = { authorization = \"Bearer from-config\" }",
    );
    std::fs::write(&path, format!("[auth]\nopen = true\n{shadowing}")).expect("write");
    let (status, out, err) = cli(&["check", "--config", &path.display().to_string()], "", &[]);
    assert!(!status.success(), "{out}");
    assert!(err.contains("would shadow the credential"), "{err}");

    // A schema that does not compile stops check (and serve) with the tool named.
    let broken = connector_toml("wx", "http://127.0.0.1:1/v1", true).replace(
        "input_schema = { type = \"object\" }\n\n[[connector.tool]]\nname = \"status\"",
        "input_schema = { type = \"object\", properties = { a = { type = \"no-such-type\" } } }\n\n[[connector.tool]]\nname = \"status\"",
    );
    assert_ne!(broken, connector_toml("wx", "http://127.0.0.1:1/v1", true));
    std::fs::write(&path, format!("[auth]\nopen = true\n{broken}")).expect("write");
    let (status, out, err) = cli(&["check", "--config", &path.display().to_string()], "", &[]);
    assert!(!status.success(), "{out}");
    assert!(
        err.contains("tool \"echo_error\": input_schema does not compile"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_examples_pass_check() {
    let root = repo_root().join("examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&root).expect("examples/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let (status, out, err) = cli(
                &["check", "--config", &path.display().to_string()],
                "",
                &[("EXAMPLE_PROVIDER_URL", "http://127.0.0.1:9/v1")],
            );
            assert!(status.success(), "{}: {out}\n{err}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 2, "both examples are checked");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_example_wraps_the_stand_in_provider() {
    let provider = start_provider().await;
    let example = std::fs::read_to_string(repo_root().join("examples/local-weather.toml"))
        .expect("examples/local-weather.toml");
    let url = provider.base_url();
    let gw = Gateway::start_with_env(&example, &[("EXAMPLE_PROVIDER_URL", &url)]);
    gw.wait_catalogs().await;
    set_credential(
        &gw.config_path,
        "weather",
        GOOD_TOKEN,
        &[("EXAMPLE_PROVIDER_URL", &url)],
    );
    let client = connect(&gw.url()).await;
    let (v, err) = call_tool(&client, "weather.temperatures", json!({"city": "Kyiv"})).await;
    assert!(!err, "{v}");
    assert_eq!(
        v,
        json!({"data": {"city": "Kyiv", "forecast": [{"temp": 21.5}]}})
    );
    let (status, out, err) = cli(
        &[
            "credential",
            "test",
            "weather",
            "--config",
            &gw.config_path.display().to_string(),
        ],
        "",
        &[("EXAMPLE_PROVIDER_URL", &url)],
    );
    assert!(status.success(), "{out}\n{err}");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn credential_test_redacts_config_secrets_the_api_quotes_back() {
    const STATIC: &str = "static-SECRET-9f8e7d6c";
    let provider = start_provider().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let toml = connector_toml("wx", &provider.base_url(), true)
        .replace(
            "tool = \"get_forecast\"\nargs = { city = \"Paris\" }",
            "tool = \"echo_error\"\nargs = {}",
        )
        .replace(
            "\n[connector.credential]",
            "headers = { X-Static = \"${STATIC_HEADER}\" }\n\n[connector.credential]",
        );
    assert!(toml.contains("echo_error\"\nargs = {}"), "{toml}");
    std::fs::write(&path, format!("[auth]\nopen = true\n{toml}")).expect("write");
    let env = [("STATIC_HEADER", STATIC)];
    set_credential(&path, "wx", GOOD_TOKEN, &env);
    let cfg = path.display().to_string();
    let (status, out, err) = cli(&["credential", "test", "wx", "--config", &cfg], "", &env);
    assert!(!status.success(), "{out}\n{err}");
    assert!(
        out.contains("you sent Authorization: Bearer [redacted] and X-Static: [redacted]"),
        "{out}"
    );
    for secret in [STATIC, GOOD_TOKEN] {
        assert!(
            !out.contains(secret) && !err.contains(secret),
            "{out}\n{err}"
        );
    }
}
