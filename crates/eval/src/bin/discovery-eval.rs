//! `cargo run -p connecta-eval --bin discovery-eval -- [--json] [--verbose]
//! [--no-gate] [--pool] [--lexicon FILE] [CORPUS…]`
//!
//! Without paths it evaluates this crate's development corpus (gated) and,
//! when present, the shared development corpus (`../shared/data/…` next to
//! the repository), gated too: a two-query check that a tool whose name
//! the query spells comes first, and alone, beside tools whose boilerplate
//! descriptions carry every query word. Every corpus named on the command
//! line is gated. With `--pool`, the corpora named are scored as one
//! (every query of each together) and only that pooled report is printed
//! and gated: the way the blind holdouts are measured. Exits 1 when a gated corpus misses a bar (unless
//! `--no-gate`), 2 on a usage or input error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use connecta_eval::{evaluate, load, pool, render_markdown};
use connecta_search::Lexicon;

fn main() -> ExitCode {
    let mut json = false;
    let mut verbose = false;
    let mut gate = true;
    let mut pooled = false;
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lexicon" => {
                let Some(file) = args.next() else {
                    eprintln!("--lexicon needs a file");
                    return ExitCode::from(2);
                };
                if let Err(e) = install_lexicon(Path::new(&file)) {
                    eprintln!("{file}: {e}");
                    return ExitCode::from(2);
                }
            }
            "--json" => json = true,
            "--verbose" | "-v" => verbose = true,
            "--no-gate" => gate = false,
            "--pool" => pooled = true,
            "--help" | "-h" => {
                println!(
                    "usage: discovery-eval [--json] [--verbose] [--no-gate] [--pool] [--lexicon FILE] [CORPUS.json …]\n\
                     --lexicon FILE: search with this whole lexicon in place of the built-in one\n\
                     default corpora: crates/eval/corpus/development.json and, if present, \
                     ../shared/data/discovery-development.json"
                );
                return ExitCode::SUCCESS;
            }
            other if other.starts_with('-') => {
                eprintln!("unknown option {other}");
                return ExitCode::from(2);
            }
            path => paths.push(PathBuf::from(path)),
        }
    }
    let mut gated: Vec<bool> = vec![true; paths.len()];
    if paths.is_empty() {
        let (p, g) = default_corpora();
        paths = p;
        gated = g;
    }
    let mut reports = Vec::new();
    for path in &paths {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        let mut corpus = match load(&text) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        if corpus.name.is_empty() {
            corpus.name = path.display().to_string();
        }
        reports.push(evaluate(&corpus));
    }
    if pooled {
        reports = vec![pool(&format!("{} corpora pooled", reports.len()), &reports)];
        gated = vec![gated.iter().any(|&g| g)];
    }
    if json {
        match serde_json::to_string_pretty(&reports) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    } else {
        for r in &reports {
            println!("{}", render_markdown(r, verbose));
        }
    }
    let missed = reports
        .iter()
        .zip(&gated)
        .any(|(r, g)| *g && !r.missed_bars.is_empty());
    if gate && missed {
        eprintln!("discovery bars missed");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Search with the lexicon in `file` alone, in place of the built-in one
/// (before any index is built).
fn install_lexicon(file: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let lexicon = Lexicon::from_text(&text).map_err(|diagnostics| {
        diagnostics
            .iter()
            .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    connecta_search::install_lexicon(Arc::new(lexicon))
        .map_err(|_| "a lexicon was installed already".to_owned())
}

fn default_corpora() -> (Vec<PathBuf>, Vec<bool>) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![crate_dir.join("corpus/development.json")];
    let mut gated = vec![true];
    // crates/eval → repository root → its sibling `shared/`.
    if let Some(root) = crate_dir.parent().and_then(Path::parent) {
        let shared = root.join("../shared/data/discovery-development.json");
        if shared.exists() {
            out.push(shared);
            gated.push(true);
        }
    }
    (out, gated)
}
