//! The open-loop UDP sender: every flow follows its schedule of intended send
//! times; due packets go out in `sendmmsg` batches; lateness, missed slots and the
//! achieved rate are reported, never hidden.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use serde_json::{json, Value};
use tgen_core::schedule::{Arrivals, OnOff, Rng, Schedule, SizeDist};
use tgen_core::source::{Slot, Source};
use tgen_core::video::{self, VideoParams, VideoSource};
use tgen_core::stats::{ns_diff, FlowStats, Moments, Outcome};
use tgen_core::wire::{Kind, Probe, FLAG_VIDEO, HEADER_LEN};

use crate::out::{self, flow_fields};
use crate::sys::{self, Batch};

/// Bytes of a FIN: header plus the sender's 16-byte kernel boot id.
pub const FIN_LEN: usize = HEADER_LEN + 16;

/// Everything the UDP sender needs, already parsed and validated.
#[derive(Clone, Debug)]
pub struct UdpSendConfig {
    pub dst: SocketAddr,
    pub bind: SocketAddr,
    pub flows: u32,
    pub flow_id_base: u32,
    pub rate_pps: f64,
    pub arrivals: Arrivals,
    pub onoff: Option<OnOff>,
    pub sizes: SizeDist,
    pub duration_ns: Option<u64>,
    pub count: Option<u64>,
    pub batch: usize,
    pub late_threshold_ns: u64,
    pub grace_ns: u64,
    pub echo: bool,
    pub linger_ns: u64,
    pub min_rate_ratio: Option<f64>,
    pub max_loss_pct: Option<f64>,
    pub seed: u64,
    pub preset: Option<String>,
    /// Use UDP GSO (one sendmsg per batch) when every packet has the same size.
    pub gso: bool,
    /// A video stream instead of probe packets (rate and sizes then come from it).
    pub video: Option<VideoParams>,
}

/// One flow's sending state.
struct TxFlow {
    id: u32,
    sock: UdpSocket,
    src: Source,
    slot: Slot,
    batch: Batch,
    seq: u64,
    tx_pkts: u64,
    tx_bytes: u64,
    send_errors: u64,
    last_error: Option<String>,
    late: u64,
    lateness_ns: Moments,
    last_send_ns: u64,
    done: bool,
    /// Contiguous buffer for UDP GSO sends (empty when GSO is off or sizes vary).
    gso: Vec<u8>,
}

impl TxFlow {
    /// Whether slot `seq` at `offset` still belongs to the run.
    fn in_run(cfg: &UdpSendConfig, seq: u64, offset: u64) -> bool {
        cfg.count.is_none_or(|c| seq < c) && cfg.duration_ns.is_none_or(|d| offset < d)
    }

    /// Stamps and sends every packet due at `now` (up to one batch).
    fn send_due(&mut self, cfg: &UdpSendConfig, start: u64, now: u64) {
        let (mut name, name_len) = sys::to_sockaddr(&cfg.dst);
        let kind = if cfg.echo { Kind::EchoRequest } else { Kind::Data };
        let cap = if self.gso.is_empty() { self.batch.capacity() } else { self.gso.len() / cfg.sizes.max() };
        let mut n = 0;
        let mut bytes = 0;
        while n < cap && !self.done && start.saturating_add(self.slot.offset_ns) <= now {
            if !Self::in_run(cfg, self.seq, self.slot.offset_ns) {
                self.done = true;
                break;
            }
            let intended = start + self.slot.offset_ns;
            let len = self.slot.len;
            let mut p = Probe::data(self.id, self.seq, now, intended);
            p.kind = kind;
            if let Some((frame, frag, frags)) = self.slot.video {
                p.flags = FLAG_VIDEO;
                p.encode(&mut self.batch.bufs[n]);
                video::encode_fields(&mut self.batch.bufs[n], frame, frag, frags);
                self.batch.lens[n] = len;
                self.batch.names[n] = name;
                self.batch.name_lens[n] = name_len;
            } else if self.gso.is_empty() {
                p.encode(&mut self.batch.bufs[n]);
                self.batch.lens[n] = len;
                self.batch.names[n] = name;
                self.batch.name_lens[n] = name_len;
            } else {
                p.encode(&mut self.gso[bytes..bytes + len]);
            }
            bytes += len;
            let late = now - intended;
            self.lateness_ns.add(late as f64);
            if late > cfg.late_threshold_ns {
                self.late += 1;
            }
            self.seq += 1;
            self.slot = self.src.next_slot();
            n += 1;
        }
        if n == 0 {
            return;
        }
        let fd = self.sock.as_raw_fd();
        let (sent, err) = if self.gso.is_empty() {
            self.batch.send(fd, n)
        } else {
            let seg = cfg.sizes.max();
            match sys::send_gso(fd, &mut self.gso[..bytes], seg as u16, &mut name, name_len) {
                Ok(()) => (n, None),
                Err(_) => {
                    // No UDP GSO here: fall back to sendmmsg for this batch and the rest of the run.
                    for k in 0..n {
                        self.batch.bufs[k][..seg].copy_from_slice(&self.gso[k * seg..(k + 1) * seg]);
                        (self.batch.lens[k], self.batch.names[k], self.batch.name_lens[k]) = (seg, name, name_len);
                    }
                    self.gso = Vec::new();
                    self.batch.send(fd, n)
                }
            }
        };
        self.tx_pkts += sent as u64;
        self.tx_bytes += if sent == n { bytes as u64 } else { self.batch.lens[..sent].iter().sum::<usize>() as u64 };
        if let Some(e) = err {
            // The unsent rest keeps its sequence numbers: the receiver counts them lost.
            self.send_errors += (n - sent) as u64;
            self.last_error = Some(e.to_string());
        }
        self.last_send_ns = sys::realtime_ns();
    }

