//! A stdio child that cannot start, or exits as soon as it starts, is
//! answered at once while its supervisor waits out the backoff: `unavailable`
//! with the failure and `retryAfterMs` until the next attempt, not a wait to
//! the caller's deadline (which was 120 s for a catalog load). A child that
//! is merely slow to start is still waited for.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use connecta_connectors::{Connector, McpConnector, McpOptions};
use connecta_core::config::{McpTransport, StartMode};
use connecta_core::error::ErrorCode;

/// Far longer than any answer here may take.
const DEADLINE: Duration = Duration::from_secs(120);
/// "At once", with room for a loaded machine.
const PROMPT: Duration = Duration::from_secs(10);

fn stdio(id: &str, command: &str, args: &[&str]) -> McpConnector {
    let options = McpOptions {
        start: StartMode::Lazy,
        // Long enough that every call below lands inside the first backoff.
        backoff_min: Duration::from_secs(60),
        backoff_max: Duration::from_secs(60),
        ..McpOptions::default()
    };
    McpConnector::new(
        id,
        McpTransport::Stdio {
            command: command.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: Vec::new(),
            cwd: None,
        },
        options,
    )
}

async fn assert_answered_at_once(c: &McpConnector, failure: &str) {
    for round in 0..3 {
        let started = Instant::now();
        let e = c
            .list_tools(DEADLINE)
            .await
            .expect_err("a child that cannot run lists no tools");
        assert!(
            started.elapsed() < PROMPT,
            "round {round} took {:?}",
            started.elapsed()
        );
        assert_eq!(e.code, ErrorCode::Unavailable, "{e:?}");
        assert!(e.retryable, "{e:?}");
        assert!(e.message.contains(failure), "{e:?}");
        let ms = e.retry_after_ms.expect("when the next start is");
        assert!(ms > 0 && ms <= 60_000, "{e:?}");
    }
    c.shutdown().await;
}

#[tokio::test]
async fn a_command_that_cannot_start_is_answered_at_once() {
    let c = stdio("bad", "/nonexistent/bin", &[]);
    assert_answered_at_once(&c, "could not start").await;
}

#[tokio::test]
async fn a_child_that_exits_at_once_is_answered_at_once() {
    let c = stdio("crashy", "/bin/sh", &["-c", "exit 3"]);
    assert_answered_at_once(&c, "crashy is not running").await;
}

#[tokio::test]
async fn a_child_that_is_slow_to_start_is_waited_for() {
    let peers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers");
    let python = peers.join(".venv/bin/python");
    let server = peers.join("py_server.py");
    assert!(
        python.exists() && server.exists(),
        "test peers are not installed: run scripts/test"
    );
    let script = format!(
        "sleep 2; exec '{}' '{}' stdio",
        python.display(),
        server.display()
    );
    let c = stdio("slow", "/bin/sh", &["-c", &script]);
    let tools = c
        .list_tools(DEADLINE)
        .await
        .expect("a starting child is waited for");
    assert!(!tools.is_empty());
    c.shutdown().await;
}
