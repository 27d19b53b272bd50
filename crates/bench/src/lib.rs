//! connecta-bench: the performance instrument for connecta (and for any
//! other server of the same seven meta-tools).
//!
//! Four parts, each usable alone:
//! - [`synthetic`]: a downstream MCP server with any number of connectors of
//!   trivial read-only tools, over HTTP or stdio;
//! - [`launcher`]: the launcher protocol (catalog size in, ready line out,
//!   SIGTERM to stop) and `serve-synthetic`, which puts connecta behind it;
//! - [`measure`] + [`report`]: the driver, an rmcp client that measures a
//!   launched server over streamable HTTP, and the report it writes;
//! - [`relay`]: a TCP relay and an HTTP relay, the floor any gateway's
//!   added cost is judged against (the downstream measured through each).
//!
//! Architecture invariant: the driver knows servers only through the
//! launcher protocol and MCP on the wire. Nothing here links the gateway;
//! `launcher::serve_synthetic` is the one place that knows how to start it.

#![forbid(unsafe_code)]

pub mod cpu;
pub mod launcher;
pub mod machine;
pub mod measure;
pub mod plan;
pub mod relay;
pub mod report;
pub mod rss;
pub mod run;
pub mod stats;
pub mod synthetic;
