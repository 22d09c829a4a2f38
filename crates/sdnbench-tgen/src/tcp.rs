//! TCP bulk transfer by volume or duration, with connect (SYN -> established)
//! delay, transfer time confirmed by the receiver, and kernel retransmit counts.

use std::io::{ErrorKind, Read, Write};
use std::mem::{size_of, zeroed};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

use serde_json::json;

use crate::out;
use crate::sys;

/// TCP sender settings: exactly one of `volume` and `duration_ns` is set.
#[derive(Clone, Debug)]
pub struct TcpSendConfig {
    pub dst: SocketAddr,
    pub volume: Option<u64>,
    pub duration_ns: Option<u64>,
    pub write_size: usize,
}

/// TCP receiver settings.
#[derive(Clone, Debug)]
pub struct TcpRecvConfig {
    pub bind: SocketAddr,
    pub connections: u32,
    pub duration_ns: Option<u64>,
}

/// Segments the kernel retransmitted on this connection (TCP_INFO), if readable.
fn total_retrans(s: &TcpStream) -> Option<u32> {
    let mut info: libc::tcp_info = unsafe { zeroed() };
    let mut len = size_of::<libc::tcp_info>() as u32;
    let r = unsafe {
        libc::getsockopt(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_INFO, &mut info as *mut _ as *mut libc::c_void, &mut len)
    };
    (r == 0).then_some(info.tcpi_total_retrans)
}

/// Sends the bulk transfer; the receiver answers with the byte count it got, so the
/// transfer time ends when every byte is known delivered, not merely buffered.
pub fn run_send(cfg: &TcpSendConfig) -> Result<i32, String> {
    sys::install_stop_handler();
    let t0 = sys::realtime_ns();
    // A blocking connect() returns when the SYN-ACK arrived: that is the SYN -> established delay.
    let mut s = TcpStream::connect(cfg.dst).map_err(|e| format!("connect {}: {e}", cfg.dst))?;
    let t1 = sys::realtime_ns();
    let buf = vec![0u8; cfg.write_size];
    let mut sent: u64 = 0;
    let deadline = cfg.duration_ns.map(|d| t1 + d);
    loop {
        if sys::stop_requested() || deadline.is_some_and(|d| sys::realtime_ns() >= d) {
            break;
        }
        let want = cfg.volume.map_or(buf.len() as u64, |v| (v - sent).min(buf.len() as u64)) as usize;
        if want == 0 {
            break;
        }
        match s.write(&buf[..want]) {
            Ok(n) => sent += n as u64,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("write: {e}")),
        }
    }
    let t_written = sys::realtime_ns();
    s.shutdown(Shutdown::Write).map_err(|e| format!("shutdown: {e}"))?;
    let mut ack = [0u8; 8];
    let confirmed = match s.read_exact(&mut ack) {
        Ok(()) => Some(u64::from_be_bytes(ack)),
        Err(_) => None,
    };
    let t_done = sys::realtime_ns();
    let transfer_s = (t_done - t1) as f64 / 1e9;
    let complete = confirmed == Some(sent) && cfg.volume.is_none_or(|v| v == sent);
    out::emit("summary", json!({
        "role": "sender", "proto": "tcp", "dst": cfg.dst.to_string(),
        "src": s.local_addr().map(|a| a.to_string()).unwrap_or_default(), "clock": sys::CLOCK_NAME,
        "tcp_connect_ms": (t1 - t0) as f64 / 1e6, "requested_bytes": cfg.volume,
        "tx_bytes": sent, "bytes_confirmed": confirmed, "complete": complete,
        "write_time_s": (t_written - t1) as f64 / 1e9, "transfer_time_s": transfer_s,
        "throughput_bps": if transfer_s > 0.0 { sent as f64 * 8.0 / transfer_s } else { 0.0 },
        "retransmits": total_retrans(&s), "interrupted": sys::stop_requested(),
    }));
    if confirmed.is_none() {
        return Err("receiver closed without confirming the byte count".into());
    }
    Ok(if complete { 0 } else { 1 })
}

fn serve(mut s: TcpStream, src: SocketAddr) -> std::io::Result<serde_json::Value> {
    let mut buf = vec![0u8; 256 * 1024];
    let (mut bytes, mut first, mut last) = (0u64, None, 0u64);
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let now = sys::realtime_ns();
                first.get_or_insert(now);
                last = now;
                bytes += n as u64;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    s.write_all(&bytes.to_be_bytes())?;
    let span = first.map_or(0.0, |f| (last - f) as f64 / 1e9);
    Ok(json!({
        "role": "receiver", "proto": "tcp", "src": src.to_string(), "clock": sys::CLOCK_NAME,
        "bytes": bytes, "rx_duration_s": span,
        "throughput_bps": (span > 0.0).then(|| bytes as f64 * 8.0 / span),
    }))
}

/// Accepts `connections` transfers (each in its own thread) and reports each one.
pub fn run_recv(cfg: &TcpRecvConfig) -> Result<i32, String> {
    sys::install_stop_handler();
    let l = TcpListener::bind(cfg.bind).map_err(|e| format!("bind {}: {e}", cfg.bind))?;
    let local = l.local_addr().map_err(|e| e.to_string())?;
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    eprintln!("sdnbench-tgen: listening on tcp {local}");
    let start = sys::realtime_ns();
    let mut workers = Vec::new();
    while workers.len() < cfg.connections as usize {
        if sys::stop_requested() || cfg.duration_ns.is_some_and(|d| sys::realtime_ns() >= start + d) {
            break;
        }
        match l.accept() {
            Ok((s, src)) => {
                s.set_nonblocking(false).map_err(|e| e.to_string())?;
                workers.push(std::thread::spawn(move || serve(s, src)));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("accept: {e}")),
        }
    }
    let mut code = 0;
    for w in workers {
        match w.join() {
            Ok(Ok(v)) => out::emit("summary", v),
            Ok(Err(e)) => {
                out::error(&format!("connection: {e}"));
                code = 2;
            }
            Err(_) => return Err("receiver thread panicked".into()),
        }
    }
    Ok(code)
}
