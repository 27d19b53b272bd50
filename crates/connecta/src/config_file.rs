//! Finding and reading the config file: `--config FILE`, else
//! `./connecta.toml`, else the built-in demo config; and the search
//! lexicon it names (`[search] lexicon`), which the search crate checks
//! (with the connectors' `search_terms`) but cannot read itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use connecta_core::config::{Config, ConfigError, Scope, SpecFiles, demo_config, parse_config_for};
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

/// The config at `path`, and the search lexicon it names (read only for
/// [`Scope::Everything`]: the management commands do not search).
pub fn read(path: &Path, scope: Scope<'_>) -> Result<(Config, Arc<Lexicon>), LoadError> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read {}", path.display()))
        .map_err(LoadError::Other)?;
    let env = process_env;
    let file = path.display().to_string();
    let files = RelativeTo(path.parent().unwrap_or(Path::new(".")));
    let config = parse_config_for(&text, &file, &env, scope, &files).map_err(LoadError::Invalid)?;
    if scope != Scope::Everything {
        return Ok((config, Lexicon::builtin().clone()));
    }
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
        let (config, lexicon) = read(&path, scope)?;
        return Ok(Loaded {
            config,
            path: Some(path),
            lexicon,
        });
    }
    let default = PathBuf::from(DEFAULT_FILE);
    if default.exists() {
        let (config, lexicon) = read(&default, scope)?;
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
