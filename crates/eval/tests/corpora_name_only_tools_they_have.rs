//! Every corpus in `crates/eval/corpus` (and the shared development one)
//! labels only tools it declares: a misspelt address would count as a miss
//! for ever and be read as a ranking fault.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use connecta_eval::load;

fn corpora() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files.push(dir.join("../../../../shared/data/discovery-development.json"));
    files.retain(|p| p.exists());
    files
}

#[test]
fn every_label_names_a_declared_tool_and_the_expected_top_and_page_are_relevant() {
    let files = corpora();
    assert!(files.len() >= 6, "the corpora: {files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let corpus = load(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut addresses = HashSet::new();
        let connectors: HashSet<&str> = corpus.connectors.iter().map(|c| c.id.as_str()).collect();
        for c in &corpus.connectors {
            for t in &c.tools {
                assert!(
                    addresses.insert(format!("{}.{}", c.id, t.name)),
                    "{}: {}.{} twice",
                    file.display(),
                    c.id,
                    t.name
                );
            }
        }
        for q in &corpus.queries {
            let at = format!("{}: {:?}", file.display(), q.id);
            for r in &q.relevant {
                assert!(addresses.contains(r), "{at} labels unknown {r}");
                if let Some(c) = &q.connector {
                    assert!(r.starts_with(&format!("{c}.")), "{at}: {r} is outside {c}");
                }
            }
            if let Some(top) = &q.expected_top {
                assert!(q.relevant.contains(top), "{at}: {top} is not relevant");
            }
            // An expected page is one page's rows, of the relevant tools:
            // it needs its `limit` (`offset` is 0 unless given), and no
            // `paginate: "all"`.
            if let Some(rows) = &q.expected_page {
                assert!(
                    q.limit.is_some() && q.paginate.is_none(),
                    "{at}: an expected page needs a limit, and no paginate"
                );
                // (Empty: a page past the last row.)
                assert!(
                    rows.len() as u64 <= q.limit.unwrap_or(0),
                    "{at}: {} expected rows on a page of {:?}",
                    rows.len(),
                    q.limit
                );
                for r in rows {
                    assert!(q.relevant.contains(r), "{at}: page row {r} is not relevant");
                }
            }
            if let Some(c) = &q.connector {
                assert!(
                    connectors.contains(c.as_str()),
                    "{at}: unknown connector {c}"
                );
            }
        }
    }
}
