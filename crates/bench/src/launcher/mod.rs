//! Starting servers to measure: the launcher protocol, the process handling
//! around it, and `serve-synthetic`, which puts connecta behind the protocol.

pub mod gateway_config;
pub mod process;
pub mod protocol;
pub mod serve_synthetic;

pub use process::{LaunchSpec, ServerProcess, StopOutcome, shell_quote};
pub use protocol::{
    ENV_CONNECTORS, ENV_TOOLS_PER_CONNECTOR, Ready, ReadyLineError, parse_ready_line,
};
