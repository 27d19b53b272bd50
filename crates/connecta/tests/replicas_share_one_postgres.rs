//! Several replicas on one PostgreSQL database (`[store] url`), through the
//! real binary and a real PostgreSQL cluster: an access token issued once
//! opens both; a result stashed by one is paged through the other; an
//! approval question asked on one is answered from the command line; one
//! activity log holds both replicas' calls; `/health` names the backend.

mod api_support;
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use connecta_store::testing::PgCluster;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use support::*;

const URL_VAR: &str = "CONNECTA_TEST_DATABASE_URL";

fn config() -> String {
    format!(
        "[store]\nurl = \"${{{URL_VAR}}}\"\n\n[limits]\nresult_cap_bytes = 4000\n\n{}\napproval = \"ask\"\n\n[[connector]]\nid = \"py\"\ncommand = {}\nargs = [{}, \"stdio\"]\n",
        demo_connector().trim_end(),
        q(&python()),
        q(&peers().join("py_server.py").display().to_string())
    )
}

fn cli(gw: &Gateway, url: &str, args: &[&str]) -> (bool, String, String) {
    let (status, out, err) = run(
        Command::new(bin())
            .args(args)
            .arg("--config")
            .arg(&gw.config_path)
            .env(URL_VAR, url),
        Duration::from_secs(30),
    );
    (status.success(), out, err)
}

/// A PostgreSQL cluster (kept running while held) and a fresh database's URL.
async fn database() -> (PgCluster, String) {
    let cluster = tokio::task::spawn_blocking(PgCluster::start)
        .await
        .expect("cluster");
    let url = cluster.fresh_database().await;
    (cluster, url)
}

/// The one vault key every replica of a test shares.
const VAULT_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// A replica's config on the shared database, open, with the OAuth peer
/// as connector `notes`; `server` is a `[server]` section or nothing.
fn oauth_config(peer: &HttpPeer, server: &str) -> String {
    format!(
        "{server}[auth]\nopen = true\n[store]\nurl = \"${{{URL_VAR}}}\"\n\n[[connector]]\nid = \"notes\"\nurl = {}\n[connector.oauth]\n",
        q(&peer.url())
    )
}

