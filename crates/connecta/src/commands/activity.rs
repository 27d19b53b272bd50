//! `connecta activity tail`: print recent payload-free activity events
//! straight from the store (works while the gateway runs).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use connecta_core::activity::ActivityEvent;
use connecta_store::ActivityQuery;

use crate::config_file::{self, LoadError};

#[derive(Debug, Subcommand)]
pub enum ActivityCommand {
    /// Print the most recent events, oldest first.
    Tail {
        #[arg(long, short)]
        config: Option<PathBuf>,
        /// How many events.
        #[arg(long, short = 'n', default_value_t = 20)]
        limit: usize,
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
        /// Keep printing new events as they arrive.
        #[arg(long, short)]
        follow: bool,
        /// Only this connector.
        #[arg(long)]
        connector: Option<String>,
    },
}

pub async fn run(cmd: ActivityCommand) -> anyhow::Result<ExitCode> {
    let ActivityCommand::Tail {
        config,
        limit,
        json,
        follow,
        connector,
    } = cmd;
    let loaded = match config_file::load_for(config, true, connecta_core::config::Scope::Store) {
        Ok(l) => l,
        Err(LoadError::Invalid(e)) => {
            eprintln!("{e}");
            return Ok(ExitCode::FAILURE);
        }
        Err(LoadError::Other(e)) => return Err(e),
    };
    let dir = connecta_gateway::data_dir(&loaded.config, loaded.dir());
    let store = super::open_store(&loaded.config, &dir).await?;
    let query = ActivityQuery {
        limit: limit.max(1),
        connector: connector.clone(),
        ..ActivityQuery::default()
    };
    let mut events = store.activity_list(&query).await?;
    events.reverse();
    let mut last = events.last().map(|e| (e.occurred_at_ms, e.id.clone()));
    if !json && !events.is_empty() {
        println!(
            "{:<23}  {:<21}  {:<36}  {:<9}  {:>6}  error / friction",
            "time (UTC)", "source", "address", "outcome", "ms"
        );
    }
    for e in &events {
        print_event(e, json);
    }
    if !follow {
        return Ok(ExitCode::SUCCESS);
    }
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let mut fresh = store
            .activity_list(&ActivityQuery {
                limit: 1_000,
                connector: connector.clone(),
                since_ms: last.as_ref().map(|l| l.0),
                ..ActivityQuery::default()
            })
            .await?;
        fresh.reverse();
        for e in fresh {
            if last
                .as_ref()
                .is_some_and(|(ms, id)| (e.occurred_at_ms, &e.id) <= (*ms, id))
            {
                continue;
            }
            print_event(&e, json);
            last = Some((e.occurred_at_ms, e.id.clone()));
        }
    }
}

fn print_event(e: &ActivityEvent, json: bool) {
    if json {
        println!("{}", serde_json::to_string(e).unwrap_or_default());
        return;
    }
    let when = chrono::DateTime::from_timestamp_millis(e.occurred_at_ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S%.3f").to_string())
        .unwrap_or_default();
    let problem = match (e.error_code, e.friction) {
        (Some(c), _) => c.as_str().to_owned(),
        (None, Some(f)) => f.as_str().to_owned(),
        (None, None) => String::new(),
    };
    // An approval event says which question, and who decided it.
    let (source, problem) = match &e.approval {
        Some(a) => {
            let by = a
                .decided_by
                .as_deref()
                .map(|b| format!(" by {}", printable(b)))
                .unwrap_or_default();
            let decision = a.decision.map_or("", |d| d.as_str());
            (
                e.kind.as_str(),
                format!("{} {decision}{by}", printable(&a.id)),
            )
        }
        None => (e.source.as_str(), problem),
    };
    println!(
        "{:<23}  {:<21}  {:<36}  {:<9}  {:>6}  {}",
        when,
        source,
        printable(&e.address),
        e.outcome.as_str(),
        e.duration_ms,
        problem
    );
}

/// `text` safe to print on a terminal: an address is the caller's text (an
/// invented tool name), so control characters (escape sequences, newlines
/// that would forge rows) and bidirectional overrides are shown escaped.
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn caller_text_cannot_drive_the_terminal() {
        assert_eq!(printable("demo.get_note"), "demo.get_note");
        assert_eq!(printable("démo.ノート"), "démo.ノート");
        assert_eq!(
            printable("demo.\u{1b}[2J\nfake row"),
            "demo.\\u{1b}[2J\\u{a}fake row"
        );
        assert_eq!(printable("a\u{202e}b"), "a\\u{202e}b");
    }
}
