//! Paging is stable: for every query of every corpus, the page that `limit`
//! and `offset` ask for is exactly that slice of the whole ranking (the rows
//! `limit: 100` returns), with the same `total`, and `hasMore` /
//! `nextOffset` lead to the next slice. A relevance cut, a tie order or a
//! partial sort that depended on the page asked for would show here.

use serde_json::{Value, json};

use connecta_eval::{build, load};
use connecta_search::{Source, Surface, parse_search_args, search_page};

fn page(sources: &[Source<'_>], query: &str, connector: Option<&str>, extra: &Value) -> Value {
    let mut args = json!({ "query": query });
    if let Some(c) = connector {
        args["connector"] = json!(c);
    }
    for (k, v) in extra.as_object().into_iter().flatten() {
        args[k] = v.clone();
    }
    let req = parse_search_args(&args, Surface::SearchTools).expect("arguments parse");
    search_page(&req, sources).expect("page builds")
}

fn addresses(page: &Value) -> Vec<String> {
    page["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["address"].as_str().expect("address").to_owned())
        .collect()
}

#[test]
fn every_page_is_the_slice_of_the_whole_ranking() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() > 10, "corpora found: {paths:?}");
    let mut checked = 0usize;
    for path in &paths {
        let corpus = load(&std::fs::read_to_string(path).expect("read")).expect("parses");
        let built = build(&corpus);
        let sources: Vec<Source<'_>> = built.indexes.iter().map(Source::ready).collect();
        let mut queries: Vec<(String, Option<String>)> = corpus
            .queries
            .iter()
            .map(|q| (q.query.clone(), q.connector.clone()))
            .collect();
        // Browses and one-word queries, over all catalogs and over each,
        // where many rows tie: the connector's id, and the first word of
        // its first tool's name.
        queries.push((String::new(), None));
        for c in &corpus.connectors {
            queries.push((String::new(), Some(c.id.clone())));
            queries.push((c.id.clone(), None));
            if let Some(word) = c.tools.first().and_then(|t| {
                t.name
                    .split(|ch: char| !ch.is_ascii_alphanumeric())
                    .find(|w| !w.is_empty())
            }) {
                queries.push((word.to_owned(), Some(c.id.clone())));
            }
        }
        for (query, connector) in &queries {
            let whole = page(
                &sources,
                query,
                connector.as_deref(),
                &json!({"limit": 100}),
            );
            let all = addresses(&whole);
            let total = whole["total"].as_u64().expect("total") as usize;
            if total > 100 {
                continue;
            }
            assert_eq!(all.len(), total, "{}: {query:?}", path.display());
            for limit in [1usize, 2, 3, 4] {
                let mut offset = 0usize;
                let mut walked = Vec::new();
                loop {
                    let p = page(
                        &sources,
                        query,
                        connector.as_deref(),
                        &json!({"limit": limit, "offset": offset}),
                    );
                    let rows = addresses(&p);
                    let end = (offset + limit).min(all.len());
                    assert_eq!(
                        rows,
                        all[offset.min(all.len())..end],
                        "{}: {query:?} limit {limit} offset {offset}",
                        path.display()
                    );
                    assert_eq!(
                        p["total"].as_u64(),
                        Some(total as u64),
                        "{}: {query:?}",
                        path.display()
                    );
                    walked.extend(rows);
                    checked += 1;
                    if p["hasMore"] != true {
                        break;
                    }
                    offset = p["nextOffset"].as_u64().expect("nextOffset") as usize;
                }
                assert_eq!(walked, all, "{}: {query:?} limit {limit}", path.display());
            }
        }
    }
    assert!(checked > 1000, "pages checked: {checked}");
}
