//! The launcher protocol every measured server command follows:
//!
//! - it reads the catalog size from `CONNECTA_PERF_CONNECTORS` and
//!   `CONNECTA_PERF_TOOLS_PER_CONNECTOR`;
//! - when it listens on `127.0.0.1:N` it prints one stdout line
//!   `{"type":"ready","port":N}` and serves MCP at `/mcp`;
//! - it exits on SIGTERM.
//!
//! Two optional fields let a launcher that wraps the real server say so:
//! `pid`, the process whose memory is the server's (when the launched process
//! is only a wrapper), and `spawnedAfterMs`, how long the wrapper worked
//! before it started that process (subtracted to get the server's own
//! startup). Other stdout lines are not part of the protocol and are ignored.

use serde::{Deserialize, Serialize};

/// Environment variable carrying the number of connectors.
pub const ENV_CONNECTORS: &str = "CONNECTA_PERF_CONNECTORS";
/// Environment variable carrying the number of tools per connector.
pub const ENV_TOOLS_PER_CONNECTOR: &str = "CONNECTA_PERF_TOOLS_PER_CONNECTOR";

/// A parsed ready line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ready {
    /// The loopback port MCP is served on, at `/mcp`.
    pub port: u16,
    /// The process to measure as the server, when not the launched one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Milliseconds the launcher spent before starting `pid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawned_after_ms: Option<f64>,
}

impl Ready {
    pub fn new(port: u16) -> Self {
        Self {
            port,
            pid: None,
            spawned_after_ms: None,
        }
    }

    /// The line to print, without its newline.
    pub fn to_line(&self) -> String {
        let mut value = serde_json::json!({ "type": "ready", "port": self.port });
        if let Some(pid) = self.pid {
            value["pid"] = pid.into();
        }
        if let Some(ms) = self.spawned_after_ms {
            value["spawnedAfterMs"] = ms.into();
        }
        value.to_string()
    }
}

/// A line that claims to be a ready line but cannot be trusted.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum ReadyLineError {
    #[error("ready line has no valid port: {0}")]
    BadPort(String),
    #[error("ready line is malformed ({reason}): {line}")]
    Malformed { reason: String, line: String },
}

/// Read one stdout line. `Ok(None)` for anything that is not a ready line
/// (log output, other JSON); an error for a ready line that is unusable,
/// because waiting on past it would only end in a timeout.
pub fn parse_ready_line(line: &str) -> Result<Option<Ready>, ReadyLineError> {
    let line = line.trim();
    if !line.starts_with('{') {
        return Ok(None);
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
        return Ok(None);
    };
    if value.get("type").and_then(|t| t.as_str()) != Some("ready") {
        return Ok(None);
    }
    let port = value
        .get("port")
        .and_then(|p| p.as_u64())
        .and_then(|p| u16::try_from(p).ok())
        .filter(|&p| p != 0)
        .ok_or_else(|| ReadyLineError::BadPort(line.to_owned()))?;
    let pid = match value.get("pid") {
        None | Some(serde_json::Value::Null) => None,
        Some(p) => Some(
            p.as_u64()
                .and_then(|p| u32::try_from(p).ok())
                .filter(|&p| p != 0)
                .ok_or_else(|| ReadyLineError::Malformed {
                    reason: "pid is not a process id".into(),
                    line: line.to_owned(),
                })?,
        ),
    };
    let spawned_after_ms =
        match value.get("spawnedAfterMs") {
            None | Some(serde_json::Value::Null) => None,
            Some(ms) => Some(ms.as_f64().filter(|ms| *ms >= 0.0).ok_or_else(|| {
                ReadyLineError::Malformed {
                    reason: "spawnedAfterMs is not a non-negative number".into(),
                    line: line.to_owned(),
                }
            })?),
        };
    Ok(Some(Ready {
        port,
        pid,
        spawned_after_ms,
    }))
}
