//! The connecta configuration `serve-synthetic` writes: one `[[connector]]`
//! per synthetic connector, an open loopback endpoint on an ephemeral port,
//! and a data directory of its own. Pure text generation, so a test can hold
//! it against connecta's own config parser.

use std::fmt::Write as _;
use std::path::Path;

use crate::synthetic::catalog::connector_id;
use crate::synthetic::http::connector_url;

use super::process::shell_quote;

/// How the gateway reaches the synthetic connectors.
#[derive(Debug, Clone)]
pub enum Downstream {
    /// One synthetic process serving every connector over loopback HTTP.
    Http { port: u16 },
    /// One synthetic child process per connector over stdio, started by the
    /// gateway: `bench_exe synthetic-downstream --stdio …`.
    Stdio { bench_exe: String, page_size: usize },
}

/// Everything the config needs.
#[derive(Debug, Clone)]
pub struct GatewayConfigSpec<'a> {
    pub connectors: usize,
    pub tools_per_connector: usize,
    pub downstream: Downstream,
    pub data_dir: &'a Path,
}

/// TOML basic string (quoted, escaped).
fn toml_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for ch in value.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The config file text.
pub fn render(spec: &GatewayConfigSpec<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Written by connecta-bench serve-synthetic; regenerated on every run."
    );
    let _ = writeln!(
        out,
        "# {} synthetic connectors x {} tools.\n",
        spec.connectors, spec.tools_per_connector
    );
    let _ = writeln!(out, "[server]");
    let _ = writeln!(out, "listen = \"127.0.0.1:0\"");
    let _ = writeln!(
        out,
        "data_dir = {}\n",
        toml_string(&spec.data_dir.to_string_lossy())
    );
    let _ = writeln!(out, "[auth]\nopen = true\n");
    // The reference harness ran with a silent logger; per-request log lines
    // would be measured as gateway cost otherwise.
    let _ = writeln!(out, "[log]\nlevel = \"warn\"\n");
    for c in 0..spec.connectors {
        let _ = writeln!(out, "[[connector]]");
        let _ = writeln!(out, "id = {}", toml_string(&connector_id(c)));
        let _ = writeln!(out, "kind = \"mcp\"");
        match &spec.downstream {
            Downstream::Http { port } => {
                let url = connector_url(*port, c);
                let _ = writeln!(out, "url = {}", toml_string(&url));
            }
            Downstream::Stdio {
                bench_exe,
                page_size,
            } => {
                let _ = writeln!(out, "command = {}", toml_string(bench_exe));
                let args = [
                    "synthetic-downstream".to_owned(),
                    "--stdio".to_owned(),
                    "--connector-index".to_owned(),
                    c.to_string(),
                    "--tools".to_owned(),
                    spec.tools_per_connector.to_string(),
                    "--page-size".to_owned(),
                    page_size.to_string(),
                ];
                let args: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
                let _ = writeln!(out, "args = [{}]", args.join(", "));
            }
        }
        out.push('\n');
    }
    out
}

/// The `connecta serve` command line for `config`, as argv.
pub fn serve_argv(connecta_bin: &str, config: &Path) -> Vec<String> {
    vec![
        connecta_bin.to_owned(),
        "serve".to_owned(),
        "--config".to_owned(),
        config.to_string_lossy().into_owned(),
        "--listen".to_owned(),
        "127.0.0.1:0".to_owned(),
    ]
}

/// The same, as one shell line (for messages).
pub fn serve_command_line(connecta_bin: &str, config: &Path) -> String {
    serve_argv(connecta_bin, config)
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::toml_string;

    #[test]
    fn toml_strings_escape_quotes_and_backslashes() {
        assert_eq!(toml_string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(toml_string("/tmp/x y"), r#""/tmp/x y""#);
    }
}
