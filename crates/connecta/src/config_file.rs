//! Finding and reading the config file: `--config FILE`, else
//! `./connecta.toml`, else the built-in demo config.

use std::path::{Path, PathBuf};

use anyhow::Context;
use connecta_core::config::{Config, ConfigError, demo_config, parse_config};

pub const DEFAULT_FILE: &str = "connecta.toml";

/// The config in effect and where it came from.
pub struct Loaded {
    pub config: Config,
    /// The file, or `None` for the built-in demo config.
    pub path: Option<PathBuf>,
}

impl Loaded {
    pub fn dir(&self) -> Option<&Path> {
        self.path.as_deref().and_then(Path::parent)
    }

    pub fn describe(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => "the built-in demo config".to_owned(),
        }
    }
}

pub enum LoadError {
    /// Problems in the file, with locations.
    Invalid(ConfigError),
    Other(anyhow::Error),
}

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

pub fn read(path: &Path) -> Result<Config, LoadError> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read {}", path.display()))
        .map_err(LoadError::Other)?;
    let env = process_env;
    let file = path.display().to_string();
    let config = parse_config(&text, &file, &env).map_err(LoadError::Invalid)?;
    // What only the search lexicon can say of the operator's search words.
    let diagnostics =
        connecta_search::check_search_terms(&config, connecta_search::Lexicon::current());
    if !diagnostics.is_empty() {
        return Err(LoadError::Invalid(ConfigError { file, diagnostics }));
    }
    Ok(config)
}

/// `--config FILE` if given; else `./connecta.toml` if it exists; else the
/// built-in demo config (only when `allow_demo`).
pub fn load(explicit: Option<PathBuf>, allow_demo: bool) -> Result<Loaded, LoadError> {
    if let Some(path) = explicit {
        let config = read(&path)?;
        return Ok(Loaded {
            config,
            path: Some(path),
        });
    }
    let default = PathBuf::from(DEFAULT_FILE);
    if default.exists() {
        let config = read(&default)?;
        return Ok(Loaded {
            config,
            path: Some(default),
        });
    }
    if allow_demo {
        return Ok(Loaded {
            config: demo_config(),
            path: None,
        });
    }
    Err(LoadError::Other(anyhow::anyhow!(
        "no config file: pass --config FILE or create ./connecta.toml (connecta init writes one)"
    )))
}
