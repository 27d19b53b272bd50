//! connecta's core: the catalog model, the fail-closed policy, the error
//! taxonomy, results, activity events, compact schemas, and configuration.
//!
//! Architecture invariant: this crate does no I/O. It opens no sockets and
//! files, reads no environment, spawns nothing, and has no async runtime.
//! Everything here is a plain function over plain values, which is why it is
//! tested exhaustively with unit tests.

#![forbid(unsafe_code)]

pub mod activity;
pub mod address;
pub mod catalog;
pub mod config;
pub mod error;
pub mod glob;
pub mod policy;
pub mod result;
pub mod schema;
pub mod secret;

pub use address::Address;
pub use catalog::{Catalog, Schema, ToolDef};
pub use error::{ErrorCode, NextAction, ToolError};
pub use policy::{Annotations, Safety, is_read_only};
pub use result::ToolResult;
