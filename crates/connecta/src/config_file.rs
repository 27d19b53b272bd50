//! Finding and reading the config file: `--config FILE`, else
//! `./connecta.toml`, else the built-in demo config.

use std::path::{Path, PathBuf};

use anyhow::Context;
use connecta_core::config::{Config, ConfigError, Scope, SpecFiles, demo_config, parse_config_for};

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

pub fn read(path: &Path, scope: Scope<'_>) -> Result<Config, LoadError> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read {}", path.display()))
        .map_err(LoadError::Other)?;
    let env = process_env;
    let files = RelativeTo(path.parent().unwrap_or(Path::new(".")));
    parse_config_for(&text, &path.display().to_string(), &env, scope, &files)
        .map_err(LoadError::Invalid)
}

/// The largest file a config may name (an OpenAPI document). GitHub's whole
/// REST description is about 13 MB.
const MAX_SPEC_BYTES: u64 = 64 * 1024 * 1024;

/// Files named in a config, relative to the config file's directory.
struct RelativeTo<'a>(&'a Path);

impl SpecFiles for RelativeTo<'_> {
    fn read(&self, name: &str) -> Result<String, String> {
        let path = self.0.join(name);
        let size = std::fs::metadata(&path)
            .map_err(|e| format!("{} ({e})", path.display()))?
            .len();
        if size > MAX_SPEC_BYTES {
            return Err(format!(
                "{} is {size} bytes, over {MAX_SPEC_BYTES}",
                path.display()
            ));
        }
        std::fs::read_to_string(&path).map_err(|e| format!("{} ({e})", path.display()))
    }
}

/// `--config FILE` if given; else `./connecta.toml` if it exists; else the
/// built-in demo config (only when `allow_demo`).
pub fn load(explicit: Option<PathBuf>, allow_demo: bool) -> Result<Loaded, LoadError> {
    load_for(explicit, allow_demo, Scope::Everything)
}

/// [`load`], reading only what a management command uses (`scope`), so
/// `${ENV}` references it does not read need not be set.
pub fn load_for(
    explicit: Option<PathBuf>,
    allow_demo: bool,
    scope: Scope<'_>,
) -> Result<Loaded, LoadError> {
    if let Some(path) = explicit {
        let config = read(&path, scope)?;
        return Ok(Loaded {
            config,
            path: Some(path),
        });
    }
    let default = PathBuf::from(DEFAULT_FILE);
    if default.exists() {
        let config = read(&default, scope)?;
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
