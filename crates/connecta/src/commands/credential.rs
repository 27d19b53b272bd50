//! `connecta credential set|rm|list|test`: manage the vault values of
//! connectors that declare a `[connector.credential]` slot.
//!
//! A value never comes from the command line (it would sit in shell history
//! and `ps`): `set` reads it from stdin when stdin is not a terminal, else
//! prompts without echo. Nothing here prints a value; `list` shows only
//! whether each field is set and, for long values, a masked suffix.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Subcommand;
use connecta_connectors::{
    ApiConnector, CallOptions, Connector, CredentialBinding, CredentialSource, McpConnector,
    McpOptions,
};
use connecta_core::config::{ConnectorConfig, ConnectorKind, CredentialSlot};
use connecta_core::secret::{Secret, mask};
use connecta_gateway::{ArgValidator, KeyCache, Redactor, VaultCredentials, now_ms};
use connecta_store::Store;
use connecta_vault::{KeyLocation, KeySource, Vault, VaultKey};
use serde_json::Value;

use crate::config_file::{self, LoadError, Loaded};

#[derive(Debug, Subcommand)]
pub enum CredentialCommand {
    /// Set or replace a connector's credential. The value is read from stdin
    /// (one line per field) or prompted for without echo; never an argument.
    Set {
        connector: String,
        /// Set only this field of the slot (default: every field).
        #[arg(long)]
        field: Option<String>,
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Remove every stored field of a connector's credential.
    Rm {
        connector: String,
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Show each credential slot and whether its fields are set (masked).
    List {
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Run the connector's declared test request with the stored credential.
    Test {
        connector: String,
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
}

/// The config, the store and where the vault key lives.
pub(crate) struct CliContext {
    pub loaded: Loaded,
    pub store: Arc<dyn Store>,
    pub keys: KeyLocation,
}

pub(crate) async fn open(config: Option<PathBuf>) -> anyhow::Result<Result<CliContext, ExitCode>> {
    let loaded = match config_file::load(config, true) {
        Ok(l) => l,
        Err(LoadError::Invalid(e)) => {
            eprintln!("{e}");
            return Ok(Err(ExitCode::FAILURE));
        }
        Err(LoadError::Other(e)) => return Err(e),
    };
    let dir = connecta_gateway::data_dir(&loaded.config, loaded.dir());
    let store = super::open_store(&loaded.config, &dir).await?;
    let keys = connecta_gateway::vault_key_location(&loaded.config, loaded.dir());
    Ok(Ok(CliContext {
        loaded,
        store,
        keys,
    }))
}

fn slotted<'c>(
    ctx: &'c CliContext,
    id: &str,
) -> anyhow::Result<(&'c ConnectorConfig, &'c CredentialSlot)> {
    let Some(c) = ctx.loaded.config.connectors.iter().find(|c| c.id == id) else {
        let ids: Vec<&str> = ctx
            .loaded
            .config
            .connectors
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        bail!(
            "{} has no connector \"{id}\" (connectors: {})",
            ctx.loaded.describe(),
            ids.join(", ")
        );
    };
    let Some(slot) = &c.credential else {
        bail!("connector \"{id}\" declares no [connector.credential] slot");
    };
    Ok((c, slot))
}

pub async fn run(cmd: CredentialCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CredentialCommand::Set {
            connector,
            field,
            config,
        } => {
            let ctx = match open(config).await? {
                Ok(c) => c,
                Err(code) => return Ok(code),
            };
            set(&ctx, &connector, field.as_deref()).await
        }
        CredentialCommand::Rm { connector, config } => {
            let ctx = match open(config).await? {
                Ok(c) => c,
                Err(code) => return Ok(code),
            };
            let n = ctx.store.vault_delete(&connector).await?;
            if n == 0 {
                println!("{connector}: no credential was stored");
            } else {
                println!("{connector}: credential removed ({n} field(s))");
            }
            Ok(ExitCode::SUCCESS)
        }
        CredentialCommand::List { config } => {
            let ctx = match open(config).await? {
                Ok(c) => c,
                Err(code) => return Ok(code),
            };
            list(&ctx).await
        }
        CredentialCommand::Test { connector, config } => {
            let ctx = match open(config).await? {
                Ok(c) => c,
                Err(code) => return Ok(code),
            };
            test(&ctx, &connector).await
        }
    }
}

async fn set(ctx: &CliContext, id: &str, only: Option<&str>) -> anyhow::Result<ExitCode> {
    let (_, slot) = slotted(ctx, id)?;
    let fields: Vec<String> = match only {
        Some(f) if slot.fields.iter().any(|x| x == f) => vec![f.to_owned()],
        Some(f) => bail!(
            "the credential of \"{id}\" has no field \"{f}\" (fields: {})",
            slot.fields.join(", ")
        ),
        None => slot.fields.clone(),
    };
    let values = read_values(id, slot, &fields)?;
    for (f, v) in &values {
        connecta_vault::check_value(f, v.expose())?;
    }
    let (key, source, created) = ctx.keys.load_or_create()?;
    // One vault, one key: refuse to mix values sealed under different keys.
    if let Some(other) = ctx
        .store
        .vault_list()
        .await?
        .into_iter()
        .find(|r| r.key_id != key.id())
    {
        bail!(
            "the vault was encrypted with a different key (stored key id {}, {} has id {}); use the key it was written with",
            other.key_id,
            source,
            key.id()
        );
    }
    if created {
        eprintln!(
            "created a new vault key in {} (mode 0600); back it up: without it the stored credentials cannot be read",
            ctx.keys.file.display()
        );
    }
    Vault::new(ctx.store.clone(), key)
        .set(id, &values, now_ms())
        .await?;
    println!("{id}: {} set ({})", slot.label, fields.join(", "));
    Ok(ExitCode::SUCCESS)
}

/// One value per field: prompted without echo on a terminal, else one line
/// per field from stdin.
fn read_values(
    id: &str,
    slot: &CredentialSlot,
    fields: &[String],
) -> anyhow::Result<Vec<(String, Secret)>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let mut out = Vec::new();
        for f in fields {
            let v = prompt_hidden(&format!("{} for {id} — {f}: ", slot.label))?;
            out.push((f.clone(), Secret::new(v)));
        }
        return Ok(out);
    }
    let mut text = String::new();
    stdin
        .lock()
        .read_to_string(&mut text)
        .context("could not read the value from stdin")?;
    let text = text
        .strip_suffix('\n')
        .map(|t| t.strip_suffix('\r').unwrap_or(t))
        .unwrap_or(&text);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if lines.len() != fields.len() {
        bail!(
            "expected {} line(s) on stdin ({}), got {}",
            fields.len(),
            fields.join(", then "),
            lines.len()
        );
    }
    Ok(fields
        .iter()
        .zip(lines)
        .map(|(f, v)| (f.clone(), Secret::new(v)))
        .collect())
}

