//! ofload-responder: a minimal OpenFlow controller that completes the
//! handshake and answers every PACKET_IN immediately from a patched template.
//! Against it, a southbound benchmark measures its own ceiling.

pub mod reply;

use clap::Parser;
use openflow::fast::packet_in_view;
use openflow::{frame_len, msg_type, Body, Message, OFP10, OFP13};
use reply::{Reply, ReplyKind};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A minimal, fast OpenFlow 1.0/1.3 controller for benchmark calibration.
///
/// Listens for switches, negotiates OpenFlow 1.0 or 1.3 (the highest both
/// speak), sends FEATURES_REQUEST and SET_CONFIG, answers ECHO, and answers
/// every PACKET_IN with one FLOW_MOD (or PACKET_OUT) carrying its buffer id.
/// Prints one JSON line when listening and a summary at the end of
/// --duration. Exit codes: 0 ok, 2 error.
#[derive(Parser, Debug, Clone)]
#[command(name = "ofload-responder", version)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// TCP port to listen on (0 picks a free one; the JSON line says which).
    #[arg(short = 'p', long, default_value_t = 6653)]
    pub port: u16,
    /// Answer with a FLOW_MOD or a PACKET_OUT.
    #[arg(long, value_enum, default_value_t = ReplyKind::FlowMod)]
    pub reply: ReplyKind,
    /// Worker threads.
    #[arg(short = 'T', long, default_value_t = 1)]
    pub threads: usize,
    /// Stop after this many seconds and print a summary (0 = run until killed).
    #[arg(long, default_value_t = 0)]
    pub duration_s: u64,
}

use sdnbench_jsonl::emit;

/// Runs the responder; returns the exit code.
pub fn run(cfg: Config) -> i32 {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(cfg.threads.max(1)).enable_all().build();
    let Ok(rt) = rt else {
        emit("error", json!({"message": "cannot start runtime"}));
        return 2;
    };
    rt.block_on(async move {
        let listener = match TcpListener::bind((cfg.bind.as_str(), cfg.port)).await {
            Ok(l) => l,
            Err(e) => {
                emit("error", json!({"message": format!("cannot listen on {}:{}: {e}", cfg.bind, cfg.port)}));
                return 2;
            }
        };
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(cfg.port);
        emit("interval", json!({"event": "listening", "address": cfg.bind, "port": port}));
        let answered = Arc::new(AtomicU64::new(0));
        let start = Instant::now();
        let accept = {
            let answered = answered.clone();
            let kind = cfg.reply;
            async move {
                while let Ok((sock, _)) = listener.accept().await {
                    sock.set_nodelay(true).ok();
                    tokio::spawn(serve(sock, kind, answered.clone()));
                }
            }
        };
        if cfg.duration_s == 0 {
            accept.await;
        } else {
            let _ = tokio::time::timeout(Duration::from_secs(cfg.duration_s), accept).await;
        }
        let n = answered.load(Relaxed);
        emit("summary", json!({"tool": "ofload-responder", "packet_ins_answered": n,
                               "answered_per_s": n as f64 / start.elapsed().as_secs_f64()}));
        0
    })
}

/// One switch connection: handshake, then answer until it closes.
async fn serve(mut sock: TcpStream, kind: ReplyKind, answered: Arc<AtomicU64>) {
    let mut out = Message::hello(OFP13, &[OFP10, OFP13]).encode();
    if sock.write_all(&out).await.is_err() {
        return;
    }
    out.clear();
    let mut buf = vec![0u8; 256 * 1024];
    let mut have = 0;
    let mut reply: Option<Reply> = None;
    let mut version = OFP13;
    let mut xid = 1u32;
    loop {
        let n = match sock.read(&mut buf[have..]).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        have += n;
        let mut at = 0;
        let mut count = 0;
        while let Ok(Some(len)) = frame_len(&buf[at..have]) {
            let msg = &buf[at..at + len];
            at += len;
            match msg[1] {
                msg_type::PACKET_IN => {
                    if let (Some(r), Ok(Some(pi))) = (&reply, packet_in_view(msg)) {
                        xid = xid.wrapping_add(1);
                        r.push(&mut out, xid, &pi);
                        count += 1;
                    }
                }
                msg_type::HELLO => {
                    let theirs = Message::decode(msg).map(|m| m.hello_versions()).unwrap_or_default();
                    version = if theirs.contains(&OFP13) { OFP13 } else { OFP10 };
                    reply = Some(Reply::new(version, kind));
                    Message::new(version, 1, Body::FeaturesRequest).encode_into(&mut out);
                    let cfg = openflow::SwitchConfig { flags: 0, miss_send_len: 128 };
                    Message::new(version, 2, Body::SetConfig(cfg)).encode_into(&mut out);
                }
                msg_type::ECHO_REQUEST => {
                    if let Ok(Message { xid, body: Body::EchoRequest(d), .. }) = Message::decode(msg) {
                        Message::new(version, xid, Body::EchoReply(d)).encode_into(&mut out);
                    }
                }
                _ => {}
            }
        }
        if frame_len(&buf[at..have]).is_err() {
            return; // unframeable stream: drop the switch
        }
        buf.copy_within(at..have, 0);
        have -= at;
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        if count > 0 {
            answered.fetch_add(count, Relaxed);
        }
        if !out.is_empty() {
            if sock.write_all(&out).await.is_err() {
                return;
            }
            out.clear();
        }
    }
}
