//! From text to [`Config`]: parse with spans, interpolate `${ENV}` in string
//! values, deserialize into the raw form (recovering past each error so one
//! run reports every problem it can), then lower.

use std::collections::HashMap;
use std::ops::Range;

use serde::Deserialize;
use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

use super::diagnostics::{ConfigError, Sink};
use super::raw::RawConfig;
use super::{Config, lower};

/// Where `${NAME}` references are looked up. The binary passes the process
/// environment; tests pass a map.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

impl Env for HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl<F: Fn(&str) -> Option<String>> Env for F {
    fn var(&self, name: &str) -> Option<String> {
        self(name)
    }
}

/// Where the files a config names (an `openapi` connector's `spec`) are read.
/// The binary reads them relative to the config file's directory; tests pass
/// a map. `Err` is a message for the person fixing the config ("no such
/// file").
pub trait SpecFiles {
    fn read(&self, path: &str) -> Result<String, String>;
}

impl SpecFiles for HashMap<String, String> {
    fn read(&self, path: &str) -> Result<String, String> {
        self.get(path)
            .cloned()
            .ok_or_else(|| "no such file".to_owned())
    }
}

/// For callers that read no files: a config naming one is an error.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSpecFiles;

impl SpecFiles for NoSpecFiles {
    fn read(&self, _path: &str) -> Result<String, String> {
        Err("files cannot be read here".to_owned())
    }
}

/// How many independent problems one pass reports before giving up.
const MAX_DIAGNOSTICS: usize = 50;

/// What of the file a command reads, so the `${ENV}` references it does
/// not read need not be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// `serve` and `check`: everything.
    Everything,
    /// Management commands that open the store (and the vault key) only:
    /// `[server]` but `data_dir`, `[auth]`, `[operator]` and the connectors
    /// are not read.
    Store,
    /// `credential`: the store, and the connectors without the values they
    /// send (`headers`, `env`, a tool's `headers`, `oauth.client_secret`),
    /// except the connector `whole` names, which is read entirely.
    Credentials { whole: Option<&'a str> },
}

/// Parse, interpolate, validate and lower a config file's text. `file` is the
/// label used in diagnostics (normally the path as given). A config that
/// names a file (an `openapi` connector's `spec`) needs
/// [`parse_config_with_files`].
pub fn parse_config(text: &str, file: &str, env: &dyn Env) -> Result<Config, ConfigError> {
    parse_config_for(text, file, env, Scope::Everything, &NoSpecFiles)
}

/// [`parse_config`], reading the files the config names through `files`.
pub fn parse_config_with_files(
    text: &str,
    file: &str,
    env: &dyn Env,
    files: &dyn SpecFiles,
) -> Result<Config, ConfigError> {
    parse_config_for(text, file, env, Scope::Everything, files)
}

/// [`parse_config_with_files`] reading only what `scope` needs: what it
/// leaves out is neither interpolated nor checked (and takes its default).
pub fn parse_config_for(
    text: &str,
    file: &str,
    env: &dyn Env,
    scope: Scope<'_>,
    files: &dyn SpecFiles,
) -> Result<Config, ConfigError> {
    let mut sink = Sink::new(text);
    let fail = |sink: Sink<'_>| ConfigError {
        file: file.to_owned(),
        diagnostics: sink.items,
    };

    let mut table = match DeTable::parse(text) {
        Ok(t) => t,
        Err(e) => {
            sink.at(e.span().unwrap_or(0..0), first_line(e.message()));
            return Err(fail(sink));
        }
    };
    prune(table.get_mut(), scope);
    interpolate_table(table.get_mut(), env, &mut sink);

    let mut removed: Vec<String> = Vec::new();
    let raw = loop {
        match RawConfig::deserialize(toml::de::Deserializer::from(table.clone())) {
            Ok(raw) => break Some(raw),
            Err(e) => {
                let span = e.span().unwrap_or(0..0);
                let message = first_line(e.message());
                // A value we already removed for a bad type reappears as a
                // missing field; it was reported once, at its real location.
                let echo = removed
                    .iter()
                    .any(|k| message == format!("missing field `{k}`"));
                // The value goes (so the next pass gets further); its key
                // names what was wrong ("`open`: invalid type: …").
                let key = remove_at_span(table.get_mut(), &span);
                if !echo {
                    let text = match &key {
                        Some(k) if !k.starts_with('[') && message.starts_with("invalid ") => {
                            format!("`{k}`: {}", describe(&message))
                        }
                        _ => describe(&message),
                    };
                    sink.at(span.clone(), text);
                }
                if sink.items.len() >= MAX_DIAGNOSTICS {
                    break None;
                }
                match key {
                    Some(key) => removed.push(key),
                    None => break None,
                }
            }
        }
    };
    let Some(raw) = raw else {
        return Err(fail(sink));
    };
    let config = lower::lower(raw, files, &mut sink);
    match config {
        Some(config) if sink.is_empty() => Ok(config),
        _ => Err(fail(sink)),
    }
}

