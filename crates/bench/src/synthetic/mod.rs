//! The synthetic downstream MCP server: any number of connectors of
//! `lookup_record_<t>` tools from one process, over streamable HTTP (one path
//! per connector) or stdio (one connector).
//!
//! It must stay trivially cheap and allocation-light per request, because
//! its own cost is subtracted from what is measured through a gateway. It
//! never sleeps, never fails except on bad input, and holds no state.

pub mod catalog;
pub mod handler;
pub mod http;
pub mod stdio;

pub use catalog::{
    ConnectorCatalog, DEFAULT_PAGE_SIZE, address, build, connector_id, marker, tool_name,
};
pub use handler::SyntheticConnector;
