//! CPU time is read from /proc for a real process and counted for its tree.

use std::time::{Duration, Instant};

use connecta_bench::cpu::{cpu_seconds, tree_cpu_seconds};
use tokio::process::Command;

#[tokio::test]
async fn a_spinning_child_is_counted_in_its_parents_tree() {
    // A parent that only waits, and a child that spins.
    let mut parent = Command::new("sh")
        .arg("-c")
        .arg("sh -c 'while :; do :; done' & wait")
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let pid = parent.id().expect("running");
    let started = Instant::now();
    let mut tree = 0.0;
    while started.elapsed() < Duration::from_secs(10) {
        tree = tree_cpu_seconds(pid).expect("read /proc");
        if tree >= 0.1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let own = cpu_seconds(pid).expect("read /proc");
    assert!(tree >= 0.1, "the spinning child used {tree} s");
    assert!(
        own < tree,
        "the waiting parent alone ({own} s) is less than its tree ({tree} s)"
    );
    // The group (ours) holds the spinner too; end both.
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = parent.wait().await;
}
