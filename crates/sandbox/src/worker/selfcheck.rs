//! `--self-check`: proves the hardening enforces on this kernel.
//!
//! The worker hardens itself exactly as before a first program (same
//! [`super::harden::apply`], default bounds), then attempts operations a
//! compromised worker would want — open a file, create a file, open TCP and
//! Unix sockets, spawn a process, signal another process — and prints one
//! JSON object naming each probe and its outcome. It exits 0 only if every
//! probe was refused. The pool never runs this mode; tests and operators do.
//!
//! Must never: be reachable from a program. It is selected by a command-line
//! argument of the worker process, before any frame is read.

use std::process::ExitCode;

#[cfg(target_os = "linux")]
pub fn run() -> ExitCode {
    use std::io::Write as _;

    let limits = crate::PoolOptions::new("unused", Vec::<String>::new()).limits();
    let hardening = match super::harden::apply(&limits) {
        Ok(report) => report,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "hardening failed: {e}");
            return ExitCode::from(3);
        }
    };
    let probes = probes();
    let all_refused = probes
        .iter()
        .all(|(_, outcome)| outcome.as_str().is_some_and(|o| o.starts_with("refused")));
    let report = serde_json::json!({
        "hardening": hardening,
        "probes": probes.into_iter().collect::<serde_json::Map<_, _>>(),
        "all_refused": all_refused,
    });
    let _ = writeln!(std::io::stdout(), "{report}");
    if all_refused {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(not(target_os = "linux"))]
pub fn run() -> ExitCode {
    eprintln!("the sandbox self-check is implemented for Linux only");
    ExitCode::FAILURE
}

#[cfg(target_os = "linux")]
fn probes() -> Vec<(String, serde_json::Value)> {
    use std::net::{TcpListener, TcpStream, UdpSocket};
    use std::os::unix::net::UnixStream;

    fn outcome<T>(r: std::io::Result<T>) -> serde_json::Value {
        match r {
            Ok(_) => "ALLOWED".into(),
            Err(e) => format!("refused: {e}").into(),
        }
    }
    let kill_init =
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(1), None).map_err(std::io::Error::from);
    vec![
        (
            "open /etc/passwd".into(),
            outcome(std::fs::File::open("/etc/passwd")),
        ),
        (
            "read /proc/self/environ".into(),
            outcome(std::fs::read("/proc/self/environ")),
        ),
        (
            "create /tmp file".into(),
            outcome(std::fs::File::create("/tmp/connecta-sandbox-self-check")),
        ),
        (
            "tcp connect 127.0.0.1:9".into(),
            outcome(TcpStream::connect("127.0.0.1:9")),
        ),
        (
            "tcp listen 127.0.0.1:0".into(),
            outcome(TcpListener::bind("127.0.0.1:0")),
        ),
        (
            "udp bind 127.0.0.1:0".into(),
            outcome(UdpSocket::bind("127.0.0.1:0")),
        ),
        ("unix socketpair".into(), outcome(UnixStream::pair())),
        (
            "spawn /bin/true".into(),
            outcome(std::process::Command::new("/bin/true").spawn()),
        ),
        ("signal pid 1".into(), outcome(kill_init)),
    ]
}
