//! `connecta token create|list|revoke`: operator-issued access tokens for
//! `/mcp`, straight in the store (works while the gateway runs; a running
//! gateway sees a revocation within `access_tokens::REVALIDATE`).
//!
//! `create` prints the token alone on stdout, once, so a script can capture
//! it; everything else goes to stderr. Nothing else ever prints a token.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Subcommand;
use connecta_server::access_tokens;
use connecta_store::StoreError;
use serde_json::json;

use super::credential::open;

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Issue a token for one caller; it is printed once, on stdout.
    Create {
        /// Who the token is for (letters, digits, `.`, `_`, `-`; at most 64).
        /// Unique among the tokens not revoked; recorded in the activity log.
        name: String,
        /// Lifetime, e.g. `30d`, `12h`, `90m` (default: no expiry).
        #[arg(long, value_name = "DURATION")]
        expires_in: Option<String>,
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Show every token: id, name, dates and status (never the token).
    List {
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Revoke a token by its name or id.
    Revoke {
        name_or_id: String,
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
}

/// The longest lifetime `--expires-in` accepts: ten years.
const MAX_LIFETIME_MS: i64 = 10 * 366 * 24 * 3_600_000;

pub async fn run(cmd: TokenCommand) -> anyhow::Result<ExitCode> {
    let config = match &cmd {
        TokenCommand::Create { config, .. }
        | TokenCommand::List { config, .. }
        | TokenCommand::Revoke { config, .. } => config.clone(),
    };
    // Checked before the store is opened, so a typo creates nothing.
    let lifetime = match &cmd {
        TokenCommand::Create {
            expires_in: Some(d),
            ..
        } => Some(parse_lifetime(d)?),
        _ => None,
    };
    let ctx = match open(config, connecta_core::config::Scope::Store).await? {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let now = connecta_gateway::now_ms();
    match cmd {
        TokenCommand::Create { name, .. } => {
            let issued = access_tokens::issue(&name, now, lifetime.map(|l| now + l))
                .map_err(anyhow::Error::msg)?;
            match ctx.store.token_insert(&issued.row).await {
                Ok(()) => {}
                Err(StoreError::Conflict(m)) => bail!("{m}"),
                Err(e) => return Err(e).context("could not store the token"),
            }
            let expiry = issued.row.expires_at_ms.map_or_else(
                || "never expires".to_owned(),
                |e| format!("expires {}", when(e)),
            );
            eprintln!(
                "issued token `{}` ({}), {expiry}. It is shown once, below: keep it now.",
                issued.row.name, issued.row.id
            );
            println!("{}", issued.token.expose());
            Ok(ExitCode::SUCCESS)
        }
        TokenCommand::List { json, .. } => {
            let rows = ctx.store.token_list().await?;
            if json {
                for t in &rows {
                    println!(
                        "{}",
                        json!({
                            "id": t.id, "name": t.name, "status": access_tokens::status(t, now),
                            "createdAtMs": t.created_at_ms, "expiresAtMs": t.expires_at_ms,
                            "revokedAtMs": t.revoked_at_ms,
                        })
                    );
                }
                return Ok(ExitCode::SUCCESS);
            }
            if rows.is_empty() {
                println!(
                    "no access tokens (issue one with `connecta token create NAME`; {})",
                    ctx.loaded.describe()
                );
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "{:<12}  {:<24}  {:<8}  {:<19}  expires (UTC)",
                "id", "name", "status", "created (UTC)"
            );
            for t in &rows {
                println!(
                    "{:<12}  {:<24}  {:<8}  {:<19}  {}",
                    t.id,
                    t.name,
                    access_tokens::status(t, now),
                    when(t.created_at_ms),
                    t.expires_at_ms.map_or_else(|| "never".to_owned(), when)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        TokenCommand::Revoke { name_or_id, .. } => {
            match ctx.store.token_revoke(&name_or_id, now).await? {
                Some(t) => {
                    println!(
                        "revoked token `{}` ({}); a running gateway refuses it within {} s",
                        t.name,
                        t.id,
                        access_tokens::REVALIDATE.as_secs()
                    );
                    Ok(ExitCode::SUCCESS)
                }
                None => {
                    eprintln!(
                        "no token that is not already revoked has the name or id `{name_or_id}` (see `connecta token list`)"
                    );
                    Ok(ExitCode::FAILURE)
                }
            }
        }
    }
}

fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| ms.to_string())
}

/// `30d`, `12h`, `90m`, `45s` → milliseconds.
fn parse_lifetime(text: &str) -> anyhow::Result<i64> {
    let bad = || {
        anyhow::anyhow!(
            "--expires-in {text:?} is not a lifetime: use a whole number and a unit, e.g. 30d, 12h, 90m or 45s (at most 10 years)"
        )
    };
    let t = text.trim();
    let split = t.len().checked_sub(1).ok_or_else(bad)?;
    let (n, unit) = t.split_at(split);
    let n: i64 = n.parse().map_err(|_| bad())?;
    let unit_ms = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(bad()),
    };
    match n.checked_mul(unit_ms) {
        Some(ms) if n > 0 && ms <= MAX_LIFETIME_MS => Ok(ms),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_are_a_number_and_a_unit() {
        assert_eq!(parse_lifetime("30d").expect("ok"), 30 * 86_400_000);
        assert_eq!(parse_lifetime("12h").expect("ok"), 12 * 3_600_000);
        assert_eq!(parse_lifetime(" 90m ").expect("ok"), 90 * 60_000);
        assert_eq!(parse_lifetime("45s").expect("ok"), 45_000);
        for bad in [
            "",
            "d",
            "0d",
            "-1d",
            "1.5h",
            "3w",
            "30",
            "99999999999999d",
            "3661d",
        ] {
            let e = parse_lifetime(bad).expect_err(bad).to_string();
            assert!(e.contains("--expires-in"), "{e}");
        }
    }
}
