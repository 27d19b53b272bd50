//! Memory is read from /proc for a real process tree: the server, its
//! sandbox workers (by the `__sandbox-worker` mark) and its other children.

use std::process::Stdio;
use std::time::Duration;

use connecta_bench::rss::{SANDBOX_WORKER_MARK, descendants, rss_bytes, snapshot};
use tokio::process::Command;

#[tokio::test]
async fn a_process_tree_is_split_into_server_workers_and_other_children() {
    // A "server" (sh) with one child marked as a sandbox worker (a shell
    // whose $0 carries the mark; `; :` keeps it from exec'ing into sleep)
    // and one plain child.
    let script = format!("sh -c 'sleep 30; :' {SANDBOX_WORKER_MARK} & sleep 31 & wait");
    // Its own process group, so the sleeps go with it at the end; no
    // inherited output, so nothing holds the harness's pipes open.
    let mut server = Command::new("sh")
        .arg("-c")
        .arg(script)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let pid = server.id().expect("running");

    // The children appear shortly after the spawn.
    let mut found = Vec::new();
    for _ in 0..100 {
        found = descendants(pid).expect("read /proc");
        if found.len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        found.len() >= 3,
        "worker shell, its sleep, and the plain sleep: {found:?}"
    );

    let tree = snapshot(pid, None).expect("snapshot");
    assert_eq!(tree.server.pid, pid);
    assert!(tree.server.rss_bytes > 0);
    // A running program has its own code mapped from its file, and that
    // is part of its RSS, never more.
    let file = tree.server.file_bytes.expect("the kernel reports RssFile");
    assert!(
        file > 0 && file <= tree.server.rss_bytes,
        "{file} of {}",
        tree.server.rss_bytes
    );
    assert_eq!(tree.sandbox_workers.len(), 1, "{tree:?}");
    assert!(
        tree.sandbox_workers[0]
            .command
            .contains(SANDBOX_WORKER_MARK)
    );
    assert!(
        tree.other_children.iter().any(|c| c.command == "sleep 31"),
        "{tree:?}"
    );
    assert!(
        tree.other_children
            .iter()
            .all(|c| !c.command.contains(SANDBOX_WORKER_MARK))
    );
    assert!(tree.launcher.is_none());

    // A launcher that is not the server is reported on its own.
    let me = std::process::id();
    let tree = snapshot(pid, Some(me)).expect("snapshot");
    assert_eq!(tree.launcher.map(|l| l.pid), Some(me));

    let killed = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .status()
        .expect("run kill");
    assert!(killed.success(), "kill the group: {killed}");
    let _ = server.wait().await;
}

#[tokio::test]
async fn rss_grows_with_what_a_real_server_holds() {
    // The synthetic downstream holds its whole catalog: 100,000 tools must
    // reside in measurably more memory than 10.
    let bin = env!("CARGO_BIN_EXE_connecta-bench");
    let start = |tools: usize| {
        use std::process::Stdio;
        Command::new(bin)
            .args([
                "synthetic-downstream",
                "--connectors",
                "1",
                "--tools",
                &tools.to_string(),
            ])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn")
    };
    let mut small = start(10);
    let mut big = start(100_000);
    // Wait for both ready lines: the catalogs are built by then.
    for child in [&mut small, &mut big] {
        use tokio::io::AsyncBufReadExt;
        let stdout = child.stdout.take().expect("piped");
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let line = lines
            .next_line()
            .await
            .expect("read")
            .expect("a ready line");
        assert!(line.contains("ready"), "{line}");
    }
    let small_rss = rss_bytes(small.id().expect("running")).expect("rss");
    let big_rss = rss_bytes(big.id().expect("running")).expect("rss");
    assert!(small_rss > 0);
    assert!(
        big_rss > small_rss + (10 << 20),
        "100,000 tools: {big_rss} B, 10 tools: {small_rss} B"
    );
    for mut child in [small, big] {
        child.start_kill().expect("kill");
        let _ = child.wait().await;
    }
    assert!(rss_bytes(u32::MAX - 1).is_err(), "no such process");
}
