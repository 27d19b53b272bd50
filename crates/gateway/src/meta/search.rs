//! `search_tools`: lexical search over the catalogs, one flat page, built by
//! the same page builder `connecta.search` and the discovery evaluation use.

use std::sync::Arc;
use std::time::Duration;

use connecta_core::error::{ToolError, clamp_text};
use connecta_core::search::{SearchRequest, Source, Surface, parse_search_args, search_page};
use serde_json::{Map, Value};

use super::MetaOutput;
use crate::catalog_cell::Loaded;
use crate::{ConnectorHandle, Gateway};

/// One connector in scope: its loaded catalog, or why it could not load.
pub(crate) struct Scoped<'g> {
    pub handle: &'g ConnectorHandle,
    pub loaded: Result<Arc<Loaded>, ToolError>,
}

impl Gateway {
    /// Load the catalogs a search or describe covers (only the named
    /// connector's when one is given), concurrently, each waited for at
    /// most `wait` when given (a catalog still loading then is reported as
    /// failed, and the others answer).
    pub(crate) async fn scope(
        &self,
        connector: Option<&str>,
        wait: Option<Duration>,
    ) -> Result<Vec<Scoped<'_>>, ToolError> {
        let handles: Vec<&ConnectorHandle> = match connector {
            Some(id) => match self.connector(id) {
                Some(h) => vec![h],
                None => {
                    let known: Vec<&str> = self
                        .connectors()
                        .iter()
                        .map(|h| h.config.id.as_str())
                        .collect();
                    return Err(ToolError::invalid_args(format!(
                        "no connector \"{}\"; connectors: {}",
                        clamp_text(id, 128),
                        known.join(", ")
                    )));
                }
            },
            None => self.connectors().iter().collect(),
        };
        let loads = futures::future::join_all(handles.iter().map(|h| async move {
            match wait {
                Some(wait) => h.catalog.get_within(wait).await,
                None => h.catalog.get().await,
            }
        }))
        .await;
        Ok(handles
            .into_iter()
            .zip(loads)
            .map(|(handle, loaded)| Scoped {
                handle,
                loaded: loaded.map_err(|e| self.scrub(e)),
            })
            .collect())
    }

    /// One search page for checked arguments (either surface's). `wait`
    /// bounds the wait for each catalog, as for [`Gateway::scope`].
    pub(crate) async fn search_request(
        &self,
        req: &SearchRequest,
        wait: Option<Duration>,
    ) -> Result<Value, ToolError> {
        let scoped = self.scope(req.connector.as_deref(), wait).await?;
        let indexes: Vec<_> = scoped
            .iter()
            .map(|s| s.loaded.as_ref().map(|l| l.index()))
            .collect();
        let sources: Vec<Source<'_>> = scoped
            .iter()
            .zip(&indexes)
            .map(|(s, ix)| match ix {
                Ok(index) => Source::with_guide(index, s.handle.config.guide.as_ref()),
                Err(e) => Source::failed(&s.handle.config.id, e),
            })
            .collect();
        search_page(req, &sources)
    }

    pub(crate) async fn search_tools(
        &self,
        args: Map<String, Value>,
    ) -> Result<MetaOutput, ToolError> {
        let req = parse_search_args(&Value::Object(args), Surface::SearchTools)?;
        let page = self.search_request(&req, None).await?;
        Ok(MetaOutput::value(page))
    }
}
