//! Stdio downstreams: a supervisor task owns the child process. It starts the
//! child, connects the MCP client over its stdin/stdout, publishes the
//! session, and when the child dies restarts it with exponential backoff.
//! On shutdown it closes the session, then stops the whole process group:
//! stdin closed → SIGTERM → SIGKILL, and always reaps.
//!
//! A caller waits for a child that is starting, but not for one that is
//! waiting out its backoff after a failed start or an exit: that one is
//! answered at once with `unavailable` and when the next attempt is due, so
//! a command that cannot run costs a request nothing, not its whole deadline.
//!
//! Children get a minimal environment (a few passthrough variables plus the
//! connector's `env`), never the gateway's own: the gateway's environment
//! holds its vault key and tokens.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use connecta_core::error::{ErrorCode, MAX_ECHO_BYTES, ToolError, clamp_text};
use connecta_core::secret::Secret;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::TransportAdapterAsyncRW;
use rmcp::transport::{IntoTransport, Transport};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::handler::lifecycle;
use super::{Session, Shared};
use crate::ConnectorState;

/// Variables a child inherits from the gateway; everything else it needs
/// must be set in the connector's `env`.
const PASSTHROUGH_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SHELL",
    "TERM",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
];

/// A child that stays up this long resets the backoff to its minimum.
const HEALTHY_AFTER: Duration = Duration::from_secs(30);
/// How long a child gets to exit after stdin closes, then after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
pub(crate) struct ChildSpec {
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, Secret)>,
    pub(crate) cwd: Option<String>,
    /// Paths the child must not reach (the gateway's data directory and
    /// vault key file); see `process::hide_paths`.
    pub(crate) hidden: Vec<PathBuf>,
}

/// The supervisor is waiting out a backoff: the last attempt failed (or the
/// child exited), and the next one starts at `until`.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    until: Instant,
    why: String,
}

pub(crate) struct Supervisor {
    shared: Arc<Shared>,
    spec: ChildSpec,
    task: std::sync::Mutex<Option<JoinHandle<()>>>,
    /// Set while the supervisor sleeps between attempts, cleared when the
    /// next attempt starts; callers waiting for a session watch it.
    backoff: Arc<watch::Sender<Option<Backoff>>>,
}

impl Supervisor {
    pub(crate) fn new(shared: Arc<Shared>, spec: ChildSpec) -> Supervisor {
        Supervisor {
            shared,
            spec,
            task: std::sync::Mutex::new(None),
            backoff: Arc::new(watch::channel(None).0),
        }
    }

    pub(crate) fn spawn(&self) {
        let shared = self.shared.clone();
        let spec = self.spec.clone();
        let handle = tokio::spawn(supervise(shared, spec, self.backoff.clone()));
        *self.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
    }

    /// Wait for a live session until `deadline` while the child is starting;
    /// answer at once while it is in backoff after a failure.
    pub(crate) async fn session(&self, deadline: Instant) -> Result<Session, ToolError> {
        let mut rx = self.shared.session.subscribe();
        let mut backoff = self.backoff.subscribe();
        loop {
            if let Some(s) = rx.borrow_and_update().clone() {
                return Ok(s);
            }
            if self.shared.shutdown.is_cancelled() {
                return Err(ToolError::with_cause(
                    ErrorCode::Unavailable,
                    format!("{} is shutting down", self.shared.id),
                    false,
                ));
            }
            let now = Instant::now();
            // A backoff whose time is up means the next attempt is about to
            // start: wait for it like any start.
            if let Some(b) = backoff.borrow_and_update().clone()
                && b.until > now
            {
                let ms = (b.until - now).as_millis().max(1) as u64;
                return Err(ToolError::with_cause(
                    ErrorCode::Unavailable,
                    format!(
                        "{} is not running ({}); the next start is in {ms} ms",
                        self.shared.id, b.why
                    ),
                    true,
                )
                .retry_after(ms));
            }
            // Both senders live as long as `self`: `changed` does not fail
            // while we wait (and if it did, waiting would be pointless).
            let woke = tokio::select! {
                r = rx.changed() => r.is_ok(),
                r = backoff.changed() => r.is_ok(),
                () = tokio::time::sleep_until(deadline) => false,
            };
            if woke {
                continue;
            }
            let status = self
                .shared
                .status
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let why = status
                .last_error
                .map(|e| format!(" (last failure: {e})"))
                .unwrap_or_default();
            return Err(ToolError::with_cause(
                ErrorCode::Unavailable,
                format!("{} is not running yet{why}", self.shared.id),
                true,
            )
            .retry_after(1_000));
        }
    }