    /// Slots of the run that were never sent (the run hit its grace deadline).
    fn missed_slots(&mut self, cfg: &UdpSendConfig) -> u64 {
        let mut missed = 0;
        while !self.done && Self::in_run(cfg, self.seq + missed, self.slot.offset_ns) {
            missed += 1;
            self.slot = self.src.next_slot();
            if cfg.duration_ns.is_none() && cfg.count.is_none() {
                break;
            }
        }
        missed
    }

    /// Tells the receiver how many sequence numbers this flow used, with this kernel's boot id.
    fn send_fin(&mut self, dst: &SocketAddr, boot: &[u8; 16]) {
        let mut buf = [0u8; FIN_LEN];
        let mut p = Probe::data(self.id, self.seq, sys::realtime_ns(), 0);
        p.kind = Kind::Fin;
        p.encode(&mut buf);
        buf[HEADER_LEN..].copy_from_slice(boot);
        let _ = self.sock.send_to(&buf, dst);
    }
}

/// Collects echo replies for one flow on a clone of its socket (round-trip mode).
struct EchoCollector {
    handle: JoinHandle<(FlowStats, Moments, Moments)>,
}

fn spawn_echo(sock: UdpSocket, flow: u32, stop: Arc<AtomicBool>, l2_overhead: usize) -> EchoCollector {
    let handle = std::thread::spawn(move || {
        let fd = sock.as_raw_fd();
        sys::set_recv_timeout(fd, 20_000);
        let ts = sys::enable_rx_timestamps(fd);
        let mut batch = Batch::new(64, 2048);
        let mut st = FlowStats::new(flow, 1 << 32, 1 << 22);
        let (mut fwd, mut rev) = (Moments::default(), Moments::default());
        while !stop.load(Ordering::Relaxed) {
            let Ok(n) = batch.recv(fd) else { continue };
            let now = sys::realtime_ns();
            for i in 0..n {
                let Ok(p) = Probe::decode(&batch.bufs[i][..batch.lens[i]]) else { continue };
                if p.kind != Kind::EchoReply || p.flow_id != flow {
                    continue;
                }
                let arrival = if ts { batch.rx_timestamp(i).unwrap_or(now) } else { now };
                let o = st.observe(p.seq, p.send_ns, p.intended_ns, arrival, batch.lens[i], batch.lens[i] + l2_overhead);
                if let (Some(r), Outcome::New | Outcome::Reordered) = (p.reflect_ns, o) {
                    fwd.add(ns_diff(r, p.send_ns) as f64);
                    rev.add(ns_diff(arrival, r) as f64);
                }
            }
        }
        (st, fwd, rev)
    });
    EchoCollector { handle }
}

