//! One worker process seen from the parent: spawn, handshake, frame I/O,
//! kill and reap.
//!
//! A worker is started with an empty environment, cwd `/`, piped stdin and
//! stdout, stderr forwarded line by line into `tracing`, in its own process
//! group, and with a parent-death signal so a dead gateway leaves no worker
//! behind. Frames to the worker are queued and written only while the pipe
//! accepts them ([`Outbox`]), from the same `select!` that reads, so the run
//! loop never blocks on a full pipe while the worker is itself blocked
//! writing to us, and a write costs no task hand-off.
//!
//! Must never: signal a process it has already reaped (the pid may have been
//! reused), or leave a child unreaped once it is retired.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use super::PoolOptions;
use crate::protocol::{
    self, FRAME_SLACK, FrameReader, FromWorker, HardeningReport, ToWorker, WorkerInit, WorkerLimits,
};

/// Why a worker could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("could not start the sandbox worker `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("the sandbox worker did not report ready: {0}")]
    Handshake(String),
}

/// Longest stderr line forwarded to the log.
const MAX_STDERR_LINE: usize = 2048;

#[derive(Debug)]
pub(crate) struct WorkerProcess {
    child: Child,
    pub(crate) pid: u32,
    pub(crate) outbox: Outbox,
    pub(crate) frames: FrameReader<ChildStdout>,
    pub(crate) runs: u32,
    pub(crate) hardening: HardeningReport,
    stderr: Option<JoinHandle<()>>,
}

impl WorkerProcess {
    /// Starts a worker and waits for its `Ready`.
    pub(crate) async fn spawn(
        options: &PoolOptions,
        limits: &WorkerLimits,
    ) -> Result<Self, SpawnError> {
        let mut command = Command::new(&options.worker_program);
        command
            .args(&options.worker_args)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        crate::sys::worker_pre_exec(&mut command);
        let mut child = command.spawn().map_err(|source| SpawnError::Spawn {
            program: options.worker_program.display().to_string(),
            source,
        })?;
        let pid = child.id().unwrap_or(0);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(SpawnError::Handshake("worker pipes missing".into()));
        };

        let stderr = tokio::spawn(forward_stderr(pid, stderr));

        let max_frame = limits
            .max_value_bytes
            .max(limits.max_arg_bytes)
            .max(limits.max_log_bytes)
            + FRAME_SLACK;
        let mut worker = WorkerProcess {
            child,
            pid,
            outbox: Outbox {
                stdin,
                queue: VecDeque::new(),
                written: 0,
            },
            frames: FrameReader::new(stdout, max_frame),
            runs: 0,
            hardening: HardeningReport::default(),
            stderr: Some(stderr),
        };

        let init = ToWorker::Init(WorkerInit {
            limits: limits.clone(),
            harden: options.harden,
            shortcuts: options.shortcuts.clone(),
        });
        let frame = protocol::encode(&init).map_err(|e| SpawnError::Handshake(e.to_string()))?;
        // The worker reads `init` before it writes anything: no deadlock.
        let sent = worker.outbox.stdin.write_all(&frame).await;
        let ready = match sent {
            Ok(()) => tokio::time::timeout(options.startup_timeout, worker.frames.next()).await,
            Err(e) => Ok(Err(e.into())),
        };
        let outcome = match ready {
            Err(_) => Err("timed out".to_owned()),
            Ok(Err(e)) => Err(e.to_string()),
            Ok(Ok(None)) => Err("the worker exited during startup".to_owned()),
            Ok(Ok(Some(body))) => match protocol::decode::<FromWorker>(&body) {
                Ok(FromWorker::Ready { hardening, .. }) => Ok(hardening),
                Ok(_) => Err("unexpected first frame".to_owned()),
                Err(e) => Err(e.to_string()),
            },
        };
        match outcome {
            Ok(hardening) => {
                if options.harden
                    && !(hardening.seccomp && hardening.no_new_privs && hardening.no_capabilities)
                {
                    worker.reap().await;
                    return Err(SpawnError::Handshake(
                        "the worker did not apply its hardening".into(),
                    ));
                }
                worker.hardening = hardening;
                Ok(worker)
            }
            Err(reason) => {
                let status = worker.reap().await;
                Err(SpawnError::Handshake(match status {
                    Some(s) => format!("{reason} ({})", describe_exit(s)),
                    None => reason,
                }))
            }
        }
    }

    /// Queues a frame; it is written by [`Outbox::write_some`] in the run loop.
    pub(crate) fn send(&mut self, frame: Vec<u8>) {
        self.outbox.queue.push_back(frame);
    }

    /// Whether the process has already exited (checked before reuse).
    pub(crate) fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// `SIGKILL` to the worker's process group and to the worker itself.
    /// A no-op once the child has been reaped.
    pub(crate) fn kill(&mut self) {
        if let Some(pid) = self.child.id() {
            let pid = nix::unistd::Pid::from_raw(pid as i32);
            let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
            let _ = self.child.start_kill();
        }
    }

    /// After the worker closed its stdout: its exit status, killing it if it
    /// lingers.
    pub(crate) async fn exit_status(&mut self) -> Option<ExitStatus> {
        match tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => {
                self.kill();
                self.child.wait().await.ok()
            }
        }
    }

    /// Kills and reaps the worker and stops its I/O tasks.
    pub(crate) async fn reap(mut self) -> Option<ExitStatus> {
        self.kill();
        let status = self.child.wait().await.ok();
        if let Some(stderr) = self.stderr.take() {
            // Let the forwarder drain what the worker wrote before dying.
            let _ = tokio::time::timeout(Duration::from_millis(200), stderr).await;
        }
        status
    }
}

/// Frames waiting to be written to the worker's stdin, in order.
#[derive(Debug)]
pub(crate) struct Outbox {
    stdin: ChildStdin,
    queue: VecDeque<Vec<u8>>,
    /// Bytes of the front frame already written.
    written: usize,
}

impl Outbox {
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Writes once (cancel-safe: a dropped call wrote nothing). A failed
    /// write means the worker is gone; the queue is dropped and the reader
    /// reports the exit.
    pub(crate) async fn write_some(&mut self) {
        let Some(front) = self.queue.front() else {
            return;
        };
        match self.stdin.write(&front[self.written..]).await {
            Ok(n) if n > 0 => {
                self.written += n;
                if self.written == front.len() {
                    self.queue.pop_front();
                    self.written = 0;
                }
            }
            _ => {
                self.queue.clear();
                self.written = 0;
            }
        }
    }
}

async fn forward_stderr(pid: u32, mut stderr: tokio::process::ChildStderr) {
    let emit = |line: &[u8]| {
        let text = String::from_utf8_lossy(line);
        tracing::warn!(target: "connecta_sandbox::worker", worker_pid = pid, "{}", text.trim_end());
    };
    let mut chunk = [0u8; 4096];
    let mut line = Vec::new();
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &chunk[..n] {
            if b == b'\n' {
                emit(&line);
                line.clear();
            } else if line.len() < MAX_STDERR_LINE {
                // Bounded: a worker cannot grow the gateway's memory.
                line.push(b);
            }
        }
    }
    if !line.is_empty() {
        emit(&line);
    }
}

/// "exit status 2", "killed by signal 9 (SIGKILL)".
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(sig) = status.signal() {
        let name = nix::sys::signal::Signal::try_from(sig)
            .map(|s| s.as_str())
            .unwrap_or("unknown");
        format!("killed by signal {sig} ({name})")
    } else {
        format!("exit status {}", status.code().unwrap_or(-1))
    }
}
