//! The management commands (`token`, `approvals`, `credential`, `activity`,
//! `vault`) read only the parts of the config they use: a `${ENV}` secret
//! they never read (a bearer token, the operator secret, a downstream's
//! header or child environment) need not be set for them, while one they
//! do read (the store URL, the connector a `credential test` calls) still
//! must be, and is reported at its place.

mod support;

use std::process::{Command, Stdio};
use std::time::Duration;

use support::*;

const CONFIG: &str = r#"[auth]
bearer_tokens = ["${MGMT_UNSET_BEARER}"]

[operator]
secret = "${MGMT_UNSET_OPERATOR}"

[[connector]]
id = "notes"
url = "https://notes.example.com/mcp"
headers = { X-Api-Key = "${MGMT_UNSET_NOTES_KEY}" }

[[connector]]
id = "child"
command = "true"
env = { TOKEN = "${MGMT_UNSET_CHILD}" }

[[connector]]
id = "api1"
kind = "api"
base_url = "https://api.example.com"
headers = { X-Extra = "${MGMT_UNSET_API_HEADER}" }
[connector.credential]
label = "API key"
[connector.test]
tool = "ping"
[[connector.tool]]
name = "ping"
description = "Ping"
read_only = true
path = "/ping"
input_schema = { type = "object" }
headers = { X-Tool = "${MGMT_UNSET_TOOL_HEADER}" }
"#;

fn cli(config: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .arg("--config")
        .arg(config)
        .env_remove("CONNECTA_VAULT_KEY")
        .stdin(Stdio::null());
    let (status, out, err) = run(&mut cmd, Duration::from_secs(30));
    (status.success(), out, err)
}

#[test]
fn management_commands_do_not_demand_secrets_they_do_not_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("connecta.toml");
    std::fs::write(&config, CONFIG).expect("write config");

    // `check` reads everything: every unset variable is an error.
    let (ok, _, err) = cli(&config, &["check"]);
    assert!(!ok);
    for var in [
        "MGMT_UNSET_BEARER",
        "MGMT_UNSET_OPERATOR",
        "MGMT_UNSET_NOTES_KEY",
        "MGMT_UNSET_CHILD",
    ] {
        assert!(err.contains(var), "{var}: {err}");
    }

    for args in [
        &["token", "create", "ci"][..],
        &["token", "list"],
        &["approvals", "list"],
        &["activity", "tail"],
        &["credential", "list"],
        &["credential", "rm", "api1"],
    ] {
        let (ok, out, err) = cli(&config, args);
        assert!(ok, "{args:?} demanded what it does not read:\n{out}\n{err}");
        assert!(!err.contains("is not set"), "{args:?}: {err}");
    }

    let value = dir.path().join("value");
    std::fs::write(&value, "k-0123456789abcdef\n").expect("write value");
    let mut set = Command::new(bin());
    set.args(["credential", "set", "api1", "--config"])
        .arg(&config)
        .env_remove("CONNECTA_VAULT_KEY")
        .stdin(Stdio::from(std::fs::File::open(&value).expect("open")));
    let (status, out, err) = run(&mut set, Duration::from_secs(30));
    assert!(status.success(), "credential set: {out}\n{err}");

    // `credential test api1` calls api1: its own header and its tool's are
    // read (and must be set), the other connectors' secrets are not.
    let (ok, _, err) = cli(&config, &["credential", "test", "api1"]);
    assert!(!ok);
    let p = config.display().to_string();
    assert!(
        err.contains(&format!(
            "{p}:21:23: environment variable MGMT_UNSET_API_HEADER is not set"
        )),
        "{err}"
    );
    assert!(err.contains("MGMT_UNSET_TOOL_HEADER"), "{err}");
    for unread in [
        "MGMT_UNSET_BEARER",
        "MGMT_UNSET_OPERATOR",
        "MGMT_UNSET_NOTES_KEY",
        "MGMT_UNSET_CHILD",
    ] {
        assert!(!err.contains(unread), "{unread}: {err}");
    }
}

#[test]
fn a_store_url_a_management_command_reads_must_still_be_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("connecta.toml");
    std::fs::write(
        &config,
        format!("[store]\nurl = \"${{MGMT_UNSET_STORE_URL}}\"\n\n{CONFIG}"),
    )
    .expect("write config");
    let (ok, _, err) = cli(&config, &["token", "list"]);
    assert!(!ok);
    let p = config.display().to_string();
    assert!(
        err.contains(&format!(
            "{p}:2:7: environment variable MGMT_UNSET_STORE_URL is not set"
        )),
        "{err}"
    );
    assert!(!err.contains("MGMT_UNSET_BEARER"), "{err}");
}
