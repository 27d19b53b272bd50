//! The official Python and TypeScript SDK clients connect to the real binary,
//! list the tools, search, call a read-only tool, are refused a destructive
//! one with `destructive_tool_requires_approval`, and call it through
//! `call_destructive_tool`. The Python client also works over stdio, and the
//! current Python SDK (which probes `server/discover` first) connects promptly.

mod support;

use std::process::Command;
use std::time::Duration;

use support::*;

#[test]
fn python_sdk_client_over_streamable_http() {
    let gw = Gateway::start(&demo_connector());
    let (status, out, err) = run(
        Command::new(python())
            .arg(peers().join("py_client.py"))
            .args(["http", &gw.url()]),
        Duration::from_secs(120),
    );
    assert!(
        status.success() && out.contains("OK"),
        "stdout:\n{out}\nstderr:\n{err}\ngateway:\n{}",
        gw.stderr()
    );
}

#[test]
fn python_sdk_client_over_stdio() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = stdio_config(dir.path(), &demo_connector());
    let (status, out, err) = run(
        Command::new(python())
            .arg(peers().join("py_client.py"))
            .arg("stdio")
            .arg(bin())
            .arg(&config),
        Duration::from_secs(120),
    );
    assert!(
        status.success() && out.contains("OK"),
        "stdout:\n{out}\nstderr:\n{err}"
    );
}

#[test]
fn typescript_sdk_client_over_streamable_http() {
    let gw = Gateway::start(&demo_connector());
    let (status, out, err) = run(
        Command::new(node())
            .arg(peers().join("ts_client.mjs"))
            .arg(gw.url())
            .current_dir(peers()),
        Duration::from_secs(120),
    );
    assert!(
        status.success() && out.contains("OK"),
        "stdout:\n{out}\nstderr:\n{err}\ngateway:\n{}",
        gw.stderr()
    );
}

#[test]
fn modern_python_client_probes_discover_and_connects_promptly() {
    let gw = Gateway::start(&demo_connector());
    let (status, out, err) = run(
        Command::new(python_modern())
            .arg(peers().join("py_client_modern.py"))
            .arg(gw.url()),
        Duration::from_secs(120),
    );
    assert!(
        status.success() && out.contains("OK"),
        "stdout:\n{out}\nstderr:\n{err}\ngateway:\n{}",
        gw.stderr()
    );
}
