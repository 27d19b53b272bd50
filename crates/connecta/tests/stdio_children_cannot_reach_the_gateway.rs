//! A stdio downstream runs as the gateway's user, but reaches neither the
//! gateway's memory nor its files, through the real binary: a real child
//! (`tests/peers/probe_server.py`) tries to read `/proc/<gateway>/environ`
//! and the files of the data directory and to plant a file there, and
//! reports what it got; the gateway process itself is not dumpable, while
//! `/proc/<pid>/status` (which the bench reads for memory) stays readable.
//!
//! Root may read any process's `/proc` files, so a test run as root starts
//! the gateway (and so its children) as `nobody`, the way an operator runs
//! it; any other user runs it as itself. The data directory is not under
//! `/tmp`: there children are not confined (they would lose the right to
//! create files in `/tmp`), which the gateway says in its log.

mod support;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use support::*;

/// In the gateway's environment only: a child that can read it finds it.
const MARKER: &str = "gateway-environment-marker-7d1c";

const NOBODY: u32 = 65534;

/// `connecta serve` in `dir` with `body` as its config, as `nobody` when
/// this test runs as root; stopped on drop.
struct Served {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
    /// Where the data directory's parent is, when not beside the config.
    data_root: Option<tempfile::TempDir>,
}

impl Served {
    /// With the data directory beside the config file (in `/tmp`).
    fn start(body: &str) -> Served {
        Served::start_with_data(body, None)
    }

    /// With the data directory in `data_root` when given.
    fn start_with_data(body: &str, data_root: Option<tempfile::TempDir>) -> Served {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("connecta.toml");
        let server = match &data_root {
            Some(root) => format!(
                "[server]\ndata_dir = {}\n\n",
                q(&root.path().join("data").display().to_string())
            ),
            None => String::new(),
        };
        std::fs::write(&config, format!("{server}[auth]\nopen = true\n\n{body}")).expect("config");
        let mut cmd = Command::new(bin());
        cmd.args(["serve", "--config"])
            .arg(&config)
            .args(["--listen", "127.0.0.1:0"])
            .env("PROBE_MARKER", MARKER)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if nix::unistd::geteuid().is_root() {
            use std::os::unix::process::CommandExt;
            std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).expect("chown");
            std::os::unix::fs::chown(&config, Some(NOBODY), Some(NOBODY)).expect("chown");
            if let Some(root) = &data_root {
                std::os::unix::fs::chown(root.path(), Some(NOBODY), Some(NOBODY)).expect("chown");
            }
            cmd.uid(NOBODY).gid(NOBODY);
        }
        let mut child = cmd.spawn().expect("spawn connecta");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the ready line");
        let ready: Value = serde_json::from_str(&line).expect("ready JSON");
        assert_eq!(ready["type"], "ready", "{line}");
        let port = ready["port"].as_u64().expect("port") as u16;
        Served {
            child,
            port,
            dir,
            data_root,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn data(&self) -> PathBuf {
        self.data_root
            .as_ref()
            .map_or(self.dir.path(), |r| r.path())
            .join("data")
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("connecta.toml")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
    }
}

/// A `python3` the gateway's user can run: the system one when that user
/// is `nobody`, else the test peers' interpreter.
fn interpreter() -> String {
    if !nix::unistd::geteuid().is_root() {
        return python();
    }
    ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("a system python3 that nobody may run")
        .to_owned()
}

/// Whether `dir` or a directory above it is sticky and writable by
/// everyone (`/tmp`, `/var/tmp`): a data directory there is not hidden from
/// stdio children.
fn under_a_shared_directory(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    dir.ancestors()
        .any(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o1002 == 0o1002))
}

/// Where the data directory's parent can go: the build's scratch directory,
/// unless the checkout itself is under `/tmp` (a clone made there); then
/// `/var/lib` as root (the gateway runs as `nobody`, who may pass through
/// it), else the home directory of the user the gateway runs as.
fn confinable_parent() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if !under_a_shared_directory(&target) {
        return target;
    }
    let other = if nix::unistd::geteuid().is_root() {
        PathBuf::from("/var/lib")
    } else {
        PathBuf::from(std::env::var_os("HOME").expect("HOME"))
    };
    assert!(
        !under_a_shared_directory(&other),
        "no directory outside /tmp to put the data directory in"
    );
    other
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_child_reads_neither_the_gateway_environment_nor_its_data_dir() {
    let data_root = tempfile::Builder::new()
        .prefix("connecta-data-")
        .tempdir_in(confinable_parent())
        .expect("a directory outside /tmp");
    let gw = Served::start_with_data(
        &format!(
            "[[connector]]\nid = \"probe\"\ncommand = {}\nargs = [{}]\n",
            q(&interpreter()),
            q(&peers().join("probe_server.py").display().to_string())
        ),
        Some(data_root),
    );
    let client = connect(&format!("http://127.0.0.1:{}/mcp", gw.port)).await;
    let data = gw.data();
    let db = data.join("connecta.db").display().to_string();
    let secret = data.join("operator-secret").display().to_string();
    let config = gw.config().display().to_string();
    let (v, is_error) = call(
        &client,
        "call_tool",
        json!({"address": "probe.probe", "args": {"paths": [
            "/proc/{parent}/environ", &db, &secret, &config, "/etc/hostname"
        ]}}),
    )
    .await;
    assert!(!is_error, "{v}");
    assert_eq!(
        v["parent"],
        json!(gw.pid()),
        "the child's parent is the gateway: {v}"
    );
    let results = &v["results"];
    let environ = format!("/proc/{}/environ", gw.pid());
    for refused in [environ.as_str(), &db, &secret] {
        let got = &results[refused];
        assert!(got["error"].is_string(), "{refused} was readable: {got}");
    }
    assert!(
        !v.to_string().contains(MARKER),
        "the environment leaked: {v}"
    );
    // The rest of the machine is as before: the config file beside the data
    // directory and a system file read fine.
    for readable in [config.as_str(), "/etc/hostname"] {
        assert!(results[readable]["read"].is_string(), "{readable}: {v}");
    }

    // Nothing can be planted in the data directory either.
    let planted = data.join("connecta.db-journal");
    let (v, is_error) = call(
        &client,
        "call_tool",
        json!({"address": "probe.plant", "args": {"path": planted.display().to_string()}}),
    )
    .await;
    assert!(!is_error, "{v}");
    assert!(v["error"].is_string(), "{v}");
    assert!(!planted.exists());
}

/// The gateway is not dumpable: another process of its user cannot read
/// its `/proc/<pid>/environ` (or memory, descriptors, maps). The kernel
/// shows it by handing the process's `/proc` files to root (a test run as
/// root sees that on the gateway it runs as `nobody`); any other user
/// tries the read itself. `/proc/<pid>/status` stays readable.
#[test]
fn the_gateway_is_not_dumpable_and_its_status_stays_readable() {
    let gw = Served::start(&demo_connector());
    let environ = format!("/proc/{}/environ", gw.pid());
    if nix::unistd::geteuid().is_root() {
        let owner = std::fs::metadata(&environ).expect("stat").uid();
        assert_eq!(
            owner, 0,
            "a dumpable process's /proc files belong to its user"
        );
    } else {
        let err = std::fs::read(&environ).expect_err("environ is readable");
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{err}");
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", gw.pid())).expect("status");
    assert!(status.contains("VmRSS:"), "{status}");
}
