//! `connecta check` reports every problem with file, line and column and
//! exits non-zero; `connecta init` writes a starter config that checks clean.

mod support;

use std::process::Command;
use std::time::Duration;

use support::*;

/// Writes `body` to `path` and runs `connecta check` on it.
fn check_file(path: &std::path::Path, body: &str) -> (std::process::ExitStatus, String, String) {
    std::fs::write(path, body).expect("write config");
    check_config(path)
}

#[test]
fn check_reports_typo_bad_type_and_missing_env_with_positions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "[server]\nlisten = \"127.0.0.1:9000\"\n\n[auth]\nbearer_tokens = [\"${CONNECTA_TEST_MISSING_TOKEN}\"]\n\n[[connector]]\nid = \"notes\"\ncomand = \"connecta\"\ntimeout_ms = \"fast\"\n",
    )
    .expect("write");
    let (status, out, err) = run(
        Command::new(bin())
            .args(["check", "--config"])
            .arg(&path)
            .env_remove("CONNECTA_TEST_MISSING_TOKEN"),
        Duration::from_secs(30),
    );
    assert!(!status.success(), "stdout: {out}");
    let p = path.display().to_string();
    assert!(
        err.contains(&format!(
            "{p}:5:18: environment variable CONNECTA_TEST_MISSING_TOKEN is not set"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("{p}:9:1: unknown key `comand`")),
        "{err}"
    );
    assert!(
        err.contains(&format!("{p}:10:14: `timeout_ms`: invalid type")),
        "{err}"
    );
    assert!(err.contains("problems found"), "{err}");
}

#[test]
fn init_writes_a_config_that_checks_clean_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("connecta.toml");
    let (status, _, err) = run(
        Command::new(bin()).args(["init", "--config"]).arg(&path),
        Duration::from_secs(30),
    );
    assert!(status.success(), "{err}");
    let (status, out, err) = check_config(&path);
    assert!(status.success(), "{err}");
    assert!(
        out.contains("ok") && out.contains("connector demo"),
        "{out}"
    );
    let (status, _, err) = run(
        Command::new(bin()).args(["init", "--config"]).arg(&path),
        Duration::from_secs(30),
    );
    assert!(!status.success());
    assert!(err.contains("already exists"), "{err}");
}

#[test]
fn serve_refuses_an_invalid_config_without_starting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        "[server]\nlisten = \"0.0.0.0:1\"\n[auth]\nopen = true\n",
    )
    .expect("write");
    let (status, _, err) = run(
        Command::new(bin()).args(["serve", "--config"]).arg(&path),
        Duration::from_secs(30),
    );
    assert!(!status.success());
    assert!(
        err.contains(":4:8: auth.open = true is refused on a non-loopback listen"),
        "{err}"
    );
}

#[test]
fn serve_refuses_listen_flag_that_opens_the_endpoint_off_loopback() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "[auth]\nopen = true\n").expect("write");
    let (status, _, err) = run(
        Command::new(bin())
            .args(["serve", "--listen", "0.0.0.0:1", "--config"])
            .arg(&path),
        Duration::from_secs(30),
    );
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("--listen 0.0.0.0:1: auth.open = true is refused on a non-loopback listen"),
        "{err}"
    );
    // The built-in demo config is open too: the flag cannot expose it.
    let (status, _, err) = run(
        Command::new(bin())
            .current_dir(dir.path())
            .args(["serve", "--listen", "0.0.0.0:1"]),
        Duration::from_secs(30),
    );
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("the built-in demo config: --listen 0.0.0.0:1"),
        "{err}"
    );
}

