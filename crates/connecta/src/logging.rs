//! Logs go to stderr, always: in stdio mode stdout is the protocol.

use connecta_core::config::{LogConfig, LogFormat};
use tracing_subscriber::EnvFilter;

/// The MCP library's own level, whatever `RUST_LOG` says: at `debug` and
/// below it logs whole messages (arguments, results), and a result may echo
/// a credential or carry a payload the logs must not hold.
const RMCP_LEVEL: &str = "rmcp=warn";

/// Install the global subscriber. `RUST_LOG` overrides the configured level
/// (except [`RMCP_LEVEL`]).
pub fn init(log: &LogConfig) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(&log.level))
        .add_directive(RMCP_LEVEL.parse().expect("a valid directive"));
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
