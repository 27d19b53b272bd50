//! connecta's tool search: lexical search over every connector's catalog.
//!
//! What it knows of words is data: the [`Lexicon`] (`lexicon.toml`,
//! compiled in, extended per deployment). An index ([`CatalogIndex`]) is
//! built once per catalog fingerprint and reused across requests; a query
//! is analysed once ([`Query::parse`]), ranked in named stages across the
//! indexes it is given ([`rank`]), and the ranked list becomes an
//! agent-facing page ([`search_page`]) or exact descriptions
//! ([`describe`]). Everything here is pure: the gateway loads catalogs and
//! caches indexes; this crate only computes (the binary reads a
//! deployment's lexicon file and installs it).

#![forbid(unsafe_code)]
// `ToolError` is the agent-facing error itself (code, message, nextAction,
// details), returned once per request, never in a hot loop: boxing it would
// only add an allocation and an unwrap at every call site in the gateway.
#![allow(clippy::result_large_err)]

mod describe;
mod entry;
mod index;
mod lexicon;
mod op;
mod page;
mod query;
mod rank;
mod source;
mod suggest;
mod terms;
mod tokenize;
mod vocab;

pub use describe::{
    DescribeFormat, DescribeRequest, MAX_DESCRIBE_ADDRESSES, describe, parse_describe_args,
};
pub use entry::SHORT_DESCRIPTION_BYTES;
pub use index::CatalogIndex;
pub use lexicon::{BUILTIN as BUILTIN_LEXICON, Lexicon, install as install_lexicon};
pub use op::Op;
pub use page::{
    DEFAULT_LIMIT, MAX_LIMIT, MAX_PAGE_BYTES, SchemaFormat, SearchRequest, Surface,
    parse_search_args, search_page,
};
pub use query::Query;
pub use rank::{Hit, MatchMode, QueryAnalysis, Ranked, SearchQuery, rank};
pub use source::Source;
pub use terms::check_search_terms;