/// Drop what `scope` does not read, before anything is interpolated.
fn prune(table: &mut DeTable<'_>, scope: Scope<'_>) {
    let whole = match scope {
        Scope::Everything => return,
        Scope::Store => {
            table.remove("connector");
            None
        }
        Scope::Credentials { whole } => whole,
    };
    table.remove("auth");
    table.remove("operator");
    if let Some(server) = table.get_mut("server")
        && let DeValue::Table(server) = server.get_mut()
    {
        retain(server, |k| k == "data_dir");
    }
    let Some(connectors) = table.get_mut("connector") else {
        return;
    };
    let DeValue::Array(connectors) = connectors.get_mut() else {
        return;
    };
    for connector in connectors.iter_mut() {
        let DeValue::Table(c) = connector.get_mut() else {
            continue;
        };
        let id = c.get("id").and_then(|v| match v.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            _ => None,
        });
        if whole.is_some() && id.as_deref() == whole {
            continue;
        }
        c.remove("headers");
        c.remove("env");
        if let Some(oauth) = c.get_mut("oauth")
            && let DeValue::Table(oauth) = oauth.get_mut()
        {
            oauth.remove("client_secret");
        }
        if let Some(tools) = c.get_mut("tool")
            && let DeValue::Array(tools) = tools.get_mut()
        {
            for tool in tools.iter_mut() {
                if let DeValue::Table(tool) = tool.get_mut() {
                    tool.remove("headers");
                }
            }
        }
    }
}

fn retain(table: &mut DeTable<'_>, keep: impl Fn(&str) -> bool) {
    let gone: Vec<String> = table
        .iter()
        .map(|(k, _)| k.get_ref().to_string())
        .filter(|k| !keep(k))
        .collect();
    for k in gone {
        table.remove(k.as_str());
    }
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or(message).trim().to_owned()
}

/// Make serde's wording read like a config checker's.
fn describe(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field ") {
        return format!("unknown key {rest}");
    }
    message.to_owned()
}

/// Remove the entry whose key or value occupies `span`, anywhere in the tree.
/// Returns the removed key's name (or `[index]` for an array element).
fn remove_at_span(table: &mut DeTable<'_>, span: &Range<usize>) -> Option<String> {
    let mut hit: Option<String> = None;
    for (k, v) in table.iter() {
        if k.span() == *span || v.span() == *span {
            hit = Some(k.get_ref().to_string());
            break;
        }
    }
    if let Some(key) = hit {
        table.remove(key.as_str());
        return Some(key);
    }
    for (_, v) in table.iter_mut() {
        if let Some(k) = remove_in_value(v.get_mut(), span) {
            return Some(k);
        }
    }
    None
}

fn remove_in_value(value: &mut DeValue<'_>, span: &Range<usize>) -> Option<String> {
    match value {
        DeValue::Table(t) => remove_at_span(t, span),
        DeValue::Array(items) => {
            if let Some(i) = items.iter().position(|item| item.span() == *span) {
                // DeArray has no remove; rebuild it without the element.
                let mut kept = toml::de::DeArray::new();
                for (j, item) in items.iter().enumerate() {
                    if j != i {
                        kept.push(item.clone());
                    }
                }
                *items = kept;
                return Some(format!("[{i}]"));
            }
            items
                .iter_mut()
                .find_map(|item| remove_in_value(item.get_mut(), span))
        }
        _ => None,
    }
}

fn interpolate_table(table: &mut DeTable<'_>, env: &dyn Env, sink: &mut Sink<'_>) {
    for (_, v) in table.iter_mut() {
        interpolate_value(v, env, sink);
    }
}

fn interpolate_value(value: &mut Spanned<DeValue<'_>>, env: &dyn Env, sink: &mut Sink<'_>) {
    let span = value.span();
    match value.get_mut() {
        DeValue::String(s) if s.contains('$') => match interpolate(s, env) {
            Ok(out) => *s = out.into(),
            Err(problems) => {
                for p in problems {
                    sink.at(span.clone(), p);
                }
            }
        },
        DeValue::Table(t) => interpolate_table(t, env, sink),
        DeValue::Array(items) => {
            for item in items.iter_mut() {
                interpolate_value(item, env, sink);
            }
        }
        _ => {}
    }
}

/// Expand `${NAME}` and `${NAME:-default}`; `$${` is a literal `${`.
pub(crate) fn interpolate(text: &str, env: &dyn Env) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(text.len());
    let mut problems = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
        } else if let Some(after) = tail.strip_prefix("${") {
            let Some(end) = after.find('}') else {
                problems.push("unterminated ${…} reference (write $${ for a literal ${)".into());
                rest = "";
                break;
            };
            let inner = &after[..end];
            let (name, default) = match inner.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (inner, None),
            };
            if !is_env_name(name) {
                problems.push(format!(
                    "\"${{{}}}\" is not a valid environment variable reference",
                    crate::error::clamp_text(inner, 64)
                ));
            } else {
                match (env.var(name), default) {
                    (Some(v), _) => out.push_str(&v),
                    (None, Some(d)) => out.push_str(d),
                    (None, None) => {
                        problems.push(format!("environment variable {name} is not set"));
                    }
                }
            }
            rest = &after[end + 1..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> HashMap<String, String> {
        HashMap::from([("TOKEN".to_string(), "s3cret".to_string())])
    }

    #[test]
    fn interpolation() {
        let e = env();
        assert_eq!(
            interpolate("Bearer ${TOKEN}", &e).as_deref(),
            Ok("Bearer s3cret")
        );
        assert_eq!(interpolate("${NOPE:-dflt}", &e).as_deref(), Ok("dflt"));
        assert_eq!(
            interpolate("$${TOKEN} $5", &e).as_deref(),
            Ok("${TOKEN} $5")
        );
        assert!(interpolate("${NOPE}", &e).is_err());
        assert!(interpolate("${bad name}", &e).is_err());
        assert!(interpolate("${TOKEN", &e).is_err());
    }
}
