//! A catalog persisted by an earlier run never overrides the config the
//! gateway was restarted with. An operator who adds an override that makes a
//! tool destructive, flips an api tool's `read_only`, or adds and removes api
//! tools, gets exactly that from the first request after the restart — not
//! after `catalog_ttl_secs`, when the stored catalog would have expired.

mod api_support;
mod support;

use serde_json::{Value, json};
use support::*;

/// An mcp connector (the reference server, started on first use) and an
/// api connector with `read_only` for `check` given by the caller, and one
/// more tool whose name the caller picks.
fn config(
    data_dir: &str,
    provider: &str,
    mcp_extra: &str,
    check_read_only: bool,
    other: &str,
) -> String {
    format!(
        r#"[server]
data_dir = {data_dir}

[[connector]]
id = "everything"
command = {node}
args = [{everything}, "stdio"]
start = "lazy"
{mcp_extra}

[[connector]]
id = "prov"
kind = "api"
base_url = "{provider}"
allow_private_network = true

[[connector.tool]]
name = "check"
description = "Answer with the given status"
read_only = {check_read_only}
path = "/status/{{code}}"
input_schema = {{ type = "object", properties = {{ code = {{ type = "integer" }} }}, required = ["code"] }}

[[connector.tool]]
name = "{other}"
description = "Answer with the given status, again"
read_only = true
path = "/status/{{code}}"
input_schema = {{ type = "object", properties = {{ code = {{ type = "integer" }} }}, required = ["code"] }}
"#,
        data_dir = q(data_dir),
        node = q(&node()),
        everything = q(&everything_js()),
    )
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("-")
}

/// The tools a browse of one connector lists, with their read-only flags.
async fn listed(c: &Client, connector: &str) -> Vec<(String, Value)> {
    let (page, err) = call(
        c,
        "search_tools",
        json!({"query": "", "connector": connector, "limit": 50}),
    )
    .await;
    assert!(!err, "{page}");
    page["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            (
                t["address"].as_str().unwrap_or("-").to_owned(),
                t["readOnly"].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_applies_the_edited_config_to_persisted_catalogs_at_once() {
    let provider = api_support::start_provider().await;
    let data = tempfile::tempdir().expect("data dir");
    let data_dir = data.path().display().to_string();

    // First run: echo is read-only, prov.check is read-only, prov.old exists.
    let mut gw = Gateway::start(&config(&data_dir, &provider.base_url(), "", true, "old"));
    let c = connect(&gw.url()).await;
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "everything.echo", "args": {"message": "hi"}}),
    )
    .await;
    assert!(!err, "{v}");
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "prov.check", "args": {"code": 200}}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(listed(&c, "prov").await.len(), 2);
    let _ = c.cancel().await;
    assert!(gw.stop().success(), "{}", gw.stderr());
    let requests = provider.seen.count();

    // The operator makes echo destructive, withdraws read-only from
    // prov.check, replaces prov.old by prov.new, and restarts at once.
    let gw = Gateway::start(&config(
        &data_dir,
        &provider.base_url(),
        "overrides.echo = { read_only = false, destructive = true }",
        false,
        "new",
    ));
    gw.wait_stderr("operator annotation override").await;
    let c = connect(&gw.url()).await;

    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "everything.echo", "args": {"message": "hi"}}),
    )
    .await;
    assert!(err, "echo ran under the override: {v}");
    assert_eq!(code(&v), "destructive_tool_requires_approval", "{v}");
    let (p, err) = program(
        &c,
        "async () => { try { await everything.echo({message: 'hi'}); return 'ran'; } catch (e) { return e.code; } }",
    )
    .await;
    assert!(!err, "{p}");
    assert_eq!(p["result"], "destructive_tool_requires_approval", "{p}");
    let echo = listed(&c, "everything")
        .await
        .into_iter()
        .find(|(a, _)| a == "everything.echo")
        .expect("echo is listed");
    assert_eq!(echo.1, false, "search shows the override: {echo:?}");

    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "prov.check", "args": {"code": 200}}),
    )
    .await;
    assert!(err, "prov.check ran though no longer read-only: {v}");
    assert_eq!(code(&v), "destructive_tool_requires_approval", "{v}");
    assert_eq!(provider.seen.count(), requests, "a request reached the API");
    let tools = listed(&c, "prov").await;
    assert!(
        tools.contains(&("prov.check".to_owned(), Value::Bool(false))),
        "{tools:?}"
    );
    let names: Vec<&str> = tools.iter().map(|(a, _)| a.as_str()).collect();
    assert!(
        names.contains(&"prov.new") && !names.contains(&"prov.old"),
        "{names:?}"
    );
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "prov.new", "args": {"code": 200}}),
    )
    .await;
    assert!(!err, "the added tool is served: {v}");
    let (v, err) = call(
        &c,
        "call_tool",
        json!({"address": "prov.old", "args": {"code": 200}}),
    )
    .await;
    assert!(err, "{v}");
    assert_eq!(code(&v), "unknown_tool", "{v}");
    let _ = c.cancel().await;
}
