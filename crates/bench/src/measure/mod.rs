//! The driver: an rmcp client measuring a running server over streamable
//! HTTP. It never calls into a server's code; everything it knows arrives
//! over the wire, so the same code measures connecta and any other
//! implementation.

pub mod checks;
pub mod client;
pub mod downstream;
pub mod paired;
pub mod raw;
pub mod sample;
pub mod target;

pub use client::{Client, Driver, connect, connect_with};
pub use target::TargetSpec;
