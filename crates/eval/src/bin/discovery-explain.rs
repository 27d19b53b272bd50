//! `cargo run -p connecta-eval --bin discovery-explain -- CORPUS.json QUERY
//! [CONNECTOR]`
//!
//! Ranks one query over a corpus's catalogs, as `search_tools` does (scoped
//! to `CONNECTOR` when given), and prints every hit with its tier and
//! score, then what the query asks and its analysis. A tool for ranking
//! work: it shows why one row is above another.

use std::process::ExitCode;

use connecta_core::policy::Safety;
use connecta_eval::{build, load};
use connecta_search::{CatalogIndex, SearchQuery, rank};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, query, connector) = match &args[..] {
        [p, q] => (p, q, None),
        [p, q, c] => (p, q, Some(c.as_str())),
        _ => {
            eprintln!("usage: discovery-explain CORPUS.json QUERY [CONNECTOR]");
            return ExitCode::from(2);
        }
    };
    let corpus = match std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| load(&t))
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let built = build(&corpus);
    let indexes: Vec<&CatalogIndex> = built
        .indexes
        .iter()
        .filter(|ix| connector.is_none_or(|c| ix.connector() == c))
        .collect();
    if indexes.is_empty() {
        eprintln!("no connector {}", connector.unwrap_or_default());
        return ExitCode::from(2);
    }
    let ranked = rank(
        &indexes,
        &SearchQuery::new(query, Safety::All).scoped(connector.is_some()),
        100,
    );
    for hit in &ranked.hits {
        let ix = indexes[hit.source];
        println!(
            "{:>2} {:7.4}  {}.{}",
            hit.tier,
            hit.score,
            ix.connector(),
            ix.catalog().tools()[hit.tool as usize].name
        );
    }
    println!(
        "total {} mode {:?} asks {:?} opposed {} other-change {}",
        ranked.total, ranked.mode, ranked.asks, ranked.opposed, ranked.other_change
    );
    println!("{:?}", ranked.analysis);
    ExitCode::SUCCESS
}
