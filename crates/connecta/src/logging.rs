//! Logs go to stderr, always: in stdio mode stdout is the protocol.

use connecta_core::config::{LogConfig, LogFormat};
use tracing_subscriber::EnvFilter;

/// Install the global subscriber. `RUST_LOG` overrides the configured level.
pub fn init(log: &LogConfig) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("{},rmcp=warn", log.level)));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = match log.format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Human => builder.try_init(),
    };
}