/// Runs the UDP sender; returns the exit code (0 ok, 1 a threshold was not met).
pub fn run_udp(cfg: &UdpSendConfig) -> Result<i32, String> {
    if cfg.sizes.min() < HEADER_LEN {
        return Err(format!("payload must be at least {HEADER_LEN} bytes (the probe header)"));
    }
    sys::tight_timer_slack();
    sys::install_stop_handler();
    let stop = Arc::new(AtomicBool::new(false));
    let overhead = sys::udp_l2_overhead(&cfg.dst);
    let mut flows = Vec::new();
    let mut echoes = Vec::new();
    for k in 0..cfg.flows {
        let sock = UdpSocket::bind(cfg.bind).map_err(|e| format!("bind {}: {e}", cfg.bind))?;
        sys::set_buffers(sock.as_raw_fd(), 4 << 20);
        let id = cfg.flow_id_base + k;
        if cfg.echo {
            let clone = sock.try_clone().map_err(|e| e.to_string())?;
            echoes.push(spawn_echo(clone, id, stop.clone(), overhead));
        }
        let mut src = match &cfg.video {
            Some(v) => Source::Video(VideoSource::new(v.clone(), cfg.seed + k as u64)),
            None => Source::Probes {
                sched: Schedule::new(cfg.arrivals.clone(), cfg.rate_pps, cfg.onoff.clone(), cfg.seed + k as u64),
                sizes: cfg.sizes.clone(),
                rng: Rng::new(cfg.seed ^ (0xabcd + k as u64)),
            },
        };
        let slot = src.next_slot();
        let mut batch = Batch::new(cfg.batch, cfg.sizes.max().max(FIN_LEN));
        batch.bufs.iter_mut().for_each(|b| b.fill(0));
        flows.push(TxFlow {
            id, sock, src, slot, batch,
            seq: 0, tx_pkts: 0, tx_bytes: 0, send_errors: 0, last_error: None, late: 0,
            lateness_ns: Moments::default(), last_send_ns: 0, done: false, gso: gso_buffer(cfg),
        });
    }
    // A short lead lets every flow start on the same instant.
    let start = sys::realtime_ns() + 2_000_000;
    let hard_end = cfg.duration_ns.map(|d| start + d + cfg.grace_ns);
    let mut interrupted = false;
    loop {
        if sys::stop_requested() {
            interrupted = true;
            break;
        }
        let now = sys::realtime_ns();
        if hard_end.is_some_and(|h| now > h) {
            break;
        }
        let mut next_due = u64::MAX;
        for f in flows.iter_mut().filter(|f| !f.done) {
            f.send_due(cfg, start, now);
            if !f.done {
                next_due = next_due.min(start.saturating_add(f.slot.offset_ns));
            }
        }
        if flows.iter().all(|f| f.done) {
            break;
        }
        // Sleep when the next slot is far; spin when it is close (sleeping costs ~µs).
        let now = sys::realtime_ns();
        if next_due > now + 30_000 {
            sys::sleep_until(next_due);
        } else {
            while sys::realtime_ns() < next_due {
                std::hint::spin_loop();
            }
        }
    }
    let end = sys::realtime_ns();
    let boot = sys::boot_id();
    // The FIN carries the sender's count and boot id (without it one-way delay is withheld): send it
    // five times, spread over ~75 ms, so that a queue overflowing at the end of a saturated flow
    // rarely swallows every copy. The receiver's linger (200 ms by default) waits for them.
    for gap_ms in [1u64, 4, 20, 50, 0] {
        for f in flows.iter_mut() {
            f.send_fin(&cfg.dst, &boot);
        }
        std::thread::sleep(std::time::Duration::from_millis(gap_ms));
    }
    let mut code = 0;
    let mut echo_results = Vec::new();
    if cfg.echo {
        let linger_end = sys::realtime_ns() + cfg.linger_ns;
        while sys::realtime_ns() < linger_end && !sys::stop_requested() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        stop.store(true, Ordering::Relaxed);
        for e in echoes {
            echo_results.push(Some(e.handle.join().map_err(|_| "echo collector panicked".to_string())?));
        }
    }
    for (k, f) in flows.iter_mut().enumerate() {
        let missed = f.missed_slots(cfg);
        let scheduled = f.seq + missed;
        let span_ns = match cfg.duration_ns {
            Some(d) => d,
            None => f.slot.offset_ns.clamp(1, u64::MAX / 2),
        };
        let elapsed_ns = span_ns.max(f.last_send_ns.saturating_sub(start));
        let scheduled_pps = scheduled as f64 * 1e9 / span_ns as f64;
        let tx_rate = f.tx_pkts as f64 * 1e9 / elapsed_ns as f64;
        let ratio = if scheduled_pps > 0.0 { tx_rate / scheduled_pps } else { 1.0 };
        let rate_ok = cfg.min_rate_ratio.is_none_or(|m| ratio >= m);
        let mut d = json!({
            "role": "sender", "proto": "udp", "flow_id": f.id,
            "src": f.sock.local_addr().map(|a| a.to_string()).unwrap_or_default(),
            "dst": cfg.dst.to_string(), "clock": sys::CLOCK_NAME,
            "meter": if cfg.echo { "rtt" } else { "owd" },
            "pattern": pattern_name(cfg), "preset": cfg.preset,
            "payload_mean_bytes": cfg.sizes.mean(),
            // A video stream has no nominal packet rate: its schedule is the request.
            "requested_pps": if cfg.video.is_some() { scheduled_pps }
                             else { cfg.rate_pps * cfg.onoff.as_ref().map_or(1.0, |o| o.on_ns / (o.on_ns + o.off_ns)) },
            "scheduled_pkts": scheduled, "scheduled_pps": scheduled_pps,
            "tx_pkts": f.tx_pkts, "tx_payload_bytes": f.tx_bytes,
            "tx_l2_bytes": f.tx_bytes + f.tx_pkts * overhead as u64,
            "send_errors": f.send_errors, "last_send_error": f.last_error,
            "missed_slots": missed, "late_pkts": f.late,
            "late_threshold_ms": cfg.late_threshold_ns as f64 / 1e6,
            "lateness_mean_ms": out::ms(f.lateness_ns.mean()),
            "lateness_max_ms": out::ms((f.lateness_ns.n > 0).then_some(f.lateness_ns.max)),
            "duration_s": elapsed_ns as f64 / 1e9, "tx_rate_pps": tx_rate,
            "tx_payload_bps": f.tx_bytes as f64 * 8e9 / elapsed_ns as f64,
            "tx_l2_bps": (f.tx_bytes + f.tx_pkts * overhead as u64) as f64 * 8e9 / elapsed_ns as f64,
            "achieved_ratio": ratio, "min_rate_ratio": cfg.min_rate_ratio, "rate_ok": rate_ok,
            "interrupted": interrupted, "wall_s": (end - start.min(end)) as f64 / 1e9,
            "gso": !f.gso.is_empty(),
        });
        if !rate_ok {
            code = 1;
        }
        if let Some(Some((st, fwd, rev))) = echo_results.get_mut(k) {
            st.sender_count = Some(f.seq);
            let m = d.as_object_mut().expect("object");
            let fields = flow_fields(st, "rtt", true);
            if cfg.max_loss_pct.is_some_and(|max| fields["loss_pct"].as_f64().unwrap_or(0.0) > max) {
                code = 1;
            }
            m.extend(fields);
            m.insert("owd_forward_mean_ms".into(), out::ms(fwd.mean()));
            m.insert("owd_reverse_mean_ms".into(), out::ms(rev.mean()));
        }
        out::emit("summary", d);
    }
    Ok(code)
}

/// A GSO buffer of up to 64 equal segments within one 64 KiB datagram, or empty.
fn gso_buffer(cfg: &UdpSendConfig) -> Vec<u8> {
    match cfg.sizes {
        SizeDist::Constant(len) if cfg.gso && cfg.video.is_none() => {
            let segs = cfg.batch.min(64).min(65_000 / len);
            if segs >= 2 { vec![0u8; segs * len] } else { Vec::new() }
        }
        _ => Vec::new(),
    }
}

fn pattern_name(cfg: &UdpSendConfig) -> Value {
    if let Some(v) = &cfg.video {
        return json!({"arrivals": "video", "bitrate_bps": v.bitrate_bps, "fps": v.fps, "gop": v.gop,
                      "i_ratio": v.i_ratio, "max_payload_bytes": v.max_payload, "frame_noise": v.noise});
    }
    let base = match cfg.arrivals {
        Arrivals::Constant => "constant",
        Arrivals::Poisson => "poisson",
    };
    match &cfg.onoff {
        Some(o) => json!({"arrivals": base, "on_ms": o.on_ns / 1e6, "off_ms": o.off_ns / 1e6, "exponential": o.exponential}),
        None => json!({"arrivals": base}),
    }
}
