//! `connecta approvals list|approve|reject`: answer the questions the `ask`
//! policy puts to a human, straight in the store (works while the gateway
//! runs, from any machine that shares its database). The waiting call sees
//! the answer within a quarter second.
//!
//! `list` shows what an approver needs: the tool, the connector, who asked,
//! the agent's reason and the arguments. A decided question keeps neither
//! the reason nor the arguments.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use connecta_core::activity::ApprovalDecision;
use connecta_core::error::clamp_text;
use connecta_store::ApprovalRow;

use super::activity::printable;
use super::credential::open;

#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// Show the questions waiting for an answer (with --all, decided ones too).
    List {
        /// Decided questions too, newest first.
        #[arg(long)]
        all: bool,
        /// One JSON object per line (arguments whole) instead of a table.
        #[arg(long)]
        json: bool,
        #[arg(long, short = 'n', default_value_t = 50)]
        limit: usize,
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Allow one waiting call to run, once.
    Approve {
        id: String,
        /// Who is deciding, for the activity log (default: $USER).
        #[arg(long)]
        by: Option<String>,
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Refuse one waiting call.
    Reject {
        id: String,
        /// Who is deciding, for the activity log (default: $USER).
        #[arg(long)]
        by: Option<String>,
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
}

/// Arguments shown in the table are cut here; `--json` has them whole.
const SHOWN_ARGS: usize = 300;

pub async fn run(cmd: ApprovalsCommand) -> anyhow::Result<ExitCode> {
    let config = match &cmd {
        ApprovalsCommand::List { config, .. }
        | ApprovalsCommand::Approve { config, .. }
        | ApprovalsCommand::Reject { config, .. } => config.clone(),
    };
    let ctx = match open(config, connecta_core::config::Scope::Store).await? {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let now = connecta_gateway::now_ms();
    let (id, by, decision) = match cmd {
        ApprovalsCommand::List {
            all, json, limit, ..
        } => {
            let rows = ctx.store.approval_list(!all, limit.max(1)).await?;
            if json {
                for r in &rows {
                    println!("{}", connecta_gateway::approval_view(r, now));
                }
            } else if rows.is_empty() {
                println!(
                    "{}",
                    if all {
                        "no approval questions"
                    } else {
                        "no approval questions are waiting"
                    }
                );
            } else {
                for r in &rows {
                    print_row(r, now);
                }
            }
            return Ok(ExitCode::SUCCESS);
        }
        ApprovalsCommand::Approve { id, by, .. } => (id, by, ApprovalDecision::AllowedOnce),
        ApprovalsCommand::Reject { id, by, .. } => (id, by, ApprovalDecision::Rejected),
    };
    let who = by
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "operator".into());
    let decided_by = format!("cli:{}", clamp_text(&who, 64));
    match ctx
        .store
        .approval_decide(&id, decision, &decided_by, now, true)
        .await?
    {
        Some(r) => {
            println!(
                "{} {} ({}): {}",
                decision.as_str(),
                r.id,
                printable(&r.address),
                match decision {
                    ApprovalDecision::AllowedOnce => "the call runs now, once",
                    _ => "the call is refused",
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let why = match ctx.store.approval_get(&id).await? {
                None => format!("there is no approval question `{}`", printable(&id)),
                Some(r) if !r.is_pending() => format!(
                    "{} was already decided: {} by {}",
                    r.id,
                    r.status,
                    r.decided_by.as_deref().map_or("?".into(), printable)
                ),
                Some(r) => format!(
                    "{} has expired (nobody answered within its time); the caller got `approval_unavailable`",
                    r.id
                ),
            };
            eprintln!("{why}");
            Ok(ExitCode::FAILURE)
        }
    }
}

fn print_row(r: &ApprovalRow, now: i64) {
    let age_s = (now - r.created_at_ms).max(0) / 1000;
    println!(
        "{}  {}  {}  asked by {} {}s ago",
        r.id,
        connecta_gateway::approval_status(r, now),
        printable(&r.address),
        printable(&r.actor.key()),
        age_s
    );
    if r.is_pending() {
        let left = (r.expires_at_ms - now).max(0) / 1000;
        if let Some(reason) = &r.reason {
            println!("    reason: {}", printable(reason));
        }
        if let Some(args) = &r.args_json {
            println!("    args:   {}", printable(&clamp_text(args, SHOWN_ARGS)));
        }
        if left > 0 {
            println!(
                "    answer within {left}s: connecta approvals approve {0}  |  connecta approvals reject {0}",
                r.id
            );
        }
    } else if let Some(by) = &r.decided_by {
        println!("    decided by {}", printable(by));
    }
}