async fn client(gw: &Gateway, token: &str) -> Client {
    connect_with(
        StreamableHttpClientTransportConfig::with_uri(gw.url()).auth_header(token.to_owned()),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_one_database_serve_each_other_s_follow_ups() {
    let (_cluster, url) = database().await;
    let a = Gateway::start_with_env(&config(), &[(URL_VAR, &url)]);
    let b = Gateway::start_with_env(&config(), &[(URL_VAR, &url)]);
    for gw in [&a, &b] {
        let health = gw.wait_catalogs().await;
        assert_eq!(health["store"], "postgres", "{health}");
        assert!(!gw.stderr().contains(&url), "the database URL was logged");
    }

    // One token, issued once, opens both replicas.
    let (ok, token, err) = cli(&a, &url, &["token", "create", "ci"]);
    assert!(ok, "{err}");
    let token = token.trim().to_owned();
    let on_a = client(&a, &token).await;
    let on_b = client(&b, &token).await;

    // Stashed on A, paged through B by the same caller.
    let (notice, err) = call(
        &on_a,
        "call_tool",
        json!({"address": "py.big_text", "args": {"kilobytes": 12}}),
    )
    .await;
    assert!(!err, "{notice}");
    let id = notice["resultId"].as_str().expect("resultId").to_owned();
    let total = notice["totalBytes"].as_u64().expect("totalBytes");
    let (page, err) = call(&on_b, "get_result", json!({"id": id, "offset": 0})).await;
    assert!(!err, "{page}");
    assert_eq!(page["totalBytes"].as_u64(), Some(total), "{page}");
    assert!(!page["text"].as_str().unwrap_or("").is_empty(), "{page}");

    // Asked on B, answered from the command line (any replica's database).
    let url_b = b.url();
    let token_b = token.clone();
    let waiting = tokio::spawn(async move {
        let c =
            connect_with(StreamableHttpClientTransportConfig::with_uri(url_b).auth_header(token_b))
                .await;
        call(
            &c,
            "call_destructive_tool",
            json!({"address": "demo.create_note", "args": {"title": "from b", "body": "x"}}),
        )
        .await
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let question = loop {
        let (ok, out, err) = cli(&a, &url, &["approvals", "list", "--json"]);
        assert!(ok, "{err}");
        if let Some(line) = out.lines().next() {
            break serde_json::from_str::<Value>(line).expect("JSON");
        }
        assert!(
            Instant::now() < deadline,
            "no question reached the database"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let qid = question["id"].as_str().expect("id").to_owned();
    let (ok, _, err) = cli(&a, &url, &["approvals", "approve", &qid]);
    assert!(ok, "{err}");
    let (v, err) = waiting.await.expect("join");
    assert!(!err, "{v}");
    assert_eq!(v["title"], "from b", "{v}");

    // One activity log: both replicas' calls, under the token's name.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (ok, out, err) = cli(&a, &url, &["activity", "tail", "--json", "-n", "100"]);
        assert!(ok, "{err}");
        let events: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect();
        let tools: Vec<&str> = events
            .iter()
            .filter(|e| e["actor"]["kind"] == "token")
            .filter_map(|e| e["toolName"].as_str())
            .collect();
        if tools.contains(&"big_text") && tools.contains(&"create_note") {
            break;
        }
        assert!(Instant::now() < deadline, "events missing: {tools:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Downstream OAuth across replicas behind one public URL: the consent link
/// handed out by A brings the person back to B (the address both publish),
/// B finishes the flow from the shared database, and A's calls then carry
/// the token. One vault key for both, as replicas must have.
#[tokio::test(flavor = "multi_thread")]
async fn an_oauth_consent_handed_out_by_one_replica_is_finished_by_the_other() {
    let (_cluster, url) = database().await;
    let peer = HttpPeer::start("py_oauth_server.py", &[]).await;
    let env = [(URL_VAR, url.as_str()), ("CONNECTA_VAULT_KEY", VAULT_KEY)];
    let b = Gateway::start_with_env(&oauth_config(&peer, ""), &env);
    let a = Gateway::start_with_env(
        &oauth_config(
            &peer,
            &format!("[server]\npublic_url = \"http://localhost:{}\"\n", b.port),
        ),
        &env,
    );
    let on_a = connect(&a.url()).await;
    let (answer, err) = call(&on_a, "authorize_connector", json!({"connector": "notes"})).await;
    assert!(!err, "{answer}");
    let link = answer["authorizationUrl"].as_str().expect("link");
    assert!(
        link.contains(&format!("localhost%3A{}%2Foauth%2Fcallback", b.port)),
        "{link}"
    );
    let page = reqwest::get(link).await.expect("consent");
    assert_eq!(
        page.status().as_u16(),
        200,
        "{}",
        page.text().await.unwrap_or_default()
    );
    b.wait_stderr("downstream authorization completed").await;

    let (v, err) = call(
        &on_a,
        "call_tool",
        json!({"address": "notes.whoami", "args": {}}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["subject"], "user-ada", "{v}");
}

/// Two replicas refresh one downstream authorization at once. The
/// authorization server rotates refresh tokens (a spent one is refused
/// with `invalid_grant`) and answers the refresh slowly, so the second
/// replica's refresh is refused while the first one's is still in flight:
/// the second waits for the tokens the first stores, rather than asking
/// for a new consent and forgetting the authorization.
#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_refreshing_at_once_keep_one_authorization() {
    let (_cluster, url) = database().await;
    let peer = HttpPeer::start("py_oauth_server.py", &[]).await;
    let config = oauth_config(&peer, "");
    let env = [(URL_VAR, url.as_str()), ("CONNECTA_VAULT_KEY", VAULT_KEY)];
    let a = Gateway::start_with_env(&config, &env);
    let b = Gateway::start_with_env(&config, &env);
    let on_a = connect(&a.url()).await;
    let on_b = connect(&b.url()).await;
    let (answer, err) = call(&on_a, "authorize_connector", json!({"connector": "notes"})).await;
    assert!(!err, "{answer}");
    let link = answer["authorizationUrl"].as_str().expect("link");
    assert_eq!(
        reqwest::get(link).await.expect("consent").status().as_u16(),
        200
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (v, err) = whoami(&on_b).await;
        if !err {
            assert_eq!(v["subject"], "user-ada", "{v}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "B never saw the authorization: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!whoami(&on_a).await.1);

    // Every access token is refused from now on, and a refresh spends its
    // refresh token at once but answers after 1.5 s.
    peer.post("/drop-access-tokens", json!({})).await;
    peer.post("/refresh-delay", json!({"seconds": 1.5})).await;
    let first = tokio::spawn(async move {
        let r = whoami(&on_a).await;
        (on_a, r)
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (v, err) = whoami(&on_b).await;
    assert!(!err, "the replica that lost the race: {v}");
    assert_eq!(v["subject"], "user-ada", "{v}");
    let (on_a, (v, err)) = first.await.expect("first call");
    assert!(!err, "the replica that refreshed: {v}");

    // One refresh was spent, and the authorization is still there for
    // both: no new consent, no new code exchange.
    peer.post("/refresh-delay", json!({"seconds": 0})).await;
    let s = peer.stats().await;
    // The race happened: the second replica's refresh was refused as
    // spent, once.
    assert_eq!(
        (
            s["exchanges"].as_u64(),
            s["refreshes"].as_u64(),
            s["spent_refreshes"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{s}"
    );
    assert!(!whoami(&on_a).await.1);
    assert!(!whoami(&on_b).await.1);
    let (status, err) = call(&on_b, "authorize_connector", json!({"connector": "notes"})).await;
    assert!(!err, "{status}");
    assert_eq!(status["status"], "authorized", "{status}");
}

/// With a shared database no vault key is ever generated: a key file made
/// on one machine would be unknown to every other replica, and what it
/// sealed would not open there. Storing a credential without a key is
/// refused, with the way out, and leaves no key file behind.
#[tokio::test(flavor = "multi_thread")]
async fn with_a_shared_database_no_vault_key_is_generated() {
    let (_cluster, url) = database().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("connecta.toml");
    std::fs::write(
        &config,
        format!(
            "[store]\nurl = \"${{{URL_VAR}}}\"\n{}",
            api_support::connector_toml("prov", "http://127.0.0.1:9/v1", true)
        ),
    )
    .expect("config");
    let config = config.display().to_string();
    let set = |env: &[(&str, &str)]| {
        api_support::cli(
            &["credential", "set", "prov", "--config", &config],
            "prov-TOKEN-7f3a9c1e5b2d48aa\n",
            env,
        )
    };
    let (status, out, err) = set(&[(URL_VAR, &url)]);
    assert!(!status.success(), "{out}{err}");
    assert!(err.contains("CONNECTA_VAULT_KEY"), "{err}");
    assert!(!dir.path().join("data/vault.key").exists());

    // With the key every replica shares, the same command works.
    let (status, out, err) = set(&[(URL_VAR, &url), ("CONNECTA_VAULT_KEY", VAULT_KEY)]);
    assert!(status.success(), "{out}{err}");
    assert!(!dir.path().join("data/vault.key").exists());
}
