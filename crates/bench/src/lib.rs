//! connecta-bench: the performance instrument for connecta (and for any
//! other server of the same seven meta-tools).
//!
//! - [`synthetic`]: a downstream MCP server with any number of connectors of
//!   trivial read-only tools, over HTTP or stdio;
//! - [`launcher`]: the launcher protocol (catalog size in, ready line out,
//!   SIGTERM to stop).

#![forbid(unsafe_code)]

pub mod launcher;
pub mod synthetic;
