//! Which catalogs may answer which part of the query: a word that the
//! catalogs knowing it know only as their connector's id names those
//! connectors; a part of a query asking for several things that names no
//! connector may be answered by any catalog.

use crate::index::CatalogIndex;
use crate::lexicon::Lexicon;
use crate::tokenize::TermKind;

use super::bind::QTerm;
use super::prepare::{Prepared, required};

/// Set `p`'s scope (`in_scope`, `by_name_only`, `open_words`, and the
/// terms other catalogs may not see); returns whether the query names a
/// connector.
pub(super) fn scope(
    lex: &Lexicon,
    raw: &[QTerm],
    indexes: &[&CatalogIndex],
    p: &mut Prepared,
) -> bool {
    let (named, mut naming_parts) = named(lex, raw, indexes, p);
    let names_connector = named.contains(&true);
    if !names_connector {
        return false;
    }
    // In a query of several parts, a part that names no connector may be
    // answered by any catalog: "redeploy the site to Vercel and announce it
    // in the Teams channel" is Vercel's for its first part only. The other
    // catalogs see only the words of such parts. A part whose words the
    // named connectors' tool names all carry (the generic read verbs and
    // words no catalog knows aside) is theirs: "show vercel deployments and
    // list projects" stays Vercel's, whose `list_projects` says "projects".
    naming_parts |= covered_parts(lex, raw, indexes, p, &named, naming_parts);
    let mut open = vec![false; p.n_distinct];
    for (t, &d) in raw.iter().zip(&p.raw_distinct) {
        open[d] |= t.kind != TermKind::Stop && naming_parts & 1 << t.part == 0;
    }
    let spread = p
        .terms
        .iter()
        .any(|&i| open[p.raw_distinct[i]] && required(raw, i));
    if spread {
        for (src, &named) in named.iter().enumerate() {
            if !named {
                for d in (0..p.n_distinct).filter(|&d| !open[d]) {
                    p.local[src * p.n_distinct + d] = None;
                }
            }
        }
        p.by_name_only = named.iter().map(|&named| !named).collect();
    } else {
        p.in_scope = named;
    }
    p.open_words = (0..p.terms.len())
        .filter(|&k| open[p.raw_distinct[p.terms[k]]] && !lex.is_generic(&raw[p.terms[k]].text))
        .fold(0, |m, k| m | 1 << k);
    true
}

/// Per index, whether the query names its connector, and the parts (as a
/// bit set) that name one: a content word that the catalogs knowing it all
/// know only as their connector's id ("figma"). A query may name several.
/// Numbers and the generic read verbs (a connector called `fetch`) name
/// nothing.
fn named(
    lex: &Lexicon,
    raw: &[QTerm],
    indexes: &[&CatalogIndex],
    p: &Prepared,
) -> (Vec<bool>, u64) {
    let mut named = vec![false; indexes.len()];
    let mut naming_parts = 0u64;
    for &i in &p.terms {
        if raw[i].kind != TermKind::Scored || lex.is_generic(&raw[i].text) {
            continue;
        }
        let d = p.raw_distinct[i];
        let holds = |src: usize| p.local[src * p.n_distinct + d];
        let mut held = false;
        let mut as_connector = true;
        for (src, ix) in indexes.iter().enumerate() {
            if let Some(id) = holds(src) {
                held = true;
                as_connector &= ix.is_connector_term(id);
            }
        }
        if held && as_connector {
            (0..indexes.len())
                .filter(|&src| holds(src).is_some())
                .for_each(|src| named[src] = true);
            naming_parts |= raw
                .iter()
                .zip(&p.raw_distinct)
                .filter(|&(_, &rd)| rd == d)
                .fold(0u64, |m, (t, _)| m | 1 << t.part);
        }
    }
    (named, naming_parts)
}

/// The parts naming no connector whose known content words the named
/// connectors' tool names all carry.
fn covered_parts(
    lex: &Lexicon,
    raw: &[QTerm],
    indexes: &[&CatalogIndex],
    p: &Prepared,
    named: &[bool],
    naming_parts: u64,
) -> u64 {
    let local = |src: usize, d: usize| p.local[src * p.n_distinct + d];
    let in_named_name = |d: usize| {
        indexes
            .iter()
            .enumerate()
            .any(|(src, ix)| named[src] && local(src, d).is_some_and(|id| ix.in_a_name(id)))
    };
    let known = |d: usize| (0..indexes.len()).any(|src| local(src, d).is_some());
    let mut covered = !naming_parts;
    for (t, &d) in raw.iter().zip(&p.raw_distinct) {
        if covered & 1 << t.part != 0
            && t.kind == TermKind::Scored
            && !lex.is_generic(&t.text)
            && known(d)
            && !in_named_name(d)
        {
            covered &= !(1 << t.part);
        }
    }
    covered
}