    pub(crate) async fn shutdown(&self) {
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

async fn supervise(
    shared: Arc<Shared>,
    spec: ChildSpec,
    waiting: Arc<watch::Sender<Option<Backoff>>>,
) {
    let mut backoff = shared.options.backoff_min;
    let mut first = true;
    loop {
        if shared.shutdown.is_cancelled() {
            break;
        }
        if !first {
            let mut s = shared.status.lock().unwrap_or_else(|p| p.into_inner());
            s.restarts += 1;
        }
        first = false;
        waiting.send_replace(None);
        shared.set_state(ConnectorState::Starting, None);
        let started = Instant::now();
        let outcome = run_once(&shared, &spec).await;
        {
            let mut s = shared.status.lock().unwrap_or_else(|p| p.into_inner());
            s.pid = None;
        }
        if shared.shutdown.is_cancelled() {
            break;
        }
        let message = match outcome {
            RunEnd::Exited(m) | RunEnd::Failed(m) => m,
            RunEnd::Shutdown => break,
        };
        tracing::warn!(connector = %shared.id, problem = %message, "downstream child stopped; restarting after backoff");
        if started.elapsed() >= HEALTHY_AFTER {
            backoff = shared.options.backoff_min;
        }
        waiting.send_replace(Some(Backoff {
            until: Instant::now() + backoff,
            why: message.clone(),
        }));
        shared.set_state(ConnectorState::Down, Some(message));
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = shared.shutdown.cancelled() => break,
        }
        backoff = (backoff * 2).min(shared.options.backoff_max);
    }
    shared.session.send_replace(None);
}

enum RunEnd {
    /// The child exited (or its session ended) on its own.
    Exited(String),
    /// It could not be started or did not complete the handshake.
    Failed(String),
    Shutdown,
}

async fn run_once(shared: &Arc<Shared>, spec: &ChildSpec) -> RunEnd {
    let mut child = match spawn_child(spec) {
        Ok(c) => c,
        Err(e) => {
            return RunEnd::Failed(format!(
                "could not start `{}`: {e}",
                clamp_text(&spec.command, 200)
            ));
        }
    };
    let pid = child.id();
    shared.status.lock().unwrap_or_else(|p| p.into_inner()).pid = pid;
    if let Some(stderr) = child.stderr.take() {
        let id = shared.id.clone();
        // The child's environment holds secrets from config; a child that
        // prints one must not put it in the gateway's log.
        let secrets: Vec<Secret> = spec
            .env
            .iter()
            .map(|(_, v)| v.clone())
            .filter(|v| v.expose().len() >= MIN_SECRET_LEN)
            .collect();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line = redact_line(line, &secrets);
                tracing::debug!(connector = %id, "stderr: {}", clamp_text(&line, MAX_ECHO_BYTES));
            }
        });
    }
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        stop_child(&mut child, pid).await;
        return RunEnd::Failed("the child's stdio could not be captured".into());
    };
    let ct = CancellationToken::new();
    let handshake = rmcp::service::serve_client_with_lifecycle_and_ct(
        shared.client(),
        HandshakeGuard::over(stdout, stdin),
        lifecycle(shared.options.handshake),
        ct.clone(),
    );
    let running = tokio::select! {
        r = tokio::time::timeout(shared.options.connect_timeout, handshake) => match r {
            Ok(Ok(running)) => running,
            Ok(Err(e)) => {
                ct.cancel();
                stop_child(&mut child, pid).await;
                return RunEnd::Failed(format!("handshake failed: {}", clamp_text(&e.to_string(), MAX_ECHO_BYTES)));
            }
            Err(_) => {
                ct.cancel();
                stop_child(&mut child, pid).await;
                return RunEnd::Failed("the handshake did not finish in time".into());
            }
        },
        status = child.wait() => {
            ct.cancel();
            return RunEnd::Failed(format!("exited during the handshake ({})", describe_exit(status)));
        }
        () = shared.shutdown.cancelled() => {
            ct.cancel();
            stop_child(&mut child, pid).await;
            return RunEnd::Shutdown;
        }
    };
    let generation = shared.publish(running.peer().clone(), None).generation;
    shared.set_state(ConnectorState::Ready, None);
    tracing::info!(connector = %shared.id, pid = pid.unwrap_or(0), "downstream child ready");
    let mut service = tokio::spawn(running.waiting());
    let end = tokio::select! {
        status = child.wait() => RunEnd::Exited(format!("the child exited ({})", describe_exit(status))),
        _ = &mut service => RunEnd::Exited("the child's MCP session ended".into()),
        () = shared.shutdown.cancelled() => RunEnd::Shutdown,
    };
    shared.reset(generation);
    ct.cancel();
    stop_child(&mut child, pid).await;
    end
}

