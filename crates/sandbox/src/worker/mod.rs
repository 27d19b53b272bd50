//! The sandbox worker process: `connecta __sandbox-worker`.
//!
//! A worker reads frames on stdin and writes frames on stdout
//! ([`crate::protocol`]). It receives its bounds once (`Init`), initialises
//! the engine, hardens itself (no new privileges, rlimits, a seccomp
//! allowlist), reports `Ready`, and then runs one program at a time, each on
//! a fresh QuickJS runtime and context, for as long as the parent keeps it.
//!
//! The worker is single-threaded and synchronous: while a program waits for
//! a host call, the worker blocks reading the reply.
//!
//! Must never: write anything but frames to stdout, read anything but
//! frames from stdin, or open any other channel. Diagnostics go to stderr,
//! which the parent forwards to its log.

mod bridge;
mod engine;
#[cfg(target_os = "linux")]
mod harden;
mod json;
mod normalize;
mod selfcheck;
mod shortcuts;

use std::io::{self, BufRead, BufReader, Read, Write as _};
use std::os::fd::AsFd;
use std::process::ExitCode;

use crate::protocol::{
    self, FrameError, FromWorker, HardeningReport, MAX_FRAME_TO_WORKER, ToWorker,
};

/// Why a worker stops. Each ends the process; the parent sees the exit and
/// replaces the worker.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("protocol: {0}")]
    Frame(#[from] FrameError),
    #[error("protocol: {0}")]
    Protocol(&'static str),
    #[error("the parent closed the pipe")]
    ParentGone,
    #[error("engine: {0}")]
    Engine(#[from] rquickjs::Error),
    #[error("hardening failed: {0}")]
    Harden(String),
}

/// The worker's pipes: framed reads from `input`, unbuffered writes to fd 1.
pub struct Io<R> {
    input: R,
}

impl<R: Read> Io<R> {
    fn read(&mut self) -> Result<Option<ToWorker>, WorkerError> {
        match protocol::read_frame(&mut self.input, MAX_FRAME_TO_WORKER)? {
            Some(body) => Ok(Some(protocol::decode(&body)?)),
            None => Ok(None),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), WorkerError> {
        write_stdout(bytes)
    }

    fn send(&mut self, message: &FromWorker) -> Result<(), WorkerError> {
        let frame = protocol::encode(message)?;
        self.write(&frame)
    }
}

/// Writes straight to the stdout descriptor, bypassing std's line
/// buffering: one `write` per flush point, and nothing else ever writes there.
fn write_stdout(mut bytes: &[u8]) -> Result<(), WorkerError> {
    let stdout = io::stdout();
    let fd = stdout.as_fd();
    while !bytes.is_empty() {
        match nix::unistd::write(fd, bytes) {
            Ok(0) => return Err(WorkerError::ParentGone),
            Ok(n) => bytes = &bytes[n..],
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return Err(WorkerError::ParentGone),
        }
    }
    Ok(())
}

/// Entry point of the hidden `__sandbox-worker` subcommand (and of the
/// `connecta-sandbox-worker` binary). Returns when the parent closes stdin.
///
/// With the argument `--self-check` it instead hardens itself, tries a list
/// of forbidden operations, prints a JSON report and exits non-zero if any
/// succeeded. The pool never passes it.
pub fn worker_main() -> ExitCode {
    if std::env::args().skip(1).any(|a| a == "--self-check") {
        return selfcheck::run();
    }
    let stdin = io::stdin();
    let mut io = Io {
        input: BufReader::with_capacity(64 * 1024, stdin.lock()),
    };
    match serve(&mut io) {
        Ok(()) | Err(WorkerError::ParentGone) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "connecta sandbox worker: {e}");
            ExitCode::from(2)
        }
    }
}

fn serve<R: BufRead>(io: &mut Io<R>) -> Result<(), WorkerError> {
    let init = match io.read()? {
        Some(ToWorker::Init(init)) => init,
        Some(_) => return Err(WorkerError::Protocol("expected `init` first")),
        None => return Ok(()),
    };
    let mut engine = engine::Engine::new(
        init.limits.clone(),
        shortcuts::ShortcutTable::new(init.shortcuts),
    );
    // The engine and allocator are initialised before the filter goes on.
    engine.prepare()?;
    let hardening = if init.harden {
        harden_process(&init.limits)?
    } else {
        HardeningReport::default()
    };
    io.send(&FromWorker::Ready {
        pid: std::process::id(),
        hardening,
    })?;
    loop {
        match io.read()? {
            None => return Ok(()),
            Some(ToWorker::Run(spec)) => engine.run(spec, io)?,
            // A reply that raced with the previous run's `Done`.
            Some(ToWorker::Resolve { .. } | ToWorker::Reject { .. }) => {}
            Some(ToWorker::Init(_)) => return Err(WorkerError::Protocol("`init` sent twice")),
        }
    }
}

#[cfg(target_os = "linux")]
fn harden_process(limits: &protocol::WorkerLimits) -> Result<HardeningReport, WorkerError> {
    harden::apply(limits).map_err(|e| WorkerError::Harden(e.to_string()))
}

#[cfg(not(target_os = "linux"))]
fn harden_process(_limits: &protocol::WorkerLimits) -> Result<HardeningReport, WorkerError> {
    Err(WorkerError::Harden(
        "worker hardening is implemented for Linux only".into(),
    ))
}
