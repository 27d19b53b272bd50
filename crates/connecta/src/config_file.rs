//! Finding and reading the config file: `--config FILE`, else
//! `./connecta.toml`, else the built-in demo config; and the search
//! lexicon it names (`[search] lexicon`), which the search crate checks
//! (with the connectors' `search_terms`) but cannot read itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use connecta_core::config::{Config, ConfigError, demo_config, parse_config};
use connecta_search::Lexicon;

pub const DEFAULT_FILE: &str = "connecta.toml";

/// The config in effect and where it came from.
pub struct Loaded {
    pub config: Config,
    /// The file, or `None` for the built-in demo config.
    pub path: Option<PathBuf>,
    /// The search lexicon: the built-in one, extended by the config's
    /// `[search] lexicon` file.
    pub lexicon: Arc<Lexicon>,
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

pub fn read(path: &Path) -> Result<(Config, Arc<Lexicon>), LoadError> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read {}", path.display()))
        .map_err(LoadError::Other)?;
    let env = process_env;
    let file = path.display().to_string();
    let config = parse_config(&text, &file, &env).map_err(LoadError::Invalid)?;
    let lexicon = lexicon(&config, path.parent())?;
    // What only the search lexicon can say of the operator's search words.
    let diagnostics = connecta_search::check_search_terms(&config, &lexicon);
    if !diagnostics.is_empty() {
        return Err(LoadError::Invalid(ConfigError { file, diagnostics }));
    }
    Ok((config, lexicon))
}

/// The built-in search lexicon, extended by the file `[search] lexicon`
/// names (relative to the config file's folder); its problems are located
/// in that file.
fn lexicon(config: &Config, dir: Option<&Path>) -> Result<Arc<Lexicon>, LoadError> {
    let builtin = Lexicon::builtin();
    let Some(name) = &config.search.lexicon else {
        return Ok(builtin.clone());
    };
    let path = match dir {
        Some(dir) if Path::new(name).is_relative() => dir.join(name),
        _ => PathBuf::from(name),
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("could not read the search lexicon {}", path.display()))
        .map_err(LoadError::Other)?;
    let extended = builtin.extended(&text).map_err(|diagnostics| {
        LoadError::Invalid(ConfigError {
            file: path.display().to_string(),
            diagnostics,
        })
    })?;
    Ok(Arc::new(extended))
}

/// `--config FILE` if given; else `./connecta.toml` if it exists; else the
/// built-in demo config (only when `allow_demo`).
pub fn load(explicit: Option<PathBuf>, allow_demo: bool) -> Result<Loaded, LoadError> {
    if let Some(path) = explicit {
        let (config, lexicon) = read(&path)?;
        return Ok(Loaded {
            config,
            path: Some(path),
            lexicon,
        });
    }
    let default = PathBuf::from(DEFAULT_FILE);
    if default.exists() {
        let (config, lexicon) = read(&default)?;
        return Ok(Loaded {
            config,
            path: Some(default),
            lexicon,
        });
    }
    if allow_demo {
        return Ok(Loaded {
            config: demo_config(),
            path: None,
            lexicon: Lexicon::builtin().clone(),
        });
    }
    Err(LoadError::Other(anyhow::anyhow!(
        "no config file: pass --config FILE or create ./connecta.toml (connecta init writes one)"
    )))
}