/// The child's stdio as the client's transport, except that until the
/// handshake is answered it drops responses to requests the client never
/// sent: the MCP library takes the first response it reads for the
/// handshake's answer, so one stray line (a wrapper's leftover, a stale
/// reply) failed every start of the child. Afterwards the session ignores
/// such responses itself.
struct HandshakeGuard<T> {
    inner: T,
    /// Ids of the requests sent so far.
    asked: Vec<RequestId>,
    answered: bool,
}

impl HandshakeGuard<()> {
    fn over(
        stdout: ChildStdout,
        stdin: ChildStdin,
    ) -> HandshakeGuard<impl Transport<RoleClient, Error = std::io::Error>> {
        HandshakeGuard {
            inner: IntoTransport::<RoleClient, _, TransportAdapterAsyncRW>::into_transport((
                stdout, stdin,
            )),
            asked: Vec::new(),
            answered: false,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for HandshakeGuard<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let (false, JsonRpcMessage::Request(r)) = (self.answered, &item) {
            self.asked.push(r.id.clone());
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            let id = match &message {
                _ if self.answered => None,
                JsonRpcMessage::Response(r) => Some(&r.id),
                JsonRpcMessage::Error(e) => e.id.as_ref(),
                _ => None,
            };
            let Some(id) = id else {
                return Some(message);
            };
            // Numbers may come back as their decimal text.
            if !self.asked.iter().any(|a| a.to_string() == id.to_string()) {
                tracing::warn!(%id, "ignored a response to no request before the handshake's answer");
                continue;
            }
            self.answered = matches!(message, JsonRpcMessage::Response(_));
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

fn describe_exit(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(s) => s.to_string(),
        Err(e) => format!("wait failed: {e}"),
    }
}

/// Stop the child and everything in its process group, then reap it.
async fn stop_child(child: &mut Child, pid: Option<u32>) {
    // Closing stdin (dropping the transport) asks politely; most servers exit
    // when their stdin closes.
    drop(child.stdin.take());
    if tokio::time::timeout(STOP_GRACE, child.wait()).await.is_ok() {
        kill_group(pid, Signal::SIGKILL);
        return;
    }
    kill_group(pid, Signal::SIGTERM);
    if tokio::time::timeout(STOP_GRACE, child.wait()).await.is_ok() {
        kill_group(pid, Signal::SIGKILL);
        return;
    }
    kill_group(pid, Signal::SIGKILL);
    let _ = child.kill().await;
    let _ = child.wait().await;
}

/// Signal the child's process group (the child leads its own group), so
/// grandchildren started by wrappers such as `npx` go too.
fn kill_group(pid: Option<u32>, signal: Signal) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = killpg(Pid::from_raw(pid), signal);
    }
}

/// Values shorter than this are not redacted from the child's stderr (they
/// would shred ordinary text), as for the gateway's own redaction.
const MIN_SECRET_LEN: usize = 6;

/// `line` with every occurrence of a secret replaced by `[redacted]`.
fn redact_line(line: String, secrets: &[Secret]) -> String {
    secrets.iter().fold(line, |line, s| {
        if line.contains(s.expose()) {
            line.replace(s.expose(), "[redacted]")
        } else {
            line
        }
    })
}

fn resolve_command(command: &str) -> std::io::Result<PathBuf> {
    // "connecta" names this very binary, so the built-in demo server works
    // without connecta being on PATH.
    if command == "connecta" {
        return std::env::current_exe();
    }
    Ok(PathBuf::from(command))
}

fn spawn_child(spec: &ChildSpec) -> std::io::Result<Child> {
    let mut cmd = Command::new(resolve_command(&spec.command)?);
    cmd.args(&spec.args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    for key in PASSTHROUGH_ENV {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    for (k, v) in &spec.env {
        cmd.env(k, v.expose());
    }
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    crate::process::hide_paths(&mut cmd, &spec.hidden)?;
    crate::process::die_with_parent(&mut cmd);
    cmd.spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_lines_lose_the_childs_secrets() {
        let secrets = vec![Secret::new("s3cr3t-value".to_owned())];
        assert_eq!(
            redact_line("token s3cr3t-value, again s3cr3t-value".into(), &secrets),
            "token [redacted], again [redacted]"
        );
        assert_eq!(redact_line("nothing here".into(), &secrets), "nothing here");
    }
}
