//! Start a server command, wait for its ready line, and stop it with
//! SIGTERM. The command runs through `sh -c "exec …"` so quoting and
//! environment expansion behave as in a terminal while the launched pid is
//! still the server itself (not a shell waiting on it).

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::protocol::{Ready, parse_ready_line};

/// What to start and how long to wait for it.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// A shell command line.
    pub command: String,
    /// Extra environment for the command.
    pub env: Vec<(String, String)>,
    /// How long the ready line may take.
    pub ready_timeout: Duration,
    /// Where the command's stderr (and non-protocol stdout) goes; inherited
    /// when `None`.
    pub log_file: Option<PathBuf>,
}

/// A running server that has printed its ready line.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// The ready line as parsed.
    pub ready: Ready,
    /// When the command was spawned.
    pub spawned_at: Instant,
    /// Spawn to ready line.
    pub ready_after: Duration,
    /// Keeps draining stdout after the ready line so the server never
    /// blocks on a full pipe.
    drain: tokio::task::JoinHandle<()>,
}

/// How a stop went.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StopOutcome {
    /// The process exited within the grace period after SIGTERM.
    pub exited_on_sigterm: bool,
    /// SIGTERM to exit (or to the kill, when it had to be killed).
    pub stop_ms: f64,
    /// The exit status as text, when known.
    pub status: Option<String>,
}

impl ServerProcess {
    /// Spawn `spec.command` and wait for its ready line.
    pub async fn launch(spec: &LaunchSpec) -> anyhow::Result<Self> {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("exec {}", spec.command))
            .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            // Its own process group: the whole tree can be killed if SIGTERM
            // is ignored, without touching anything we did not start.
            .process_group(0)
            .kill_on_drop(true);
        match &spec.log_file {
            Some(path) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("opening log file {}", path.display()))?;
                command.stderr(file);
            }
            None => {
                command.stderr(Stdio::inherit());
            }
        }
        let spawned_at = Instant::now();
        let mut child = command
            .spawn()
            .with_context(|| format!("spawning `{}`", spec.command))?;
        let stdout = child.stdout.take().context("child stdout was not piped")?;
        let mut lines = BufReader::new(stdout).lines();
        let mut passthrough = Passthrough::open(spec.log_file.as_ref());

        let waited = tokio::time::timeout(spec.ready_timeout, async {
            loop {
                tokio::select! {
                    line = lines.next_line() => match line? {
                        Some(line) => match parse_ready_line(&line)? {
                            Some(ready) => return Ok::<_, anyhow::Error>(ready),
                            None => passthrough.write(&line),
                        },
                        None => {
                            let status = child.wait().await?;
                            bail!("`{}` closed stdout before its ready line ({status})", spec.command);
                        }
                    },
                    status = child.wait() => {
                        bail!("`{}` exited before its ready line ({})", spec.command, status?);
                    }
                }
            }
        })
        .await;
        let ready = match waited {
            Ok(Ok(ready)) => ready,
            Ok(Err(e)) => {
                let _ = child.start_kill();
                return Err(e);
            }
            Err(_) => {
                kill_group(&child);
                bail!(
                    "`{}` printed no ready line within {:?}",
                    spec.command,
                    spec.ready_timeout
                );
            }
        };
        let ready_after = spawned_at.elapsed();
        let drain = tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                passthrough.write(&line);
            }
        });
        Ok(Self {
            child,
            ready,
            spawned_at,
            ready_after,
            drain,
        })
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn mcp_url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.ready.port)
    }

    /// The launched process.
    pub fn root_pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The process whose memory is the server's: the ready line's `pid`, or
    /// the launched process.
    pub fn server_pid(&self) -> Option<u32> {
        self.ready.pid.or_else(|| self.child.id())
    }

    /// SIGTERM, then up to `grace` for an exit; the process group is killed
    /// after that.
    pub async fn stop(mut self, grace: Duration) -> anyhow::Result<StopOutcome> {
        let started = Instant::now();
        let Some(pid) = self.child.id() else {
            // Already reaped: it exited on its own.
            let status = self.child.wait().await.ok();
            self.drain.abort();
            return Ok(StopOutcome {
                exited_on_sigterm: false,
                stop_ms: 0.0,
                status: status.map(describe),
            });
        };
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
        let outcome = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => StopOutcome {
                exited_on_sigterm: true,
                stop_ms: started.elapsed().as_secs_f64() * 1e3,
                status: status.ok().map(describe),
            },
            Err(_) => {
                kill_group(&self.child);
                let status = self.child.wait().await.ok();
                StopOutcome {
                    exited_on_sigterm: false,
                    stop_ms: started.elapsed().as_secs_f64() * 1e3,
                    status: status.map(describe),
                }
            }
        };
        // Anything left in the group (a worker the server failed to reap)
        // goes too; the group is ours.
        let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
        self.drain.abort();
        Ok(outcome)
    }
}

fn describe(status: ExitStatus) -> String {
    status.to_string()
}

fn kill_group(child: &Child) {
    if let Some(pid) = child.id() {
        let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
    }
}

/// Where stdout lines that are not the ready line go.
struct Passthrough(Option<std::fs::File>);

impl Passthrough {
    fn open(path: Option<&PathBuf>) -> Self {
        Self(path.and_then(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .ok()
        }))
    }

    fn write(&mut self, line: &str) {
        use std::io::Write;
        match &mut self.0 {
            Some(file) => {
                let _ = writeln!(file, "[stdout] {line}");
            }
            None => eprintln!("[server stdout] {line}"),
        }
    }
}

/// Quote `word` for `sh` so it stays one argument.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quoting_keeps_plain_words_and_wraps_the_rest() {
        assert_eq!(shell_quote("/usr/bin/connecta"), "/usr/bin/connecta");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }
}
