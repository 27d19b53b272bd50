//! What the gateway hands to the page builder and to `describe`: for each
//! connector in scope, either its ready index (and its guide, if configured)
//! or the error that kept its catalog from loading.

use connecta_core::config::Guide;
use connecta_core::error::ToolError;

use super::index::CatalogIndex;

#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    Ready {
        index: &'a CatalogIndex,
        guide: Option<&'a Guide>,
    },
    /// The connector exists but its catalog could not be loaded; searches
    /// report it, `describe` answers its addresses with this error.
    Failed {
        connector: &'a str,
        error: &'a ToolError,
    },
}

impl<'a> Source<'a> {
    pub fn ready(index: &'a CatalogIndex) -> Source<'a> {
        Source::Ready { index, guide: None }
    }

    pub fn with_guide(index: &'a CatalogIndex, guide: Option<&'a Guide>) -> Source<'a> {
        Source::Ready { index, guide }
    }

    pub fn failed(connector: &'a str, error: &'a ToolError) -> Source<'a> {
        Source::Failed { connector, error }
    }

    pub fn connector(&self) -> &'a str {
        match self {
            Source::Ready { index, .. } => index.connector(),
            Source::Failed { connector, .. } => connector,
        }
    }
}
