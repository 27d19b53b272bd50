//! The synthetic downstream over stdio: one connector, the process's stdin
//! and stdout as the transport. Nothing else may write to stdout here.

use std::sync::Arc;

use rmcp::ServiceExt;

use super::catalog::ConnectorCatalog;
use super::handler::SyntheticConnector;

/// Serve `catalog` on stdin/stdout until the peer closes stdin.
pub async fn serve(catalog: Arc<ConnectorCatalog>) -> anyhow::Result<()> {
    let running = SyntheticConnector::new(catalog)
        .serve(rmcp::transport::io::stdio())
        .await?;
    running.waiting().await?;
    Ok(())
}
