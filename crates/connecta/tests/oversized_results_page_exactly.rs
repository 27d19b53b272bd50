//! A result over the cap is stashed; `get_result` pages reassemble the exact
//! bytes of its compact JSON, including multi-byte UTF-8 across page edges;
//! a stash is private to its caller and unknown ids are `not_found`.

mod support;

use serde_json::{Value, json};
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn stash_and_page_reassemble_the_exact_bytes() {
    let config = format!(
        "[limits]\nresult_cap_bytes = 4000\n\n[[connector]]\nid = \"py\"\ncommand = {}\nargs = [{}, \"stdio\"]\n",
        q(&python()),
        q(&peers().join("py_server.py").display().to_string())
    );
    let gw = Gateway::start(&config);
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;

    let (notice, err) = call(
        &client,
        "call_tool",
        json!({"address": "py.big_text", "args": {"kilobytes": 40}}),
    )
    .await;
    assert!(!err, "{notice}");
    assert_eq!(notice["truncated"], true, "{notice}");
    let id = notice["resultId"].as_str().expect("resultId").to_owned();
    assert_eq!(
        notice["nextAction"],
        json!({"tool": "get_result", "arguments": {"id": id, "offset": 0}})
    );
    let total = notice["totalBytes"].as_u64().expect("totalBytes") as usize;
    assert!(total > 40 * 1024);
    assert!(notice["head"].as_str().expect("head").len() <= 2_000);

    // Page with an awkward size so edges fall inside multi-byte characters.
    let mut text = String::new();
    let mut offset = 0u64;
    let mut pages = 0;
    loop {
        let (page, err) = call(
            &client,
            "get_result",
            json!({"id": id, "offset": offset, "maxBytes": 997}),
        )
        .await;
        assert!(!err, "{page}");
        assert_eq!(page["offset"].as_u64(), Some(offset));
        assert_eq!(page["totalBytes"].as_u64(), Some(total as u64));
        let chunk = page["text"].as_str().expect("text");
        assert!(chunk.len() <= 997 || chunk.chars().count() == 1);
        text.push_str(chunk);
        pages += 1;
        match page["nextOffset"].as_u64() {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert!(pages > 40);
    assert_eq!(text.len(), total);
    // The reassembled text is exactly the compact JSON of the tool's value.
    let value: Value = serde_json::from_str(&text).expect("the stash is compact JSON");
    assert_eq!(serde_json::to_string(&value).expect("serializes"), text);
    assert!(text.starts_with(notice["head"].as_str().expect("head")));
    let s = value
        .get("result")
        .and_then(Value::as_str)
        .or(value.as_str())
        .expect("big_text returns a string");
    assert!(s.contains("日本語テキスト 😀"));
    assert!(s.starts_with("connecta é ótimo"));

    // Unknown ids, and other callers' ids, are not found.
    let (missing, err) = call(&client, "get_result", json!({"id": "res_0000"})).await;
    assert!(err);
    assert_eq!(missing["error"]["code"], "not_found");
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_result_over_the_caller_s_stash_quota_is_answered_truncated_without_a_handle() {
    let config = format!(
        "[limits]\nresult_cap_bytes = 4000\nstash_caller_quota_bytes = 100000\n\n{}",
        python_connector("py")
    );
    let gw = Gateway::start(&config);
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;
    let big = json!({"address": "py.big_text", "args": {"kilobytes": 40}});
    // Two results of ~41 KB fit in 100,000 bytes; the third does not.
    for _ in 0..2 {
        let (notice, err) = call(&client, "call_tool", big.clone()).await;
        assert!(!err, "{notice}");
        assert!(notice["resultId"].is_string(), "{notice}");
    }
    let (notice, err) = call(&client, "call_tool", big).await;
    assert!(!err, "the call happened: it is a success: {notice}");
    assert_eq!(notice["truncated"], true, "{notice}");
    assert_eq!(notice["stashed"], false, "{notice}");
    assert!(notice.get("resultId").is_none(), "{notice}");
    assert!(notice.get("nextAction").is_none(), "{notice}");
    let head = notice["head"].as_str().expect("head");
    assert!(!head.is_empty() && head.len() <= 2_000, "{}", head.len());
    assert!(
        notice["hint"]
            .as_str()
            .is_some_and(|h| h.contains("100000 bytes per caller")),
        "{notice}"
    );
}
