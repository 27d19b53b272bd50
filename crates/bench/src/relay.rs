//! `connecta-bench tcp-relay`: the floor of any gateway's added cost.
//!
//! A gateway in front of a downstream adds one loopback hop: the client's
//! request reaches the gateway, which makes its own to the downstream. This
//! relay adds that hop and nothing else: each accepted connection gets one
//! connection to the downstream, and bytes are copied both ways as they
//! come (no HTTP, no JSON, no MCP). The synthetic downstream measured
//! through it, next to the downstream alone, gives what the hop itself
//! costs on this machine: kernel copies and the wake-ups of one more
//! process. What a gateway adds beyond that is its own work.
//!
//! It runs on a multi-threaded tokio runtime with one worker per core, as
//! connecta does, and sets `TCP_NODELAY` on both sides, as connecta does.

use std::net::SocketAddr;

use anyhow::Context;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// Relay every connection accepted on `listener` to `to` until `shutdown`.
/// A connection whose downstream cannot be reached is closed. Failures go
/// to stderr (the run's log for the relay): a relay that fails quietly
/// would be measured as a fast one.
pub async fn serve(listener: TcpListener, to: SocketAddr, shutdown: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.cancelled() => return,
        };
        let client = match accepted {
            Ok((client, _)) => client,
            Err(e) => {
                // Out of descriptors, say: wait instead of spinning, which
                // would show up as the relay's CPU.
                eprintln!("tcp-relay: accept failed: {e}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                relayed = relay(client, to) => {
                    if let Err(e) = relayed {
                        eprintln!("tcp-relay: {e:#}");
                    }
                }
                () = shutdown.cancelled() => {}
            }
        });
    }
}

/// How long a failed accept waits before the next.
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(10);

/// Copy `client` ↔ a new connection to `to` until both directions have
/// ended; an end of one direction (a half-close) is passed on as one.
async fn relay(mut client: TcpStream, to: SocketAddr) -> anyhow::Result<()> {
    let mut downstream = TcpStream::connect(to)
        .await
        .with_context(|| format!("connecting to {to}"))?;
    client.set_nodelay(true)?;
    downstream.set_nodelay(true)?;
    tokio::io::copy_bidirectional(&mut client, &mut downstream)
        .await
        .context("copying")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A downstream that reads each connection to its end, then answers
    /// with the bytes reversed and closes; it counts its connections.
    async fn reversing_server() -> (SocketAddr, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local address");
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut all = Vec::new();
                    if s.read_to_end(&mut all).await.is_ok() {
                        all.reverse();
                        let _ = s.write_all(&all).await;
                    }
                });
            }
        });
        (addr, accepted)
    }

    async fn relay_to(to: SocketAddr) -> (SocketAddr, CancellationToken) {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local address");
        let shutdown = CancellationToken::new();
        tokio::spawn(serve(listener, to, shutdown.clone()));
        (addr, shutdown)
    }

    /// Write `text`, end the write side, read the answer to its end.
    async fn exchange(stream: &mut TcpStream, text: &[u8]) -> Vec<u8> {
        stream.write_all(text).await.expect("write");
        stream.shutdown().await.expect("shut down the write side");
        let mut back = Vec::new();
        stream
            .read_to_end(&mut back)
            .await
            .expect("read to the end");
        back
    }

    #[tokio::test]
    async fn a_half_close_is_passed_on_and_the_answer_still_comes_back() {
        let (downstream, accepted) = reversing_server().await;
        let (relay, _shutdown) = relay_to(downstream).await;
        // Two connections at once, each answered on its own: the downstream
        // answers only after the client's end of writing reaches it.
        let mut a = TcpStream::connect(relay)
            .await
            .expect("connect to the relay");
        let mut b = TcpStream::connect(relay)
            .await
            .expect("connect to the relay");
        let (back_a, back_b) = tokio::time::timeout(
            Duration::from_secs(10),
            futures::future::join(exchange(&mut a, b"abc"), exchange(&mut b, b"wxyz")),
        )
        .await
        .expect("both answers");
        assert_eq!(back_a, b"cba");
        assert_eq!(back_b, b"zyxw");
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            2,
            "one downstream connection each"
        );
    }

    #[tokio::test]
    async fn a_downstream_that_is_gone_closes_the_connection() {
        let gone = {
            let l = TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind loopback");
            l.local_addr().expect("local address")
        };
        let (relay, _shutdown) = relay_to(gone).await;
        let mut client = TcpStream::connect(relay)
            .await
            .expect("connect to the relay");
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut rest))
            .await
            .expect("the relay closes the connection");
        // Reset or orderly close, either ends the read without data.
        assert!(read.is_err() || rest.is_empty(), "{read:?} {rest:?}");
    }

    #[tokio::test]
    async fn shutdown_stops_accepting() {
        let (downstream, _) = reversing_server().await;
        let (relay, shutdown) = relay_to(downstream).await;
        shutdown.cancel();
        // The listener is dropped once the accept loop returns.
        for _ in 0..200 {
            if TcpStream::connect(relay).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the relay still accepts after shutdown");
    }
}