#[test]
fn check_locates_a_duplicate_connector_and_an_out_of_range_retention() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let (status, out, err) = check_file(
        &path,
        "[activity]\nretention_days = 200000000000\n\n[[connector]]\nid = \"demo\"\ncommand = \"connecta\"\nargs = [\"demo-server\"]\n\n[[connector]]\nid = \"demo\"\ncommand = \"connecta\"\nargs = [\"demo-server\"]\n",
    );
    assert!(!status.success(), "stdout: {out}");
    let p = path.display().to_string();
    assert!(
        err.contains(&format!(
            "{p}:2:18: activity.retention_days must be between 1 and 36500"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("{p}:9:1: connector id \"demo\" is declared twice")),
        "{err}"
    );
}

#[test]
fn check_accepts_the_ask_policy_and_locates_an_out_of_range_approval_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let connector = "[[connector]]\nid = \"demo\"\ncommand = \"connecta\"\nargs = [\"demo-server\"]\napproval = \"ask\"\n";
    let (status, out, err) = check_file(
        &path,
        &format!("[approvals]\npolicy = \"ask\"\ntimeout_ms = 30000\n\n{connector}"),
    );
    assert!(status.success(), "stdout: {out}\nstderr: {err}");
    for bad in ["999", "86400001"] {
        let (status, out, err) = check_file(
            &path,
            &format!("[approvals]\npolicy = \"ask\"\ntimeout_ms = {bad}\n\n{connector}"),
        );
        assert!(!status.success(), "{bad}: stdout: {out}");
        assert!(
            err.contains(&format!(
                "{}:3:14: approvals.timeout_ms must be between 1000 and 86400000",
                path.display()
            )),
            "{err}"
        );
    }
}

#[test]
fn check_locates_a_store_url_that_is_not_postgres() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let (status, out, err) = check_file(
        &path,
        "[store]\nurl = \"mysql://root@localhost/x\"\n\n[[connector]]\nid = \"demo\"\ncommand = \"connecta\"\nargs = [\"demo-server\"]\n",
    );
    assert!(!status.success(), "stdout: {out}");
    assert!(
        err.contains(&format!(
            "{}:2:7: store.url must be a PostgreSQL URL",
            path.display()
        )),
        "{err}"
    );
    assert!(!err.contains("mysql://root"), "the URL was echoed: {err}");
}

#[test]
fn check_locates_a_short_operator_secret_and_an_out_of_range_session_without_echoing_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let demo = "[[connector]]\nid = \"demo\"\ncommand = \"connecta\"\nargs = [\"demo-server\"]\n";
    let (status, out, err) = check_file(
        &path,
        &format!("[operator]\nsecret = \"short-Zq1\"\nsession_hours = 169\n\n{demo}"),
    );
    assert!(!status.success(), "stdout: {out}");
    let at = |line: u32, col: u32, what: &str| format!("{}:{line}:{col}: {what}", path.display());
    assert!(
        err.contains(&at(2, 10, "operator.secret must be at least 16 characters")),
        "{err}"
    );
    assert!(
        err.contains(&at(
            3,
            17,
            "operator.session_hours must be between 1 and 168"
        )),
        "{err}"
    );
    assert!(!err.contains("short-Zq1"), "the secret was echoed: {err}");
    let (status, _, err) = check_file(
        &path,
        &format!(
            "[auth]\nbearer_tokens = [\"the-same-secret-for-both-1\"]\n[operator]\nsecret = \"the-same-secret-for-both-1\"\n\n{demo}"
        ),
    );
    assert!(!status.success());
    assert!(
        err.contains("operator.secret must differ from every auth.bearer_tokens value"),
        "{err}"
    );
    let (status, _, err) = check_file(
        &path,
        &format!("[operator]\nsecret = \"                      \"\n\n{demo}"),
    );
    assert!(!status.success());
    assert!(err.contains("at least 16 characters"), "{err}");
    let (status, _, err) = check_file(
        &path,
        &format!("[operator]\nenabled = false\ntheme = \"dark\"\n\n{demo}"),
    );
    assert!(!status.success());
    assert!(err.contains("theme"), "an unknown key is an error: {err}");
    let (status, out, err) = check_file(
        &path,
        &format!(
            "[operator]\nsecret = \"a-long-enough-operator-secret\"\nsession_hours = 1\n\n{demo}"
        ),
    );
    assert!(status.success(), "stdout: {out}\nstderr: {err}");
}

