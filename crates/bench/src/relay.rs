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
/// A connection whose downstream cannot be reached is closed.
pub async fn serve(listener: TcpListener, to: SocketAddr, shutdown: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.cancelled() => return,
        };
        let Ok((client, _)) = accepted else {
            continue;
        };
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = relay(client, to) => {}
                () = shutdown.cancelled() => {}
            }
        });
    }
}

/// Copy `client` ↔ a new connection to `to` until both directions end.
async fn relay(mut client: TcpStream, to: SocketAddr) -> anyhow::Result<()> {
    let mut downstream = TcpStream::connect(to)
        .await
        .with_context(|| format!("connecting to {to}"))?;
    client.set_nodelay(true)?;
    downstream.set_nodelay(true)?;
    tokio::io::copy_bidirectional(&mut client, &mut downstream).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// An echo server that answers each read with its bytes reversed, then
    /// closes its side when the peer does.
    async fn reversing_server() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local address");
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = match s.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        buf[..n].reverse();
                        if s.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        addr
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

    #[tokio::test]
    async fn bytes_cross_both_ways_on_each_connection_of_its_own() {
        let (relay, _shutdown) = relay_to(reversing_server().await).await;
        let mut streams = [
            TcpStream::connect(relay)
                .await
                .expect("connect to the relay"),
            TcpStream::connect(relay)
                .await
                .expect("connect to the relay"),
        ];
        for (i, text) in [(0, &b"abc"[..]), (1, &b"wxyz"[..]), (0, &b"12"[..])] {
            let stream = &mut streams[i];
            stream.write_all(text).await.expect("write");
            let mut back = vec![0u8; text.len()];
            stream.read_exact(&mut back).await.expect("read the answer");
            let mut expected = text.to_vec();
            expected.reverse();
            assert_eq!(back, expected);
        }
        // Closing the client's side closes the downstream's, which closes
        // the client's read side in turn.
        let [mut a, _b] = streams;
        a.shutdown().await.expect("shut down the write side");
        let mut rest = Vec::new();
        a.read_to_end(&mut rest).await.expect("read to the end");
        assert!(rest.is_empty());
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
        // Reset or orderly close, either ends the read without data.
        let read = client.read_to_end(&mut rest).await;
        assert!(read.is_err() || rest.is_empty(), "{read:?} {rest:?}");
    }

    #[tokio::test]
    async fn shutdown_stops_accepting() {
        let (relay, shutdown) = relay_to(reversing_server().await).await;
        shutdown.cancel();
        // The listener is dropped once the accept loop returns.
        for _ in 0..200 {
            if TcpStream::connect(relay).await.is_err() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        panic!("the relay still accepts after shutdown");
    }
}
