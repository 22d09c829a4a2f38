//! The UDP receiver (and echo reflector): `recvmmsg` batches, kernel arrival
//! stamps, per-flow statistics, interval series and a summary per flow.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use serde_json::{json, Map, Value};
use tgen_core::stats::{FlowStats, Outcome};
use tgen_core::video::{self, Playout};
use tgen_core::wire::{DecodeError, Kind, Probe, FLAG_VIDEO, HEADER_LEN};

use crate::out::{self, flow_fields};
use crate::send::FIN_LEN;
use crate::sys::{self, Batch};

/// Receiver settings, parsed and validated.
#[derive(Clone, Debug)]
pub struct RecvConfig {
    pub bind: SocketAddr,
    pub duration_ns: Option<u64>,
    pub idle_timeout_ns: u64,
    pub expect_flows: Option<u32>,
    pub fin_linger_ns: u64,
    pub interval_ns: u64,
    pub echo: bool,
    pub max_loss_pct: Option<f64>,
    pub clock_synced: bool,
    pub batch: usize,
    pub seq_limit: u64,
    pub sample_cap: usize,
    pub playout_buffer_ns: u64,
}

/// One flow as the receiver sees it, keyed by sender address and flow id.
struct RxFlow {
    stats: FlowStats,
    fin_at: Option<u64>,
    same_kernel: Option<bool>,
    playout: Option<Playout>,
}

#[derive(Default)]
struct Invalid {
    truncated: u64,
    bad_magic: u64,
    bad_version: u64,
    bad_kind: u64,
    unexpected_kind: u64,
}

impl Invalid {
    fn count(&mut self, e: DecodeError) {
        match e {
            DecodeError::Truncated => self.truncated += 1,
            DecodeError::BadMagic => self.bad_magic += 1,
            DecodeError::BadVersion => self.bad_version += 1,
            DecodeError::BadKind => self.bad_kind += 1,
        }
    }

    fn total(&self) -> u64 {
        self.truncated + self.bad_magic + self.bad_version + self.bad_kind + self.unexpected_kind
    }
}

/// The receiving loop's state.
struct Receiver<'a> {
    cfg: &'a RecvConfig,
    flows: HashMap<(SocketAddr, u32), RxFlow>,
    order: Vec<(SocketAddr, u32)>,
    invalid: Invalid,
    boot: [u8; 16],
    overhead: usize,
    replies: Batch,
    last_packet: Option<u64>,
}

impl Receiver<'_> {
    /// Handles datagram i of `batch`, arriving at `arrival` from `src`.
    fn handle(&mut self, batch: &Batch, i: usize, src: SocketAddr, arrival: u64, n_replies: &mut usize) {
        let data = &batch.bufs[i][..batch.lens[i]];
        let p = match Probe::decode(data) {
            Ok(p) => p,
            Err(e) => return self.invalid.count(e),
        };
        let key = (src, p.flow_id);
        let (cfg, order) = (self.cfg, &mut self.order);
        let flow = self.flows.entry(key).or_insert_with(|| {
            order.push(key);
            RxFlow { stats: FlowStats::new(p.flow_id, cfg.seq_limit, cfg.sample_cap), fin_at: None, same_kernel: None, playout: None }
        });
        self.last_packet = Some(arrival);
        match p.kind {
            Kind::Data | Kind::EchoRequest => {
                let o = flow.stats.observe(p.seq, p.send_ns, p.intended_ns, arrival, data.len(), data.len() + self.overhead);
                if let (true, Outcome::New | Outcome::Reordered, Some((frame, _, frags))) =
                    (p.flags & FLAG_VIDEO != 0, o, video::decode_fields(data))
                {
                    // Frame numbers cannot outrun sequence numbers: the same bound keeps memory finite.
                    let limit = self.cfg.seq_limit.min(u32::MAX as u64) as u32;
                    flow.playout.get_or_insert_with(|| Playout::new(limit)).observe(frame, frags, p.intended_ns, arrival);
                }
                if p.kind == Kind::EchoRequest && self.cfg.echo && *n_replies < self.replies.capacity() {
                    let r = *n_replies;
                    let buf = &mut self.replies.bufs[r];
                    buf[..data.len()].copy_from_slice(data);
                    let reply = Probe { kind: Kind::EchoReply, reflect_ns: Some(arrival), ..p };
                    reply.encode(&mut buf[..data.len()]);
                    self.replies.lens[r] = data.len();
                    self.replies.names[r] = batch.names[i];
                    self.replies.name_lens[r] = batch.name_lens[i];
                    *n_replies += 1;
                }
            }
            Kind::Fin => {
                flow.stats.sender_count = Some(p.seq);
                flow.fin_at.get_or_insert(arrival);
                if data.len() >= FIN_LEN {
                    flow.same_kernel = Some(data[HEADER_LEN..FIN_LEN] == self.boot);
                }
            }
            Kind::EchoReply => self.invalid.unexpected_kind += 1,
        }
    }

    fn finished(&self, now: u64) -> bool {
        let fins: Vec<u64> = self.flows.values().filter_map(|f| f.fin_at).collect();
        if fins.is_empty() {
            return false;
        }
        let enough = match self.cfg.expect_flows {
            Some(n) => fins.len() >= n as usize,
            None => fins.len() == self.flows.len(),
        };
        let latest = fins.iter().copied().max().unwrap_or(0);
        enough && now >= latest + self.cfg.fin_linger_ns
    }

    fn owd_valid(&self, f: &RxFlow) -> bool {
        self.cfg.clock_synced || f.same_kernel == Some(true)
    }

    fn emit_intervals(&mut self, t_s: f64) {
        let iv_s = self.cfg.interval_ns as f64 / 1e9;
        for key in &self.order {
            let f = self.flows.get_mut(key).expect("ordered flow");
            if f.fin_at.is_some() {
                continue;
            }
            let jitter = f.stats.jitter_ns;
            let iv = f.stats.take_interval();
            let d = &iv.delay_ns;
            out::emit("interval", json!({
                "role": "receiver", "flow_id": key.1, "src": key.0.to_string(), "t_s": t_s, "interval_s": iv_s,
                "rx_pkts": iv.rx_pkts, "rx_pps": iv.rx_pkts as f64 / iv_s,
                "rx_payload_bps": iv.payload_bytes as f64 * 8.0 / iv_s, "rx_l2_bps": iv.l2_bytes as f64 * 8.0 / iv_s,
                "owd_mean_ms": out::ms(d.mean()), "owd_min_ms": out::ms((d.n > 0).then_some(d.min)),
                "owd_max_ms": out::ms((d.n > 0).then_some(d.max)), "jitter_ms": jitter / 1e6,
                "gap_pkts": iv.lost_gaps,
            }));
        }
    }
}

