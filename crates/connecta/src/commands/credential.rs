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

use anyhow::{Context, bail};
use clap::Subcommand;
use connecta_core::config::{ConnectorConfig, CredentialSlot, Scope};
use connecta_core::secret::Secret;
use connecta_gateway::credential_admin;
use connecta_store::Store;
use connecta_vault::{KeyLocation, KeySource, VaultKey};

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

/// Opens what a management command needs; `scope` says which parts of the
/// config it reads (the `${ENV}` references elsewhere need not be set).
pub(crate) async fn open(
    config: Option<PathBuf>,
    scope: Scope<'_>,
) -> anyhow::Result<Result<CliContext, ExitCode>> {
    let loaded = match config_file::load_for(config, true, scope) {
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
    credential_admin::slot_of(&ctx.loaded.config, id)
        .map_err(|e| anyhow::anyhow!("{}: {e}", ctx.loaded.describe()))
}

pub async fn run(cmd: CredentialCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CredentialCommand::Set {
            connector,
            field,
            config,
        } => {
            let ctx = match open(config, Scope::Credentials { whole: None }).await? {
                Ok(c) => c,
                Err(code) => return Ok(code),
            };
            set(&ctx, &connector, field.as_deref()).await
        }
        CredentialCommand::Rm { connector, config } => {
            let ctx = match open(config, Scope::Credentials { whole: None }).await? {
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
            let ctx = match open(config, Scope::Credentials { whole: None }).await? {
                Ok(c) => c,
                Err(code) => return Ok(code),
            };
            list(&ctx).await
        }
        CredentialCommand::Test { connector, config } => {
            let scope = Scope::Credentials {
                whole: Some(&connector),
            };
            let ctx = match open(config, scope).await? {
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
    let outcome = credential_admin::set(
        &ctx.loaded.config,
        ctx.store.clone(),
        &ctx.keys,
        id,
        &values,
    )
    .await?;
    if outcome.created_key {
        eprintln!(
            "created a new vault key in {} (mode 0600); back it up: without it the stored credentials cannot be read",
            ctx.keys.file.display()
        );
    }
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
    let (slots, orphans) =
        credential_admin::slot_states(&ctx.loaded.config, ctx.store.as_ref(), &ctx.keys).await?;
    for slot in &slots {
        println!("{}  {}", slot.connector, slot.label);
        for f in &slot.fields {
            let state = match (&f.masked, &f.problem) {
                _ if !f.set => "not set".to_owned(),
                (_, Some(p)) => format!("set, unreadable: {p}"),
                (Some(m), None) => format!("set {m}"),
                (None, None) => "set".to_owned(),
            };
            println!("  {}: {state}", f.field);
        }
    }
    for o in &orphans {
        println!(
            "{}  (not a credential slot in this config)\n  {}: stored",
            o.connector, o.field
        );
    }
    if slots.is_empty() && orphans.is_empty() {
        println!(
            "no connector in {} declares a credential",
            ctx.loaded.describe()
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn test(ctx: &CliContext, id: &str) -> anyhow::Result<ExitCode> {
    match credential_admin::test(&ctx.loaded.config, ctx.store.clone(), &ctx.keys, id).await? {
        Ok(what) => {
            println!("{id}: ok ({what})");
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            println!("{id}: FAIL: {why}");
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
