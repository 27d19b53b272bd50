//! Starting servers to measure: the launcher protocol.

pub mod protocol;

pub use protocol::{
    ENV_CONNECTORS, ENV_TOOLS_PER_CONNECTOR, Ready, ReadyLineError, parse_ready_line,
};