/// Runs the receiver; returns the exit code (0 ok, 1 a loss threshold was exceeded).
pub fn run_udp(cfg: &RecvConfig) -> Result<i32, String> {
    let sock = UdpSocket::bind(cfg.bind).map_err(|e| format!("bind {}: {e}", cfg.bind))?;
    let fd = sock.as_raw_fd();
    sys::set_buffers(fd, 32 << 20);
    let kernel_ts = sys::enable_rx_timestamps(fd);
    sys::set_recv_timeout(fd, 10_000);
    sys::install_stop_handler();
    let local = sock.local_addr().map_err(|e| e.to_string())?;
    // Supervisors wait for this line on stderr before starting senders.
    eprintln!("sdnbench-tgen: listening on udp {local}");
    let mut batch = Batch::new(cfg.batch, 65_536);
    let mut rx = Receiver {
        cfg, flows: HashMap::new(), order: Vec::new(), invalid: Invalid::default(), boot: sys::boot_id(),
        overhead: sys::udp_l2_overhead(&local), replies: Batch::new(cfg.batch, 65_536), last_packet: None,
    };
    let start = sys::realtime_ns();
    let mut next_tick = start + cfg.interval_ns;
    loop {
        if sys::stop_requested() {
            break;
        }
        let n = match batch.recv(fd) {
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => 0,
            Err(e) => return Err(format!("recvmmsg: {e}")),
        };
        let now = sys::realtime_ns();
        let mut n_replies = 0;
        for i in 0..n {
            let Some(src) = sys::from_sockaddr(&batch.names[i]) else { continue };
            let arrival = if kernel_ts { batch.rx_timestamp(i).unwrap_or(now) } else { now };
            rx.handle(&batch, i, src, arrival, &mut n_replies);
        }
        if n_replies > 0 {
            let _ = rx.replies.send(fd, n_replies);
        }
        if cfg.interval_ns > 0 {
            while now >= next_tick {
                rx.emit_intervals((next_tick - start) as f64 / 1e9);
                next_tick += cfg.interval_ns;
            }
        }
        if cfg.duration_ns.is_some_and(|d| now >= start + d)
            || rx.last_packet.is_some_and(|l| now > l + cfg.idle_timeout_ns)
            || rx.finished(now)
        {
            break;
        }
    }
    let end = sys::realtime_ns();
    let mut code = 0;
    for key in rx.order.clone() {
        let valid = rx.owd_valid(&rx.flows[&key]);
        let f = rx.flows.get_mut(&key).expect("ordered flow");
        let mut d = Map::new();
        d.insert("role".into(), json!("receiver"));
        d.insert("proto".into(), json!("udp"));
        d.insert("flow_id".into(), json!(key.1));
        d.insert("src".into(), json!(key.0.to_string()));
        d.insert("dst".into(), json!(local.to_string()));
        d.insert("clock".into(), json!(sys::CLOCK_NAME));
        d.insert("rx_timestamps".into(), json!(if kernel_ts { "kernel SO_TIMESTAMPNS" } else { "application" }));
        d.insert("same_kernel".into(), json!(f.same_kernel));
        d.insert("owd_valid".into(), json!(valid));
        d.insert("fin_received".into(), json!(f.fin_at.is_some()));
        d.extend(flow_fields(&mut f.stats, "owd", valid));
        if let Some(p) = &f.playout {
            let r = p.report(cfg.playout_buffer_ns);
            d.insert("video".into(), json!({
                "playout_buffer_ms": cfg.playout_buffer_ns as f64 / 1e6, "frames_expected": r.frames_expected,
                "frames_complete": r.frames_complete, "frames_skipped": r.frames_skipped,
                "startup_delay_ms": out::ms(r.startup_delay_ns.filter(|_| valid).map(|v| v as f64)),
                "stalls": r.stalls, "stall_total_ms": r.stall_total_ns as f64 / 1e6,
            }));
        }
        if cfg.max_loss_pct.is_some_and(|m| d["loss_pct"].as_f64().unwrap_or(0.0) > m) {
            code = 1;
        }
        out::emit("summary", Value::Object(d));
    }
    let inv = &rx.invalid;
    out::emit("summary", json!({
        "role": "receiver-total", "dst": local.to_string(), "flows": rx.order.len(),
        "duration_s": (end - start) as f64 / 1e9, "interrupted": sys::stop_requested(),
        "invalid_pkts": inv.total(), "truncated_pkts": inv.truncated, "bad_magic_pkts": inv.bad_magic,
        "bad_version_pkts": inv.bad_version, "bad_kind_pkts": inv.bad_kind,
        "unexpected_kind_pkts": inv.unexpected_kind,
    }));
    Ok(code)
}