#[test]
fn check_reports_every_problem_of_a_connector_in_one_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let (status, out, err) = check_file(
        &path,
        r#"[[connector]]
id = "Bad Id"
command = "x"
timeout_ms = 0

[[connector]]
id = "api1"
kind = "api"
base_url = "ftp://x"
[[connector.tool]]
name = "t"
method = "FETCH"
path = "noslash"
read_only = true
"#,
    );
    assert!(!status.success(), "stdout: {out}");
    let p = path.display().to_string();
    for expected in [
        ":2:6: connector id \"Bad Id\" must be",
        ":4:14: timeout_ms must be greater than 0",
        ":9:12: connector \"api1\": `base_url` must start with http:// or https://",
        ":10:1: a [[connector.tool]] needs `description`",
        ":10:1: a [[connector.tool]] needs `input_schema`",
        ":12:10: method \"FETCH\" must be GET",
        ":13:8: path must start with /",
    ] {
        assert!(err.contains(&format!("{p}{expected}")), "{expected}\n{err}");
    }
    assert!(err.contains("7 problems found"), "{err}");
}

#[test]
fn malformed_connector_urls_fail_check_and_serve_with_file_line_and_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let body = r#"[[connector]]
id = "empty_host"
url = "http://"

[[connector]]
id = "big_port"
url = "http://127.0.0.1:99999/mcp"

[[connector]]
id = "spaced"
url = "http://bad host/mcp"

[[connector]]
id = "api1"
kind = "api"
base_url = "https://api.exa mple.com"
[[connector.tool]]
name = "t"
description = "d"
read_only = true
path = "/x"
input_schema = { type = "object" }
"#;
    let (status, out, err) = check_file(&path, body);
    assert!(!status.success(), "stdout: {out}");
    let p = path.display().to_string();
    let expected = [
        ":3:7: connector \"empty_host\": `url` is not a valid URL (empty host)",
        ":7:7: connector \"big_port\": `url` is not a valid URL (invalid port number)",
        ":11:7: connector \"spaced\": `url` is not a valid URL",
        ":16:12: connector \"api1\": `base_url` is not a valid URL",
    ];
    for e in expected {
        assert!(err.contains(&format!("{p}{e}")), "{e}\n{err}");
    }
    assert!(err.contains("4 problems found"), "{err}");

    let (status, _, err) = run(
        Command::new(bin())
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&path),
        Duration::from_secs(30),
    );
    assert!(!status.success(), "serve started on bad URLs: {err}");
    for e in expected {
        assert!(err.contains(&format!("{p}{e}")), "{e}\n{err}");
    }
}

#[test]
fn a_schema_that_does_not_compile_is_located_and_reported_with_the_other_problems() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let body = r#"[server]
listen = "not an address"

[[connector]]
id = "api1"
kind = "api"
base_url = "https://api.example.com"
[[connector.tool]]
name = "broken"
description = "d"
read_only = true
path = "/x"
input_schema = { type = "object", properties = { a = { type = "no-such-type" } } }
output_schema = { type = 12 }
[[connector.tool]]
name = "undescribed"
read_only = true
path = "/y"
input_schema = { type = "object" }
"#;
    let (status, out, err) = check_file(&path, body);
    assert!(!status.success(), "stdout: {out}");
    let p = path.display().to_string();
    for e in [
        ":2:10: server.listen",
        ":13:16: tool \"broken\": input_schema does not compile",
        ":14:17: tool \"broken\": output_schema does not compile",
        ":15:1: a [[connector.tool]] needs `description`",
    ] {
        assert!(err.contains(&format!("{p}{e}")), "{e}\n{err}");
    }
    assert!(err.contains("4 problems found"), "{err}");
}
