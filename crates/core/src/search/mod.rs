//! Lexical search over every connector's catalog.
//!
//! An index is built once per set of catalog fingerprints and reused across
//! requests; a query is tokenized the same way tool text is, scored with
//! BM25 over name and description fields, and filtered with the same safety
//! predicate the call path uses.

mod index;
mod tokenize;

pub use index::{CatalogIndex, Hit, MatchMode, QueryAnalysis, SearchHits, SearchQuery, search};
pub use tokenize::tokenize;
