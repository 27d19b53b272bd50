//! `connecta vault rotate-key`: re-encrypt every stored credential under a
//! new key, all or nothing.
//!
//! With a key file: the new key is first written beside it
//! (`<key_file>.new`, mode 0600), then every value is re-encrypted in one
//! transaction, then the new file replaces the old one. A crash in between
//! leaves the new key in `<key_file>.new` (the values are readable with it).
//! Running gateways re-read the key file when they meet values under a new
//! key id, so no restart is needed.
//!
//! With `CONNECTA_VAULT_KEY`: the new key is printed once on stdout and the
//! operator must update the variable (and restart gateways). `--new-key-stdin`
//! takes the new key from stdin instead of generating one, for operators who
//! manage keys elsewhere.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Subcommand;
use connecta_vault::{KeySource, Vault, VaultKey, write_key_file};

use super::credential::{describe_source, open, read_key_from_stdin};

#[derive(Debug, Subcommand)]
pub enum VaultCommand {
    /// Re-encrypt every credential under a new key.
    RotateKey {
        #[arg(long, short)]
        config: Option<PathBuf>,
        /// Read the new key (base64 or hex, 32 bytes) from stdin instead of
        /// generating one.
        #[arg(long)]
        new_key_stdin: bool,
    },
}

pub async fn run(cmd: VaultCommand) -> anyhow::Result<ExitCode> {
    let VaultCommand::RotateKey {
        config,
        new_key_stdin,
    } = cmd;
    let ctx = match open(config, connecta_core::config::Scope::Store).await? {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let Some((old, source)) = ctx.keys.load()? else {
        bail!(
            "there is no vault key (neither ${} nor {}); nothing to rotate",
            connecta_vault::KEY_ENV,
            ctx.keys.file.display()
        );
    };
    let new = if new_key_stdin {
        read_key_from_stdin()?
    } else {
        VaultKey::generate()
    };
    if new == old {
        bail!("the new key is the current key");
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let vault = Vault::new(ctx.store.clone(), old);
    match &source {
        KeySource::File(path) => {
            let staged = staged_path(path);
            write_key_file(&staged, &new)?;
            let n = match vault.rotate(&new, now).await {
                Ok(n) => n,
                Err(e) => {
                    let _ = std::fs::remove_file(&staged);
                    return Err(e).context("rotation failed; nothing was changed");
                }
            };
            std::fs::rename(&staged, path).with_context(|| {
                format!(
                    "the values are re-encrypted under the new key, which is in {}; move it to {} by hand",
                    staged.display(),
                    path.display()
                )
            })?;
            println!(
                "re-encrypted {n} value(s); the new key (id {}) is in {}",
                new.id(),
                path.display()
            );
        }
        KeySource::Env => {
            let n = vault
                .rotate(&new, now)
                .await
                .context("rotation failed; nothing was changed")?;
            eprintln!(
                "re-encrypted {n} value(s) under a new key (id {}). The key came from {}: set it to the value below (shown once) and restart every gateway.",
                new.id(),
                describe_source(&source)
            );
            if !new_key_stdin {
                println!("{}", new.encode());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn staged_path(path: &std::path::Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".new");
    path.with_file_name(name)
}
