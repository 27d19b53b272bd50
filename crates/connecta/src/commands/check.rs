//! `connecta check`: validate a config file without starting anything.

use std::path::PathBuf;
use std::process::ExitCode;

use connecta_core::config::ConnectorKind;

use crate::config_file::{self, LoadError};

pub fn run(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let loaded = match config_file::load(config, false) {
        Ok(l) => l,
        Err(LoadError::Invalid(e)) => {
            eprintln!("{e}");
            eprintln!(
                "{} problem{} found",
                e.diagnostics.len(),
                if e.diagnostics.len() == 1 { "" } else { "s" }
            );
            return Ok(ExitCode::FAILURE);
        }
        Err(LoadError::Other(e)) => return Err(e),
    };
    let c = &loaded.config;
    let problems = connecta_gateway::check_connectors(c);
    if !problems.is_empty() {
        for p in &problems {
            eprintln!("{}: {p}", loaded.describe());
        }
        eprintln!(
            "{} problem{} found",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::FAILURE);
    }
    for w in &c.warnings {
        eprintln!("warning: {w}");
    }
    println!("{}: ok", loaded.describe());
    println!(
        "  listen {} · data_dir {} · auth {}",
        c.server.listen,
        c.server.data_dir,
        if c.auth.open {
            "open".to_owned()
        } else {
            format!("{} bearer token(s)", c.auth.bearer_tokens.len())
        }
    );
    for conn in &c.connectors {
        let detail = match &conn.kind {
            ConnectorKind::Mcp(m) => match &m.transport {
                connecta_core::config::McpTransport::Http { url, .. } => {
                    format!("mcp over HTTP {url}")
                }
                connecta_core::config::McpTransport::Stdio { command, .. } => {
                    format!("mcp over stdio `{command}`")
                }
            },
            ConnectorKind::Api(a) => match &a.spec {
                Some(spec) => format!("openapi {spec} at {} ({} tools)", a.base_url, a.tools.len()),
                None => format!("api {} ({} tools)", a.base_url, a.tools.len()),
            },
        };
        println!("  connector {}: {detail}", conn.id);
    }
    Ok(ExitCode::SUCCESS)
}
