//! `connecta-bench serve-synthetic`: connecta behind the launcher protocol.
//!
//! It starts the synthetic downstream (in this process, over loopback HTTP,
//! or as stdio children the gateway starts), writes a connecta config into a
//! temporary directory, runs `connecta serve --config FILE --listen
//! 127.0.0.1:0`, and relays connecta's own ready line with connecta's pid, so
//! the driver measures connecta's memory and not this wrapper's. SIGTERM is
//! forwarded; the temporary directory is removed on the way out.
//!
//! This is the only place that knows how to start the gateway: plugging in a
//! different gateway build means changing this file, not the driver.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::Command;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use super::gateway_config::{self, Downstream, GatewayConfigSpec};
use super::protocol::{Ready, parse_ready_line};
use crate::synthetic;

/// How the synthetic connectors are reached by the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DownstreamMode {
    Http,
    Stdio,
}

/// Options of `serve-synthetic`.
#[derive(Debug, Clone)]
pub struct ServeSynthetic {
    pub connectors: usize,
    pub tools_per_connector: usize,
    pub connecta_bin: PathBuf,
    pub downstream: DownstreamMode,
    pub page_size: usize,
    /// How long connecta may take to print its ready line.
    pub ready_timeout: Duration,
}

/// The default gateway binary: `connecta` next to this executable (both are
/// built into the same `target/<profile>/`).
pub fn default_connecta_bin() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the connecta-bench executable")?;
    let dir = exe.parent().context("the executable has no directory")?;
    Ok(dir.join("connecta"))
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn create() -> anyhow::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let path =
            std::env::temp_dir().join(format!("connecta-bench-{}-{nanos:08x}", std::process::id()));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Self(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run until SIGTERM/SIGINT or until connecta exits. Returns the process
/// exit code.
pub async fn run(options: ServeSynthetic) -> anyhow::Result<i32> {
    let started = Instant::now();
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;

    if !options.connecta_bin.exists() {
        bail!(
            "no connecta binary at {} (build it with `cargo build --release -p connecta`, or pass --connecta-bin)",
            options.connecta_bin.display()
        );
    }
    let shutdown = CancellationToken::new();
    let downstream = match options.downstream {
        DownstreamMode::Http => {
            let catalogs = synthetic::build(
                options.connectors,
                options.tools_per_connector,
                options.page_size,
            );
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let port = listener.local_addr()?.port();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                if let Err(e) = synthetic::http::serve(listener, &catalogs, stop).await {
                    eprintln!("serve-synthetic: downstream failed: {e}");
                }
            });
            Downstream::Http { port }
        }
        DownstreamMode::Stdio => Downstream::Stdio {
            bench_exe: std::env::current_exe()?.to_string_lossy().into_owned(),
            page_size: options.page_size,
        },
    };

    let dir = TempDir::create()?;
    let data_dir = dir.path().join("data");
    std::fs::create_dir_all(&data_dir)?;
    let config_path = dir.path().join("connecta.toml");
    let text = gateway_config::render(&GatewayConfigSpec {
        connectors: options.connectors,
        tools_per_connector: options.tools_per_connector,
        downstream,
        data_dir: &data_dir,
    });
    std::fs::write(&config_path, text)
        .with_context(|| format!("writing {}", config_path.display()))?;

    let bin = options.connecta_bin.to_string_lossy().into_owned();
    let argv = gateway_config::serve_argv(&bin, &config_path);
    let spawned_after_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| {
            format!(
                "spawning `{}`",
                gateway_config::serve_command_line(&bin, &config_path)
            )
        })?;
    let pid = child.id().context("connecta exited at once")?;
    let stdout = child
        .stdout
        .take()
        .context("connecta stdout was not piped")?;
    let mut lines = BufReader::new(stdout).lines();

    // Relay: connecta's ready line becomes ours; every other stdout line is
    // log output and goes to stderr, because our stdout is the protocol.
    let ready = tokio::time::timeout(options.ready_timeout, async {
        while let Some(line) = lines.next_line().await? {
            match parse_ready_line(&line)? {
                Some(ready) => return Ok(ready),
                None => eprintln!("[connecta stdout] {line}"),
            }
        }
        bail!("connecta closed stdout before printing its ready line")
    })
    .await;
    let ready = match ready {
        Ok(Ok(ready)) => ready,
        Ok(Err(e)) => {
            let _ = child.start_kill();
            return Err(e);
        }
        Err(_) => {
            let _ = child.start_kill();
            bail!(
                "connecta printed no ready line within {:?}",
                options.ready_timeout
            );
        }
    };
    let relayed = Ready {
        port: ready.port,
        pid: Some(pid),
        spawned_after_ms: Some(spawned_after_ms),
    };
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", relayed.to_line())?;
        out.flush()?;
    }
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("[connecta stdout] {line}");
        }
    });

    let code = tokio::select! {
        status = child.wait() => {
            eprintln!("serve-synthetic: connecta exited on its own ({})", status?);
            1
        }
        _ = terminate.recv() => stop_child(&mut child, pid).await,
        _ = interrupt.recv() => stop_child(&mut child, pid).await,
    };
    shutdown.cancel();
    drop(dir);
    Ok(code)
}

/// Forward SIGTERM and give connecta five seconds before killing it.
async fn stop_child(child: &mut tokio::process::Child, pid: u32) -> i32 {
    let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
    match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
        Ok(Ok(status)) if status.success() => 0,
        Ok(Ok(status)) => {
            eprintln!("serve-synthetic: connecta exited with {status} after SIGTERM");
            // Still a clean stop as far as the protocol goes.
            0
        }
        Ok(Err(e)) => {
            eprintln!("serve-synthetic: waiting for connecta: {e}");
            1
        }
        Err(_) => {
            eprintln!("serve-synthetic: connecta ignored SIGTERM for 5 s; killing it");
            let _ = child.start_kill();
            let _ = child.wait().await;
            1
        }
    }
}
