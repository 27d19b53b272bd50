//! Starting servers to measure: the launcher protocol and the process
//! handling around it.

pub mod process;
pub mod protocol;

pub use process::{LaunchSpec, ServerProcess, StopOutcome, shell_quote};
pub use protocol::{
    ENV_CONNECTORS, ENV_TOOLS_PER_CONNECTOR, Ready, ReadyLineError, parse_ready_line,
};
