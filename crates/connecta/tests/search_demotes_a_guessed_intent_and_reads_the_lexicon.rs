//! Search through the real binary, in front of real servers: a Python SDK
//! server whose read-only `add` "Add two integers.", server-everything,
//! whose `get-sum` "Returns the sum of two numbers", and (for exact names)
//! server-memory, whose tools start with change verbs (`create_entities`,
//! `delete_relations`, `add_observations`).
//!
//! - A guessed intent reorders, never drops a tool the query names: "add
//!   two integers" asks to add, `add` only reads, and it is the first row
//!   (it used to be a no-match); "add two numbers" and "sum of two numbers"
//!   find `get-sum` first; `connecta.search` answers the same.
//! - Every tool's exact name (and address) as the query is the first row,
//!   whatever verb it starts with.
//! - A deployment's lexicon file (`[search] lexicon`) extends the built-in
//!   one, and `connecta check` locates a bad entry in it.

mod support;

use serde_json::{Value, json};
use support::*;

fn config() -> String {
    let adder = peers().join("py_adder.py");
    format!(
        "[[connector]]\nid = \"calc\"\ncommand = {}\nargs = [{}]\n\n{}",
        q(&python()),
        q(&adder.display().to_string()),
        everything_connector()
    )
}

async fn search(client: &Client, args: Value) -> Value {
    let (page, err) = call(client, "search_tools", args.clone()).await;
    assert!(!err, "{args}: {page}");
    page
}

async fn first(client: &Client, query: &str) -> String {
    let page = search(client, json!({ "query": query })).await;
    page["tools"][0]["address"]
        .as_str()
        .unwrap_or_else(|| panic!("{query}: no row in {page}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_guessed_intent_reorders_and_never_drops_the_tool_the_query_names() {
    let gw = Gateway::start(&config());
    let client = connect(&gw.url()).await;
    let page = search(&client, json!({ "query": "add two integers" })).await;
    assert_eq!(page["tools"][0]["address"], "calc.add", "{page}");
    assert_eq!(page["tools"][0]["readOnly"], true, "{page}");
    assert_eq!(
        first(&client, "add two numbers").await,
        "everything.get-sum"
    );
    assert_eq!(
        first(&client, "sum of two numbers").await,
        "everything.get-sum"
    );
    // The same page builder answers programs.
    let (value, err) = program(
        &client,
        "async () => (await connecta.search({ query: \"add two integers\" })).tools[0].address",
    )
    .await;
    assert!(!err, "{value}");
    assert!(value.to_string().contains("calc.add"), "{value}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_exact_tool_name_is_the_first_row() {
    let memory_file = tempfile::NamedTempFile::new().expect("temp file");
    let gw = Gateway::start(&format!(
        "{}\n[[connector]]\nid = \"memory\"\ncommand = {}\nargs = [{}]\nenv = {{ MEMORY_FILE_PATH = {} }}\n",
        config(),
        q(&node()),
        q(&memory_js()),
        q(&memory_file.path().display().to_string())
    ));
    let client = connect(&gw.url()).await;
    let all = search(&client, json!({ "query": "", "limit": 100 })).await;
    assert_eq!(all["hasMore"], false, "{all}");
    let tools = all["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    // Names led by every kind of verb: change verbs a query would demote
    // a reader for, reads, and words no lexicon knows.
    for name in [
        "add",
        "get-sum",
        "create_entities",
        "delete_entities",
        "delete_relations",
        "add_observations",
        "read_graph",
        "search_nodes",
        "toggle-simulated-logging",
        "trigger-long-running-operation",
        "gzip-file-as-resource",
        "echo",
    ] {
        assert!(names.contains(&name), "{name} is not in {names:?}");
    }
    let mut checked = 0;
    for t in tools {
        let (address, name) = (
            t["address"].as_str().expect("address"),
            t["name"].as_str().expect("name"),
        );
        assert_eq!(first(&client, name).await, address, "{name}");
        assert_eq!(first(&client, address).await, address, "{address}");
        checked += 1;
    }
    assert_eq!(checked, tools.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deployment_lexicon_adds_words_to_the_built_in_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lexicon = dir.path().join("words.toml");
    std::fs::write(&lexicon, "[words]\ntally = { finds = \"sum\" }\n").expect("write");

    let plain = Gateway::start(&config());
    let client = connect(&plain.url()).await;
    let page = search(&client, json!({ "query": "tally" })).await;
    assert_eq!(page["matchMode"], "none", "{page}");
    drop(client);
    drop(plain);

    let extended = Gateway::start(&format!(
        "[search]\nlexicon = {}\n\n{}",
        q(&lexicon.display().to_string()),
        config()
    ));
    let client = connect(&extended.url()).await;
    assert_eq!(first(&client, "tally").await, "everything.get-sum");
    assert_eq!(
        first(&client, "tally two numbers").await,
        "everything.get-sum"
    );
}

#[test]
fn a_bad_lexicon_entry_stops_check_with_its_position() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("words.toml"),
        "[words]\n\nzap = { finds = \"nothing\" }\n",
    )
    .expect("write");
    let path = dir.path().join("connecta.toml");
    std::fs::write(
        &path,
        format!("[search]\nlexicon = \"words.toml\"\n\n{}", demo_connector()),
    )
    .expect("write");
    let (status, out, err) = check_config(&path);
    assert!(!status.success(), "stdout: {out}");
    let words = dir.path().join("words.toml").display().to_string();
    assert!(
        err.contains(&format!(
            "{words}:3:1: \"zap\": `finds` names a group's head word; \"nothing\" heads none"
        )),
        "{err}"
    );
}
