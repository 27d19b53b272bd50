pub mod activity;
pub mod approvals;
pub mod check;
pub mod credential;
pub mod doctor;
pub mod init;
pub mod serve;
pub mod token;
pub mod vault;

/// The store the config names: PostgreSQL at `store.url`, else SQLite in
/// `data_dir`. An error names the backend, never the URL (it may hold a
/// password).
pub(crate) async fn open_store(
    config: &connecta_core::config::Config,
    data_dir: &std::path::Path,
) -> anyhow::Result<std::sync::Arc<dyn connecta_store::Store>> {
    use anyhow::Context;
    let url = config.store.postgres_url.as_ref().map(|u| u.expose());
    connecta_store::open(url, data_dir)
        .await
        .with_context(|| match url {
            Some(_) => "could not open the PostgreSQL store (store.url)".to_owned(),
            None => format!("could not open the store in {}", data_dir.display()),
        })
}
