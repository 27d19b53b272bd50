//! Accepting HTTP connections: HTTP/1 and HTTP/2 on one listener, with a
//! deadline on reading a request's headers, and a graceful end.
//!
//! `axum::serve` offers no header deadline, so a client that sends half a
//! request line and waits kept its connection (and task) forever. Here an
//! HTTP/1 connection whose headers have not all arrived within
//! `server.request_header_timeout_ms` is closed (the same deadline ends a
//! kept-alive connection that stays idle). The body has its own deadline in
//! `framing.rs`.
//!
//! Each connection's task polls it again at once when it wakes itself (see
//! `self_wake.rs`).
//!
//! On `shutdown` the listener closes, every connection is told to finish
//! the request it is serving and close, and the returned future ends when
//! the last one has.
//!
//! Must never: stop a connection in the middle of a response on shutdown
//! (that is `drain.rs`'s decision, after the grace).

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use crate::self_wake::RepollSelfWakes;

/// Serve `app` on `listener` until `shutdown` resolves, then until every
/// connection has closed.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Small JSON answers: with Nagle's algorithm on, a
                    // response written in two segments waits for the
                    // client's delayed ACK.
                    let _ = stream.set_nodelay(true);
                    stream
                }
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = shutdown.as_mut() => break,
        };
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(RepollSelfWakes::new(async move {
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            if let Err(e) = watcher.watch(conn).await {
                tracing::trace!("connection ended with an error: {e}");
            }
        }));
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// A peer that gave up before `accept` is no reason to pause; anything else
/// (out of descriptors, say) is logged and waited out briefly, as
/// `axum::serve` does, so the loop does not spin.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    ) {
        return;
    }
    tracing::error!("accepting a connection failed: {e}");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
