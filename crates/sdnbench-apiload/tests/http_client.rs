//! The HTTP client against tiny scripted servers: framing, reuse, stale connections, stalls.

use std::net::SocketAddr;
use std::time::Duration;

use sdnbench_apiload::http::{connect, ConnOptions};
use sdnbench_apiload::request::Prepared;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Serves `replies` in order on one connection, each after reading one request head.
async fn one_conn_server(replies: Vec<Vec<Vec<u8>>>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        for parts in replies {
            let mut seen = Vec::new();
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                let mut b = [0u8; 1024];
                let n = sock.read(&mut b).await.unwrap();
                seen.extend_from_slice(&b[..n]);
            }
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(60)).await;
                }
                sock.write_all(part).await.unwrap();
            }
        }
    });
    addr
}

fn get() -> Prepared {
    Prepared {
        name: "GET /".into(),
        bytes: b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec().into(),
        head: false,
    }
}

#[tokio::test]
async fn chunked_and_length_bodies_on_one_kept_alive_connection() {
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nfauc\r\n5\r\net_up\r\n0\r\nX-T: 1\r\n\r\n";
    let plain = b"HTTP/1.1 503 Busy\r\nContent-Length: 2\r\n\r\nno";
    let addr = one_conn_server(vec![vec![chunked.to_vec()], vec![plain.to_vec()]]).await;
    let opts = ConnOptions {
        nodelay: true,
        quickack: false,
        stall_after: Duration::from_millis(30),
    };
    let mut c = connect(addr, opts, 0).await.unwrap();
    let r = c.exchange(&get(), Some(b"faucet_up")).await.unwrap();
    assert_eq!(
        (r.status, r.keep_alive, r.body_matched, r.stalled),
        (200, true, true, false)
    );
    let r = c.exchange(&get(), Some(b"faucet_up")).await.unwrap();
    assert_eq!((r.status, r.body_matched), (503, false));
    assert!(c.reused);
    // The server has nothing more to say and closes: a stale connection, before any response byte.
    let f = c.exchange(&get(), None).await.unwrap_err();
    assert!(
        f.before_response && matches!(f.reason, "closed" | "reset"),
        "{f:?}"
    );
}

#[tokio::test]
async fn a_pause_between_head_and_body_is_a_stall() {
    let parts = vec![
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n".to_vec(),
        b"ok".to_vec(),
    ];
    let addr = one_conn_server(vec![parts]).await;
    let opts = ConnOptions {
        nodelay: true,
        quickack: true,
        stall_after: Duration::from_millis(30),
    };
    let mut c = connect(addr, opts, 7).await.unwrap();
    let r = c.exchange(&get(), None).await.unwrap();
    assert!(r.stalled && r.status == 200);
}
