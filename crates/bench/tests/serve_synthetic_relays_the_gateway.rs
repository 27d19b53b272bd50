//! `serve-synthetic` against a stand-in for the `connecta` binary (a shell
//! script that follows the gateway's `serve` contract): the config it is
//! handed points at a live synthetic downstream, its ready line is relayed
//! with its own pid, and SIGTERM reaches it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use connecta_bench::launcher::{
    ENV_CONNECTORS, ENV_TOOLS_PER_CONNECTOR, LaunchSpec, ServerProcess, shell_quote,
};
use connecta_bench::measure::connect;
use connecta_bench::rss::cmdline;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_connecta-bench");

const FAKE_CONNECTA: &str = r#"#!/bin/sh
# Stand-in for `connecta serve --config FILE --listen ADDR`.
echo "$@" > "$FAKE_DIR/args"
cp "$3" "$FAKE_DIR/config.toml"
dirname "$3" > "$FAKE_DIR/config_dir"
trap 'echo terminated > "$FAKE_DIR/signal"; exit 0' TERM
echo "a log line on stdout is not the ready line"
echo '{"type":"ready","port":4242}'
while :; do sleep 0.05; done
"#;

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("connecta-bench-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn write_fake(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("connecta");
    std::fs::write(&path, FAKE_CONNECTA).expect("write fake");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[tokio::test]
async fn the_gateway_gets_a_config_for_a_live_downstream_and_its_ready_line_is_relayed() {
    let dir = scratch("relay");
    let fake = write_fake(&dir);
    let spec = LaunchSpec {
        command: format!(
            "{} serve-synthetic --connecta-bin {}",
            shell_quote(BIN),
            shell_quote(&fake.to_string_lossy())
        ),
        env: vec![
            (ENV_CONNECTORS.into(), "3".into()),
            (ENV_TOOLS_PER_CONNECTOR.into(), "12".into()),
            ("FAKE_DIR".into(), dir.to_string_lossy().into_owned()),
        ],
        ready_timeout: Duration::from_secs(30),
        log_file: None,
    };
    let server = ServerProcess::launch(&spec).await.expect("ready");
    assert_eq!(server.ready.port, 4242, "the gateway's port, relayed");
    let gateway = server.ready.pid.expect("the gateway's pid");
    assert_ne!(
        Some(gateway),
        server.root_pid(),
        "the gateway, not the wrapper"
    );
    assert!(
        cmdline(gateway).contains("serve --config"),
        "{}",
        cmdline(gateway)
    );
    assert!(server.ready.spawned_after_ms.is_some());

    let args = std::fs::read_to_string(dir.join("args")).expect("args");
    assert!(args.starts_with("serve --config "), "{args}");
    assert!(args.trim_end().ends_with("--listen 127.0.0.1:0"), "{args}");

    // The config names three connectors whose URLs answer.
    let config = std::fs::read_to_string(dir.join("config.toml")).expect("config");
    let urls: Vec<&str> = config
        .lines()
        .filter_map(|l| l.strip_prefix("url = \""))
        .map(|u| u.trim_end_matches('"'))
        .collect();
    assert_eq!(urls.len(), 3, "{config}");
    assert!(urls[2].ends_with("/connector_2/mcp"));
    let client = connect(urls[2]).await.expect("the downstream answers");
    let result = client
        .call("lookup_record_11", json!({"value": 3}))
        .await
        .expect("call");
    assert_eq!(
        result.structured_content,
        Some(json!({"connector": 2, "tool": 11, "value": 3}))
    );
    client.close().await;

    let config_dir = PathBuf::from(
        std::fs::read_to_string(dir.join("config_dir"))
            .expect("dir")
            .trim(),
    );
    assert!(config_dir.exists());
    let stop = server.stop(Duration::from_secs(10)).await.expect("stop");
    assert!(stop.exited_on_sigterm, "{stop:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("signal"))
            .expect("the gateway saw SIGTERM")
            .trim(),
        "terminated"
    );
    assert!(
        !config_dir.exists(),
        "the temporary config directory is removed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_missing_gateway_binary_fails_before_any_ready_line() {
    let spec = LaunchSpec {
        command: format!(
            "{} serve-synthetic --connecta-bin /nonexistent/connecta",
            shell_quote(BIN)
        ),
        env: vec![
            (ENV_CONNECTORS.into(), "1".into()),
            (ENV_TOOLS_PER_CONNECTOR.into(), "1".into()),
        ],
        ready_timeout: Duration::from_secs(30),
        log_file: None,
    };
    let error = ServerProcess::launch(&spec).await.expect_err("no gateway");
    assert!(
        format!("{error:#}").contains("before its ready line"),
        "{error:#}"
    );
}
