//! `connecta init`: write the commented starter config.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use connecta_core::config::STARTER_CONFIG;

pub fn run(config: Option<PathBuf>, force: bool) -> anyhow::Result<ExitCode> {
    let path = config.unwrap_or_else(|| PathBuf::from(crate::config_file::DEFAULT_FILE));
    if path.exists() && !force {
        eprintln!(
            "{} already exists; pass --force to overwrite it",
            path.display()
        );
        return Ok(ExitCode::FAILURE);
    }
    std::fs::write(&path, STARTER_CONFIG)
        .with_context(|| format!("could not write {}", path.display()))?;
    println!(
        "wrote {}; start the gateway with: connecta serve --config {}",
        path.display(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}
