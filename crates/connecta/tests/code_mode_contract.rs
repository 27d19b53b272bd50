//! The code-mode guest contract, clause by clause, through the real MCP
//! endpoint of the real binary, against real downstream servers (the built-in
//! demo server and a Python SDK server). Each test's name carries the clause
//! ids it proves.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

async fn gateway() -> (Gateway, Client) {
    let gw = Gateway::start(&format!(
        "{}\n{}",
        demo_connector(),
        python_connector("py-server")
    ));
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    (gw, client)
}

/// Poll the activity log until `pred` holds.
async fn events_until(gw: &Gateway, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events = activity(gw);
        if pred(&events) {
            return events;
        }
        assert!(
            Instant::now() < deadline,
            "activity never showed {what}: {events:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn p1_an_async_arrow_is_evaluated_once_and_its_value_returned() {
    let (_gw, c) = gateway().await;
    assert_eq!(program_ok(&c, "async () => 6 * 7").await, json!(42));
    assert_eq!(
        program_ok(
            &c,
            "async () => { const x = [1, 2, 3]; return x.map(n => n * 2); }"
        )
        .await,
        json!([2, 4, 6])
    );
    // Courtesies: a fenced program and a bare body are accepted.
    assert_eq!(
        program_ok(&c, "```js\nasync () => 'fenced'\n```").await,
        json!("fenced")
    );
    assert_eq!(program_ok(&c, "return 1 + 1;").await, json!(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn p2_x5_no_network_files_environment_timers_or_imports() {
    let (_gw, c) = gateway().await;
    let v = program_ok(
        &c,
        "async () => ({fetch: typeof fetch, process: typeof process, require: typeof require, setTimeout: typeof setTimeout, \
          WebSocket: typeof WebSocket, std: typeof std, os: typeof os, XMLHttpRequest: typeof XMLHttpRequest})",
    )
    .await;
    for (k, t) in v.as_object().expect("object") {
        assert_eq!(t, "undefined", "{k} is reachable");
    }
    let e = program_fails(
        &c,
        "async () => { const m = await import('fs'); return 1; }",
    )
    .await;
    assert_eq!(e["code"], "execution_failed", "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn p3_x9_values_cross_as_json_and_non_json_fails_the_run() {
    let (_gw, c) = gateway().await;
    assert_eq!(
        program_ok(&c, "async () => ({d: new Date(0), u: undefined, n: NaN})").await,
        json!({"d": "1970-01-01T00:00:00.000Z", "n": null})
    );
    for bad in [
        "async () => { const a = {}; a.self = a; return a; }",
        "async () => 10n",
        "async () => ({f: () => 1})",
    ] {
        let e = program_fails(&c, bad).await;
        assert_eq!(e["code"], "execution_failed", "{e}");
        assert_eq!(e["kind"], "invalid-output", "{e}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn p4_nothing_survives_an_execution() {
    let (_gw, c) = gateway().await;
    program_ok(
        &c,
        "async () => { globalThis.leak = 1; Object.prototype.polluted = true; return 1; }",
    )
    .await;
    let v = program_ok(&c, "async () => [typeof leak, ({}).polluted === undefined]").await;
    assert_eq!(v, json!(["undefined", true]));
}

#[tokio::test(flavor = "multi_thread")]
async fn p5_typescript_syntax_is_a_syntax_error() {
    let (_gw, c) = gateway().await;
    let e = program_fails(
        &c,
        "async (): Promise<number> => { const x: number = 1; return x; }",
    )
    .await;
    assert_eq!(e["code"], "execution_failed");
    assert!(
        e["message"]
            .as_str()
            .expect("message")
            .to_lowercase()
            .contains("syntax"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a1_a2_canonical_addresses_and_sanitized_shortcuts_reach_the_same_tool() {
    let (_gw, c) = gateway().await;
    let v = program_ok(
        &c,
        "async () => { const a = await connecta.call('py-server.weather_lookup', {city: 'Oslo'}); \
          const b = await py_server.weather_lookup({city: 'Oslo'}); const n = await demo.get_note({id: 1}); \
          return [a, b, n.id]; }",
    )
    .await;
    assert_eq!(v[0], v[1]);
    assert_eq!(v[0]["sky"], "snow");
    assert_eq!(v[2], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a3_an_ambiguous_shortcut_fails_closed_and_both_addresses_stay_callable() {
    let (gw, c) = gateway().await;
    // `get-item` and `get.item` both sanitize to `get_item`.
    let e = program_fails(&c, "async () => py_server.get_item({})").await;
    assert_eq!(e["code"], "ambiguous_tool_alias", "{e}");
    assert_eq!(e["retryable"], false);
    let m = e["message"].as_str().expect("message");
    assert!(
        m.contains("get-item") && m.contains("get.item") && m.contains("connecta.call"),
        "{m}"
    );
    let v = program_ok(&c, "async () => [await connecta.call('py-server.get-item'), await connecta.call('py-server.get.item')]").await;
    assert_eq!(v, json!([{"via": "get-item"}, {"via": "get.item"}]));
    // A shortcut that is one tool's exact name and another's sanitized
    // name (`lookup_record`, `lookup-record`) picks neither; a name only
    // bracket access spells means its tool alone.
    let e = program_fails(&c, "async () => py_server.lookup_record({id: 1})").await;
    assert_eq!(e["code"], "ambiguous_tool_alias", "{e}");
    let m = e["message"].as_str().expect("message");
    assert!(
        m.contains("lookup-record") && m.contains("lookup_record"),
        "{m}"
    );
    let v = program_ok(&c, "async () => py_server['lookup-record']({id: 1})").await;
    assert_eq!(v["via"], "lookup-record");
    // The refusal is recorded with the alias the program used (V2).
    let events = events_until(&gw, "the ambiguity refusal", |e| {
        e.iter().any(|x| x["errorCode"] == "ambiguous_tool_alias")
    })
    .await;
    let ev = events
        .iter()
        .find(|x| x["errorCode"] == "ambiguous_tool_alias" && x["address"] == "py-server.get_item")
        .expect("event");
    assert_eq!(ev["friction"], "tool_not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn a4_every_global_of_the_sandbox_is_reserved_for_connector_ids() {
    use connecta_core::address::{RESERVED_GLOBALS, sanitize_identifier};
    let (_gw, c) = gateway().await;
    let names = program_ok(&c, "async () => Object.getOwnPropertyNames(globalThis)").await;
    let names = names.as_array().expect("a list of names");
    assert!(names.len() > 40, "{names:?}");
    let shortcuts = ["demo", "py_server"];
    let unreserved: Vec<&str> = names
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| {
            !RESERVED_GLOBALS.contains(n) && sanitize_identifier(n) == *n && !shortcuts.contains(n)
        })
        .collect();
    assert!(
        unreserved.is_empty(),
        "a connector id could shadow these sandbox globals: {unreserved:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a4_colliding_connector_ids_fail_every_program_naming_them() {
    let gw = Gateway::start(&format!(
        "{}\n{}",
        python_connector("my-svc"),
        python_connector("my_svc")
    ));
    let c = connect(&gw.url()).await;
    let e = program_fails(&c, "async () => 1").await;
    assert_eq!(e["code"], "execution_failed");
    let m = e["message"].as_str().expect("message");
    assert!(m.contains("my-svc") && m.contains("my_svc"), "{m}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s1_s1a_s2_search_is_one_flat_page_with_safety_and_key_lists() {
    let (_gw, c) = gateway().await;
    let page = program_ok(
        &c,
        "async () => connecta.search({query: 'weather city', safety: 'readOnly'})",
    )
    .await;
    for key in ["tools", "total", "offset", "limit", "hasMore"] {
        assert!(page.get(key).is_some(), "missing {key}: {page}");
    }
    let first = &page["tools"][0];
    assert_eq!(first["address"], "py-server.weather_lookup", "{page}");
    assert_eq!(first["inputKeys"], json!(["city"]), "{first}");
    assert_eq!(first["requiredInputKeys"], json!(["city"]), "{first}");
    let all_ro = page["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .all(|t| t["readOnly"] == true);
    assert!(all_ro, "{page}");
    let approval = program_ok(
        &c,
        "async () => connecta.search({query: 'delete note', safety: 'approvalRequired'})",
    )
    .await;
    assert!(
        approval["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .all(|t| t["readOnly"] == false),
        "{approval}"
    );
    let no_keys = program_ok(
        &c,
        "async () => connecta.search({query: 'weather', includeSchemaKeys: false})",
    )
    .await;
    assert!(no_keys["tools"][0].get("inputKeys").is_none(), "{no_keys}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_e1_discovery_bounds_throw_and_escape_typed() {
    let (_gw, c) = gateway().await;
    let caught = program_ok(&c, "async () => { try { await connecta.search({query: 'x', limit: 101}); } catch (e) { return [e.message.length > 0, e.code]; } }").await;
    assert_eq!(caught, json!([true, "invalid_args"]));
    let e = program_fails(&c, "async () => connecta.search({query: 'x', limit: 0})").await;
    assert_eq!(e["code"], "invalid_args", "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_describe_answers_in_order_with_per_entry_errors() {
    let (_gw, c) = gateway().await;
    let v = program_ok(&c, "async () => connecta.describe({addresses: ['demo.get_note', 'demo.get_nots', 'nowhere.x']})").await;
    let tools = v["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 3);
    assert_eq!(tools[0]["address"], "demo.get_note");
    assert!(tools[0]["inputSchema"].is_object(), "{v}");
    assert!(tools[1]["error"].is_object(), "{v}");
    let suggestions = tools[1]["error"].to_string();
    assert!(suggestions.contains("demo.get_note"), "did you mean: {v}");
    assert!(tools[2]["error"].is_object(), "{v}");
    let e = program_fails(&c, "async () => connecta.describe({addresses: Array.from({length: 101}, (_, i) => 'demo.t' + i)})").await;
    assert_eq!(e["code"], "invalid_args");
}

#[tokio::test(flavor = "multi_thread")]
async fn s5_call_returns_the_unwrapped_value_and_is_error_throws() {
    let (_gw, c) = gateway().await;
    assert_eq!(
        program_ok(
            &c,
            "async () => (await connecta.call('demo.get_note', {id: 3})).title"
        )
        .await,
        json!("Database migration notes")
    );
    let e = program_fails(&c, "async () => connecta.call('py-server.flaky')").await;
    assert_eq!(e["code"], "connector_call_failed", "{e}");
    assert!(
        e["message"]
            .as_str()
            .expect("m")
            .contains("failed on purpose"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_e4_destructive_tools_are_refused_inside_programs_with_activity_parity() {
    let (gw, c) = gateway().await;
    let e = program_fails(&c, "async () => connecta.call('demo.delete_note', {id: 1})").await;
    assert_eq!(e["code"], "destructive_tool_requires_approval");
    assert_eq!(e["retryable"], false);
    assert_eq!(e["nextAction"]["tool"], "call_destructive_tool");
    let e = program_fails(&c, "async () => demo.create_note({title: 't', body: 'b'})").await;
    assert_eq!(e["code"], "destructive_tool_requires_approval");
    // The note still exists: nothing was called.
    assert_eq!(
        program_ok(&c, "async () => (await demo.get_note({id: 1})).id").await,
        json!(1)
    );
    let events = events_until(&gw, "three execute_code events", |e| e.len() >= 3).await;
    let refusals: Vec<&Value> = events
        .iter()
        .filter(|e| e["errorCode"] == "destructive_tool_requires_approval")
        .collect();
    assert_eq!(refusals.len(), 2);
    assert!(
        refusals
            .iter()
            .all(|e| e["source"] == "execute_code" && e["friction"] == "destructive_reroute")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_s8_y2_batch_runs_in_parallel_with_typed_outcomes() {
    let (_gw, c) = gateway().await;
    let v = program_ok(
        &c,
        "async () => connecta.batch([{address: 'demo.get_note', args: {id: 1}}, {address: 'demo.delete_note', args: {id: 1}}, \
          {address: 'nowhere.tool'}, {address: 'py-server.weather_lookup', args: {city: 'Lima'}}])",
    )
    .await;
    let o = v.as_array().expect("outcomes");
    assert_eq!(o.len(), 4);
    assert_eq!(o[0]["ok"], true);
    assert_eq!(o[0]["data"]["id"], 1);
    assert_eq!(o[1]["ok"], false);
    assert_eq!(
        o[1]["errorDetails"]["code"],
        "destructive_tool_requires_approval"
    );
    assert_eq!(o[1]["errorDetails"]["retryable"], false);
    assert!(o[1]["error"].is_string());
    assert_eq!(o[2]["errorDetails"]["code"], "unknown_address");
    assert_eq!(o[3]["data"]["sky"], "overcast");
    let e = program_fails(&c, "async () => connecta.batch(Array.from({length: 11}, () => ({address: 'demo.note_stats'})))").await;
    assert_eq!(e["code"], "invalid_args");
}

#[tokio::test(flavor = "multi_thread")]
async fn e1_e6_a_caught_error_is_typed_and_an_escaped_one_keeps_its_type_as_a_cause() {
    let (_gw, c) = gateway().await;
    let v = program_ok(&c, "async () => { try { await connecta.call('demo.delete_note', {id: 1}); } catch (e) { return [e instanceof Error, e.code, e.retryable]; } }").await;
    assert_eq!(
        v,
        json!([true, "destructive_tool_requires_approval", false])
    );
    let e = program_fails(&c, "async () => { try { await connecta.call('demo.get_note', {id: 'x'}); } catch (e) { throw new Error('while reading: ' + e.message, {cause: e}); } }").await;
    assert_eq!(
        e["code"], "invalid_args",
        "the wrapped failure keeps its type: {e}"
    );
    // A program's own error is not typed.
    let e = program_fails(&c, "async () => { null.x; }").await;
    assert_eq!(e["code"], "execution_failed");
    assert!(
        e["message"].as_str().expect("m").contains("TypeError"),
        "{e}"
    );
    // A forged typed error is not trusted: its code is not the model's code.
    let e = program_fails(&c, "async () => { const err = new Error('forged'); err.code = 'rate_limited'; err.retryable = true; throw err; }").await;
    assert_eq!(e["code"], "execution_failed", "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn e6_x8_unknown_and_inherited_members_fail_by_name() {
    let (_gw, c) = gateway().await;
    assert_eq!(
        program_ok(&c, "async () => typeof connecta.toString").await,
        json!("function")
    );
    let e = program_fails(&c, "async () => connecta.toString()").await;
    assert!(
        e["message"]
            .as_str()
            .expect("m")
            .contains("Unknown function connecta.toString"),
        "{e}"
    );
    let e = program_fails(&c, "async () => connecta.nope({})").await;
    assert!(
        e["message"]
            .as_str()
            .expect("m")
            .contains("Unknown function connecta.nope"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn e7_refusals_about_a_503_named_connector_stay_non_retryable() {
    let gw = Gateway::start(&format!(
        "{}\n{}",
        demo_connector(),
        python_connector("svc-503")
    ));
    gw.wait_catalogs().await;
    let c = connect(&gw.url()).await;
    let v = program_ok(&c, "async () => connecta.batch([{address: 'svc-503.forget_city', args: {city: 'x'}}, {address: 'svc-503.no_such_429'}])").await;
    assert_eq!(
        v[0]["errorDetails"]["code"],
        "destructive_tool_requires_approval"
    );
    assert_eq!(v[0]["errorDetails"]["retryable"], false);
    assert_eq!(v[1]["errorDetails"]["code"], "unknown_tool");
    assert_eq!(v[1]["errorDetails"]["retryable"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn r1_r2_r3_r4_one_truncation_envelope_that_fits_as_a_success_without_a_handle() {
    let (_gw, c) = gateway().await;
    let (v, err) = program(&c, "async () => 'x'.repeat(100000)").await;
    assert!(!err, "truncation is a success (R3): {v}");
    let r = &v["result"];
    assert_eq!(r["truncated"], true);
    assert_eq!(r["totalChars"], 100_002);
    assert!(
        r["hint"]
            .as_str()
            .expect("hint")
            .contains("return only what you need")
    );
    assert!(serde_json::to_string(r).expect("s").chars().count() <= 24_000);
    assert!(
        v.get("resultId").is_none() && r.get("resultId").is_none(),
        "R4: no paging handle"
    );
    // R1: small values pass unchanged, no extra keys (R6).
    let (small, _) = program(&c, "async () => ({a: 1})").await;
    assert_eq!(small, json!({"result": {"a": 1}}));
}

#[tokio::test(flavor = "multi_thread")]
async fn r5_logs_are_captured_in_order_capped_and_survive_failure() {
    let (_gw, c) = gateway().await;
    let (v, _) = program(&c, "async () => { console.log('one'); console.warn('two'); console.error('three'); return 1; }").await;
    let logs = v["logs"].as_str().expect("logs");
    assert!(
        logs.find("one") < logs.find("two") && logs.find("two") < logs.find("three"),
        "{logs}"
    );
    let (v, _) = program(
        &c,
        "async () => { for (let i = 0; i < 2000; i++) console.log('line ' + i); return 1; }",
    )
    .await;
    let logs = v["logs"].as_str().expect("logs");
    assert!(
        logs.chars().count() <= 4_000 && logs.contains("logs truncated"),
        "{}",
        logs.len()
    );
    let e = program_fails(
        &c,
        "async () => { console.log('before the crash'); throw new Error('boom'); }",
    )
    .await;
    assert!(
        e["logs"]
            .as_str()
            .expect("logs")
            .contains("before the crash"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn r6_r7_r8_m10_diagnostics_are_opt_in_and_payload_free() {
    let (_gw, c) = gateway().await;
    let code = "async () => { await connecta.search({query: 'note'}); const n = await connecta.call('demo.get_note', {id: 1}); \
                await connecta.batch([{address: 'demo.note_stats'}, {address: 'demo.list_notes'}]); \
                await connecta.emit({type: 'text', text: 'hello'}); return n.id; }";
    let (v, err) = call(
        &c,
        "execute_code",
        json!({"code": code, "diagnostics": true}),
    )
    .await;
    assert!(!err, "{v}");
    let d = &v["diagnostics"];
    for k in [
        "admissionMs",
        "setupMs",
        "executorMs",
        "catalogMs",
        "connectorMs",
    ] {
        assert!(d["timing"][k].is_number(), "{k}: {d}");
    }
    assert_eq!(d["operations"]["call"]["count"], 1);
    assert_eq!(d["operations"]["search"]["count"], 1);
    assert_eq!(d["operations"]["batch"]["children"], 2);
    assert_eq!(d["emitted"]["blocks"], 1);
    let text = d.to_string();
    for secret in ["demo.get_note", "get_note", "note_stats", "hello"] {
        assert!(!text.contains(secret), "diagnostics carry {secret}: {text}");
    }
    let (plain, _) = call(
        &c,
        "execute_code",
        json!({"code": "async () => 1", "diagnostics": false}),
    )
    .await;
    assert_eq!(plain, json!({"result": 1}));
}

#[tokio::test(flavor = "multi_thread")]
async fn y1_one_attempt_per_call_and_y3_retryable_flags_by_code() {
    let (gw, c) = gateway().await;
    let v = program_ok(
        &c,
        "async () => connecta.batch([{address: 'py-server.hang', args: {seconds: 30}}])",
    )
    .await;
    let _ = v;
    let events = events_until(&gw, "the hang call", |e| {
        e.iter().any(|x| x["toolName"] == "hang")
    })
    .await;
    let hang = events
        .iter()
        .find(|x| x["toolName"] == "hang")
        .expect("event");
    assert_eq!(hang["attempts"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn v1_v2_v3_v4_one_event_per_call_none_for_unknown_connectors_or_the_execution() {
    let (gw, c) = gateway().await;
    program_ok(
        &c,
        "async () => { await demo.get_note({id: 1}); await connecta.call('demo.note_stats'); \
          await connecta.batch([{address: 'demo.list_notes'}, {address: 'nowhere.tool'}, {address: 'demo.nope'}]); \
          try { await demo.delete_note({id: 2}); } catch (e) {} return 1; }",
    )
    .await;
    let events = events_until(&gw, "five events", |e| e.len() >= 5).await;
    assert_eq!(events.len(), 5, "{events:#?}");
    assert!(
        events
            .iter()
            .all(|e| e["source"] == "execute_code" && e["connectorId"] == "demo")
    );
    let codes: Vec<&str> = events
        .iter()
        .map(|e| e["errorCode"].as_str().unwrap_or("-"))
        .collect();
    assert!(
        codes.contains(&"unknown_tool") && codes.contains(&"destructive_tool_requires_approval"),
        "{codes:?}"
    );
    assert!(
        events
            .iter()
            .all(|e| e["requestId"] == events[0]["requestId"]),
        "one request"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn l4_l8_the_host_call_budget_is_twenty_and_does_not_refill() {
    let (_gw, c) = gateway().await;
    let v = program_ok(
        &c,
        "async () => { const out = []; for (let i = 0; i < 22; i++) { const [r] = await connecta.batch([{address: 'demo.note_stats'}]); \
          out.push(r.ok ? 'ok' : r.errorDetails.code); } return out; }",
    )
    .await;
    let a = v.as_array().expect("array");
    assert_eq!(a.iter().filter(|x| *x == "ok").count(), 20, "{v}");
    assert_eq!(a[20], "budget_exceeded");
    assert_eq!(a[21], "budget_exceeded");
    let e = program_fails(
        &c,
        "async () => { for (let i = 0; i < 21; i++) await connecta.call('demo.note_stats'); }",
    )
    .await;
    assert!(
        e["message"].as_str().expect("m").contains("budget of 20"),
        "{e}"
    );
    assert_eq!(e["code"], "budget_exceeded", "{e}");
    assert_eq!(e["budget"], "host_calls", "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn l6_x10_oversized_host_payloads_fail_that_call_naming_the_address() {
    let (_gw, c) = gateway().await;
    let v = program_ok(&c, "async () => { try { await connecta.call('py-server.big_text', {kilobytes: 300}); } catch (e) { return e.message; } }").await;
    let m = v.as_str().expect("message");
    assert!(
        m.contains("py-server.big_text") && m.contains("262144"),
        "{m}"
    );
    // A batch is one host call: its results together are bounded the same.
    let v = program_ok(&c, "async () => { try { await connecta.batch([{address: 'py-server.big_text', args: {kilobytes: 150}}, {address: 'py-server.big_text', args: {kilobytes: 150}}]); return 'passed'; } catch (e) { return e.message; } }").await;
    let m = v.as_str().expect("message");
    assert!(
        m.contains("the batch's results are") && m.contains("262144"),
        "{m}"
    );
    let v = program_ok(&c, "async () => { try { await connecta.call('demo.search_notes', {query: 'x'.repeat(300000)}); } catch (e) { return e.message; } }").await;
    assert!(
        !v.as_str().expect("message").contains("demo.search_notes"),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn m1_m5_m7_emit_validates_strictly_and_budgets_fail_at_the_call() {
    let (_gw, c) = gateway().await;
    let v = program_ok(
        &c,
        "async () => { const out = []; for (const b of [{type: 'text'}, {type: 'text', text: 'x', annotations: {}}, 'plain', {type: 'resource_link', uri: 'file:///x'}]) { \
           try { await connecta.emit(b); out.push('accepted'); } catch (e) { out.push('refused'); } } \
           let n = 0; try { for (;;) { await connecta.emit({type: 'text', text: 'x'}); n++; } } catch (e) { out.push(e.message.includes('block budget')); } \
           out.push(n); return out; }",
    )
    .await;
    assert_eq!(
        v,
        json!(["refused", "refused", "refused", "refused", true, 32])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn m2_m3_m4_m6_emitted_blocks_follow_the_envelope_on_success_only() {
    let (_gw, c) = gateway().await;
    let r = call_raw(
        &c,
        "execute_code",
        json!({"code": "async () => { const img = await connecta.call('demo.tag_badge', {tag: 'team'}); \
                const block = img.content.find(b => b.type === 'image'); await connecta.emit(block); \
                await connecta.emit({type: 'text', text: 'see the badge'}); return 'x'.repeat(30000); }"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true));
    assert_eq!(r.content.len(), 3, "{r:?}");
    let envelope: Value =
        serde_json::from_str(&r.content[0].as_text().expect("text").text).expect("json");
    assert_eq!(envelope["emitted"], 2);
    assert_eq!(
        envelope["result"]["truncated"], true,
        "M3: R2 applies to the value only"
    );
    assert!(r.content[1].as_image().is_some());
    assert_eq!(r.content[2].as_text().expect("text").text, "see the badge");
    assert_eq!(
        r.structured_content.as_ref().expect("structured")["emitted"],
        2,
        "M2: structured is the envelope"
    );
    // M4: a failing program delivers none, and says how many it discarded.
    let r = call_raw(&c, "execute_code", json!({"code": "async () => { await connecta.emit({type: 'text', text: 'lost'}); throw new Error('no'); }"})).await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(r.content.len(), 1);
    let v = r.structured_content.expect("structured");
    assert_eq!(v["error"]["emittedDiscarded"], 1, "{v}");
    // Byte-for-byte: a program that never emits has no emitted key.
    let (plain, _) = program(&c, "async () => 1").await;
    assert!(plain.get("emitted").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn x6_a_promise_that_can_never_settle_fails_fast() {
    let (_gw, c) = gateway().await;
    let started = Instant::now();
    let e = program_fails(&c, "async () => { await new Promise(() => {}); return 1; }").await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "stall detection must not wait for the deadline"
    );
    assert_eq!(e["kind"], "timeout", "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn e3_auth_required_carries_the_recovery_envelope() {
    // A downstream that refuses every request with 401.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let mut server = std::process::Command::new(python())
        .arg(peers().join("http_401_server.py"))
        .arg(port.to_string())
        .spawn()
        .expect("python");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the 401 server never listened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let gw = Gateway::start(&format!(
        "{}\n[[connector]]\nid = \"locked\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n",
        demo_connector()
    ));
    let c = connect(&gw.url()).await;
    let v = program_ok(
        &c,
        "async () => connecta.batch([{address: 'locked.anything'}])",
    )
    .await;
    let d = &v[0]["errorDetails"];
    assert_eq!(d["code"], "auth_required", "{v}");
    assert_eq!(d["retryable"], false);
    assert_eq!(d["nextAction"]["tool"], "authorize_connector", "{v}");
    assert_eq!(d["nextAction"]["arguments"]["connector"], "locked", "{v}");
    assert_eq!(d["details"]["recovery"], "operator_config", "{v}");
    let e = program_fails(&c, "async () => connecta.call('locked.anything')").await;
    assert_eq!(e["code"], "auth_required", "E1: escapes typed: {e}");
    assert_eq!(e["recovery"], "operator_config");
    let _ = server.kill();
    let _ = server.wait();
}

#[tokio::test(flavor = "multi_thread")]
async fn a5_shortcut_namespaces_are_frozen_with_no_method_lists() {
    let (_gw, c) = gateway().await;
    let v = program_ok(
        &c,
        "async () => { 'use strict';
           const ns = demo;
           const tries = {};
           for (const [name, f] of Object.entries({
             assign: () => { ns.extra = 1; },
             remove: () => { delete ns.get_note; },
             define: () => Object.defineProperty(ns, 'x', {value: 1}),
             reproto: () => Object.setPrototypeOf(ns, {}),
             rebind: () => { globalThis.demo = 1; },
           })) { try { f(); tries[name] = 'allowed'; } catch (e) { tries[name] = 'refused'; } }
           return {keys: Object.keys(ns), names: Object.getOwnPropertyNames(ns), proto: Object.getPrototypeOf(ns),
                   anything: typeof ns.any_name_at_all, same: demo === ns, tries};
         }",
    )
    .await;
    assert_eq!(v["keys"], json!([]), "no typed method lists: {v}");
    assert_eq!(v["names"], json!([]), "{v}");
    assert_eq!(v["proto"], Value::Null, "{v}");
    assert_eq!(v["anything"], "function", "lazy: every name is a caller");
    assert_eq!(v["same"], true, "the global cannot be rebound");
    for attempt in ["assign", "remove", "define", "reproto", "rebind"] {
        assert_eq!(v["tries"][attempt], "refused", "{attempt}: {v}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn e2_each_code_carries_its_pinned_retryable_flag() {
    let (_gw, c) = gateway().await;
    let v = program_ok(
        &c,
        "async () => {
           const codeOf = async (f) => { try { await f(); return null; } catch (e) { return [e.code, e.retryable]; } };
           return {
             unknownAddress: await codeOf(() => connecta.call('no_such_connector.tool')),
             unknownTool: await codeOf(() => connecta.call('demo.no_such_tool')),
             destructive: await codeOf(() => connecta.call('demo.delete_note', {id: 1})),
             invalidArgs: await codeOf(() => connecta.search({query: 'x', limit: 1000})),
             downstreamError: await codeOf(() => connecta.call('demo.get_note', {id: 999999})),
           };
         }",
    )
    .await;
    assert_eq!(
        v,
        json!({
            "unknownAddress": ["unknown_address", false],
            "unknownTool": ["unknown_tool", false],
            "destructive": ["destructive_tool_requires_approval", false],
            "invalidArgs": ["invalid_args", false],
            "downstreamError": ["connector_call_failed", false],
        })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn x4_non_string_log_arguments_are_json_rendered_and_info_debug_captured() {
    let (_gw, c) = gateway().await;
    let (v, err) = program(
        &c,
        "async () => { console.log('n', 1, {a: [true, null]}); console.info('from info'); console.debug('from debug'); return 0; }",
    )
    .await;
    assert!(!err, "{v}");
    let logs = v["logs"].as_str().expect("logs");
    assert!(logs.contains(r#"n 1 {"a":[true,null]}"#), "{logs}");
    assert!(
        logs.contains("from info") && logs.contains("from debug"),
        "{logs}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn x7_values_cross_as_json_only_binary_does_not_survive() {
    let (_gw, c) = gateway().await;
    // A typed array has no JSON form beyond its indexed members: what comes
    // back is a plain object, never bytes.
    let v = program_ok(
        &c,
        "async () => ({bytes: new Uint8Array([1, 2]), date: new Date(0), map: new Map([[1, 2]])})",
    )
    .await;
    assert_eq!(
        v,
        json!({"bytes": {"0": 1, "1": 2}, "date": "1970-01-01T00:00:00.000Z", "map": {}})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn m9_emission_is_request_local() {
    let (_gw, c) = gateway().await;
    let first = call_raw(
        &c,
        "execute_code",
        json!({"code": "async () => { await connecta.emit({type: 'text', text: 'only here'}); return 1; }"}),
    )
    .await;
    assert_eq!(first.content.len(), 2, "{first:?}");
    // The next request, on the same session and possibly the same worker,
    // delivers nothing the first one collected.
    let second = call_raw(&c, "execute_code", json!({"code": "async () => 2"})).await;
    assert_eq!(second.content.len(), 1, "{second:?}");
    assert!(!format!("{second:?}").contains("only here"));
}
