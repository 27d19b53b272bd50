//! The key a persisted catalog is stored under, so a restart restores it only
//! when the connector's settings still produce the same catalog. A catalog
//! restored under other settings would serve an earlier config's curation
//! (a tool since excluded, an override since added that withdraws read-only):
//! the approval boundary would follow the old file, not the one the operator
//! just wrote.

use serde_json::json;
use sha2::{Digest, Sha256};

use super::{ConnectorConfig, ConnectorKind, McpTransport};

/// Bump when what goes into the key changes, so keys written by an older
/// build never match by accident.
const KEY_VERSION: &str = "catalog-key/1";

impl ConnectorConfig {
    /// The key a catalog fetched under these settings is persisted with, or
    /// `None` when the catalog is never persisted (api connectors: their
    /// catalog *is* their config, built at boot in microseconds, so a stored
    /// copy could only ever be out of date).
    ///
    /// It covers where the tools come from (the transport) and everything
    /// that curates them (include/exclude globs, annotation overrides).
    /// Secret values (a child's `env`, HTTP `headers`) are left out, names
    /// kept: their digest would sit in the database next to the catalog. A
    /// change to such a value alone therefore keeps the stored tool list,
    /// which is refreshed after `catalog_ttl` like any downstream change;
    /// curation always follows the current file.
    pub fn persisted_catalog_key(&self) -> Option<String> {
        let ConnectorKind::Mcp(mcp) = &self.kind else {
            return None;
        };
        let source = match &mcp.transport {
            McpTransport::Http { url, headers } => json!({
                "url": url,
                "headers": headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            }),
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => json!({
                "command": command,
                "args": args,
                "env": env.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                "cwd": cwd,
            }),
        };
        let overrides: Vec<_> = self
            .overrides
            .iter()
            .map(|(tool, o)| json!([tool, o.read_only, o.destructive, o.idempotent, o.open_world]))
            .collect();
        let basis = json!({
            "version": KEY_VERSION,
            "source": source,
            "include": self.include_tools,
            "exclude": self.exclude_tools,
            "overrides": overrides,
        });
        // Serializing a JSON value cannot fail.
        let bytes = serde_json::to_vec(&basis).unwrap_or_default();
        Some(hex::encode(&Sha256::digest(&bytes)[..16]))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse_config;

    fn key(connector: &str) -> Option<String> {
        let env = |_: &str| Some("value-from-env".to_owned());
        let text = format!("[[connector]]\nid = \"c\"\n{connector}");
        let c = parse_config(&text, "c.toml", &env).expect("valid config");
        c.connectors[0].persisted_catalog_key()
    }

    const STDIO: &str = "command = \"node\"\nargs = [\"server.js\"]\n";

    #[test]
    fn the_same_settings_give_the_same_key() {
        assert_eq!(key(STDIO), key(STDIO));
        assert!(key(STDIO).is_some());
    }

    #[test]
    fn curation_and_source_change_the_key() {
        let base = key(STDIO);
        for changed in [
            "command = \"node\"\nargs = [\"other.js\"]\n".to_owned(),
            "command = \"deno\"\nargs = [\"server.js\"]\n".to_owned(),
            format!("{STDIO}include_tools = [\"get_*\"]\n"),
            format!("{STDIO}exclude_tools = [\"admin_*\"]\n"),
            format!("{STDIO}overrides.echo = {{ read_only = false, destructive = true }}\n"),
            format!("{STDIO}overrides.echo = {{ read_only = true }}\n"),
            format!("{STDIO}env = {{ TOOLSETS = \"${{X}}\" }}\n"),
        ] {
            assert_ne!(key(&changed), base, "{changed}");
        }
        assert_ne!(
            key(&format!(
                "{STDIO}overrides.echo = {{ read_only = false }}\n"
            )),
            key(&format!(
                "{STDIO}overrides.echo = {{ destructive = true }}\n"
            )),
        );
    }

    #[test]
    fn settings_that_do_not_shape_the_catalog_keep_the_key() {
        assert_eq!(
            key(STDIO),
            key(&format!(
                "{STDIO}description = \"notes\"\ntimeout_ms = 5000\ncatalog_ttl_secs = 60\n"
            ))
        );
    }

    #[test]
    fn api_catalogs_are_never_persisted() {
        let api = "kind = \"api\"\nbase_url = \"https://api.example.com\"\n[[connector.tool]]\nname = \"get\"\ndescription = \"Get it.\"\nread_only = true\nmethod = \"GET\"\npath = \"/x\"\ninput_schema = { type = \"object\" }\n";
        assert_eq!(key(api), None);
    }
}
