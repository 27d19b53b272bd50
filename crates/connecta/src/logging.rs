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
        .with_writer(|| ScrubbedLine(Vec::new()))
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = match log.format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Human => builder.try_init(),
    };
}

/// One log event, written to stderr when the formatter is done with it,
/// with every secret the process knows replaced (the gateway's own lines
/// are redacted already; this catches libraries quoting what they sent).
struct ScrubbedLine(Vec<u8>);

impl std::io::Write for ScrubbedLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for ScrubbedLine {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let clean = connecta_gateway::Redactor::process()
            .redact(&text)
            .into_owned();
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), clean.as_bytes());
    }
}