/// Prompt on stderr and read one line from the terminal with echo off.
fn prompt_hidden(prompt: &str) -> anyhow::Result<String> {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let mut err = std::io::stderr();
    write!(err, "{prompt}")?;
    err.flush()?;
    let saved = tcgetattr(&stdin).context("could not read the terminal settings")?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    quiet.local_flags.insert(LocalFlags::ECHONL);
    tcsetattr(&stdin, SetArg::TCSANOW, &quiet).context("could not turn echo off")?;
    let mut line = String::new();
    let read = stdin.read_line(&mut line);
    let _ = tcsetattr(&stdin, SetArg::TCSANOW, &saved);
    read.context("could not read the value")?;
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

async fn list(ctx: &CliContext) -> anyhow::Result<ExitCode> {
    let key = ctx.keys.load();
    let rows = ctx.store.vault_list().await?;
    let mut any = false;
    for c in &ctx.loaded.config.connectors {
        let Some(slot) = &c.credential else { continue };
        any = true;
        println!("{}  {}", c.id, slot.label);
        for f in &slot.fields {
            let row = rows.iter().find(|r| r.connector == c.id && &r.field == f);
            let state = match (row, &key) {
                (None, _) => "not set".to_owned(),
                (Some(r), Ok(Some((k, _)))) => match connecta_vault::open(k, r) {
                    Ok(v) => format!("set {}", mask(v.expose())),
                    Err(e) => format!("set, unreadable: {e}"),
                },
                (Some(_), Ok(None)) => "set, unreadable: no vault key".to_owned(),
                (Some(_), Err(e)) => format!("set, unreadable: {e}"),
            };
            println!("  {f}: {state}");
        }
    }
    for r in &rows {
        if !ctx
            .loaded
            .config
            .connectors
            .iter()
            .any(|c| c.id == r.connector && c.credential.is_some())
        {
            println!(
                "{}  (not a credential slot in this config)\n  {}: stored",
                r.connector, r.field
            );
        }
    }
    if !any && rows.is_empty() {
        println!(
            "no connector in {} declares a credential",
            ctx.loaded.describe()
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn test(ctx: &CliContext, id: &str) -> anyhow::Result<ExitCode> {
    let (c, slot) = slotted(ctx, id)?;
    // What the downstream says is printed: any secret it quotes back (the
    // vault's values, config header values) is redacted first.
    let redactor = Redactor::default();
    connecta_gateway::register_config_secrets(c, &redactor);
    let source = Arc::new(VaultCredentials::new(
        id,
        slot.clone(),
        ctx.store.clone(),
        Arc::new(KeyCache::new(ctx.keys.clone())),
        redactor.clone(),
    ));
    if let Err(why) = source.load().await {
        println!("{id}: FAIL: {}", why.operator_detail());
        return Ok(ExitCode::FAILURE);
    }
    let binding = CredentialBinding {
        slot: slot.clone(),
        source,
    };
    let started = Instant::now();
    let timeout = c.timeout;
    let outcome = match &c.kind {
        ConnectorKind::Api(api) => {
            let Some(t) = &api.test else {
                bail!(
                    "connector \"{id}\" has no [connector.test] request to run; add one (tool and args)"
                );
            };
            let connector =
                ApiConnector::new(id, api, Some(binding)).map_err(anyhow::Error::msg)?;
            let tool = api
                .tools
                .iter()
                .find(|x| x.name == t.tool)
                .context("the test tool is not declared")?;
            if let Err(e) = ArgValidator::compile(&tool.input_schema).check(&t.args) {
                println!("{id}: FAIL: the [connector.test] args: {}", e.message);
                return Ok(ExitCode::FAILURE);
            }
            let args = match &t.args {
                Value::Object(m) => m.clone(),
                _ => Default::default(),
            };
            connector
                .call(
                    &t.tool,
                    args,
                    CallOptions {
                        timeout,
                        cancel: Default::default(),
                    },
                )
                .await
                .map(|r| {
                    let text = r
                        .content
                        .first()
                        .and_then(|b| b.get("text"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    format!("{} answered {} bytes", t.tool, text.len())
                })
        }
        ConnectorKind::Mcp(m) => {
            let connector = McpConnector::with_credential(
                id,
                m.transport.clone(),
                McpOptions::default(),
                Some(binding),
            );
            let r = connector
                .list_tools(timeout.max(Duration::from_secs(5)))
                .await
                .map(|tools| format!("listed {} tools", tools.len()));
            connector.shutdown().await;
            r
        }
    };
    match outcome {
        Ok(what) => {
            println!("{id}: ok ({what} in {} ms)", started.elapsed().as_millis());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("{id}: FAIL: {}: {}", e.code, redactor.redact(&e.message));
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Used by `vault rotate-key`.
pub(crate) fn describe_source(s: &KeySource) -> String {
    s.to_string()
}

/// Used by `vault rotate-key` to parse a key from stdin.
pub(crate) fn read_key_from_stdin() -> anyhow::Result<VaultKey> {
    let mut text = String::new();
    std::io::stdin()
        .lock()
        .read_to_string(&mut text)
        .context("could not read the new key from stdin")?;
    Ok(VaultKey::parse(&text, "the key on stdin")?)
}
