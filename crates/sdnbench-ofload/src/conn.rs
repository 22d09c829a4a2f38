//! One emulated switch: connect, handshake, then raise PACKET_INs and match
//! the controller's answers. Reads and writes are interleaved in one task
//! with read and write readiness, so a controller that is busy writing to us
//! can never deadlock against our writes, and both directions are batched.

use crate::packet::{self, Profile, Template, Ties};
use crate::proto::SwitchState;
use crate::stats::Snapshot;
use crate::topology::Relay;
use crate::tracker::{Outcome, Tracker};
use crate::Shared;
use openflow::fast::{released_buffer, response_view, ResponseKind};
use openflow::{frame_len, msg_type, Message, NO_BUFFER};
use std::io::ErrorKind;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;

/// Reads once; when the read did not fill the buffer the socket is drained,
/// so readiness is cleared right away. Without this every wake-up costs a
/// second read that only returns EAGAIN — at one response per wake-up
/// (latency mode) that is a third of the generator's system calls. The
/// clear happens inside `try_io`, whose readiness snapshot is taken before
/// the read, so data arriving after the read still wakes us.
fn read_draining(stream: &TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    let space = buf.len();
    let mut got = None;
    let r = stream.try_io(tokio::io::Interest::READABLE, || {
        let n = stream.try_read(buf)?;
        got = Some(n);
        if n > 0 && n < space {
            Err(ErrorKind::WouldBlock.into())
        } else {
            Ok(n)
        }
    });
    match (r, got) {
        (_, Some(n)) => Ok(n),
        (r, None) => r,
    }
}

/// Where a switch receives its neighbours' discovery frames.
pub type Inbox = tokio::sync::mpsc::UnboundedReceiver<Relay>;

/// The next relayed frame; never resolves without a topology.
async fn next_relay(inbox: &mut Option<Inbox>) -> Option<Relay> {
    match inbox {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Where a switch learns of phase changes.
pub type PhaseRx = tokio::sync::watch::Receiver<Phase>;

/// The next phase (Stop when the coordinator is gone). It owns the receiver
/// so that one wait stays registered across a switch's select rounds: a new
/// `changed()` per round would take the channel's lock, shared by every
/// switch on every thread, twice per wake-up.
async fn next_phase(mut rx: PhaseRx) -> (PhaseRx, Phase) {
    let next = match rx.changed().await {
        Ok(()) => *rx.borrow_and_update(),
        Err(_) => Phase::Stop,
    };
    (rx, next)
}

/// Run phases, broadcast to every switch.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Debug)]
pub enum Phase {
    Connecting,
    Learn,
    Run,
    Stop,
}

/// What a switch hands back when it ends.
pub struct SwitchEnd {
    pub error: Option<String>,
    pub controller_errors: u64,
    /// The first message from the controller that could not be decoded, explained.
    pub first_decode_error: Option<String>,
}

/// Stop generating once this much is queued unsent: the socket is full.
const OUT_HIGH_WATER: usize = 128 * 1024;

/// Read buffer per switch: large for a few fast switches, small for
/// thousands (16 MB in all), so 5,000 switches do not need gigabytes.
fn read_chunk(switches: usize) -> usize {
    (16 << 20) / switches.max(1)
}

struct Switch {
    idx: u32,
    sw: SwitchState,
    template: Template,
    /// How every PACKET_IN of this switch looks (reason, table, cookie, VLAN).
    profile: Profile,
    tracker: Tracker,
    window: u32,
    refill: u32,
    macs: u32,
    next_host: u32,
    seq: u32,
    learn: bool,
    learned: bool,
    out: Vec<u8>,
    local: Snapshot,
    first_decode_error: Option<String>,
    /// Latency samples (ns) not yet added to the thread's histogram.
    samples: Vec<u64>,
    /// One matched answer in this many has its latency recorded.
    sample_every: u32,
    /// Matched answers until the next recorded one.
    sample_in: u32,
    /// Path setup samples (ns) not yet added to the shared histogram.
    path_samples: Vec<u64>,
    /// The TLS session, when the controller is reached over TLS.
    tls: Option<Box<rustls::ClientConnection>>,
}

pub async fn run_switch(idx: u32, shared: Arc<Shared>, phase_rx: PhaseRx, inbox: Option<Inbox>) -> SwitchEnd {
    let cfg = &shared.cfg;
    let ports = cfg.ports.max(shared.topology.as_ref().map_or(0, |t| t.max_port()));
    let profile = cfg.packet_in_profile();
    let mut s = Switch {
        idx,
        sw: SwitchState::new(cfg.version, cfg.dpid_offset + idx as u64, ports),
        template: Template::new(cfg.version, idx, packet::dst_mac(shared.paths.as_ref().map_or(idx, |p| p.partner[idx as usize])), !cfg.no_buffer, &profile),
        profile,
        tracker: Tracker::new(cfg.effective_window()),
        window: cfg.effective_window(),
        refill: (cfg.effective_window() / 8).max(1),
        macs: cfg.macs,
        next_host: 0,
        seq: 0,
        learn: !cfg.no_learn_dst,
        learned: false,
        out: Vec::new(),
        local: Snapshot::default(),
        first_decode_error: None,
        samples: Vec::new(),
        sample_every: cfg.latency_sample_every(),
        sample_in: 1,
        path_samples: Vec::new(),
        tls: None,
    };
    let error = s.serve(&shared, phase_rx, inbox).await.err();
    if error.is_some() && !s.sw.features_sent {
        shared.failed.fetch_add(1, Relaxed);
    }
    shared.counters.add(&s.local);
    shared.latencies.record(&mut s.samples);
    if let Some(p) = &shared.paths {
        p.latencies.record(&mut s.path_samples);
    }
    SwitchEnd { error, controller_errors: s.sw.controller_errors, first_decode_error: s.first_decode_error }
}

impl Switch {
    async fn serve(&mut self, shared: &Shared, phase_rx: PhaseRx, mut inbox: Option<Inbox>) -> Result<(), String> {
        let cfg = &shared.cfg;
        let addr = format!("{}:{}", cfg.controller, cfg.port);
        let stream = tokio::time::timeout(cfg.connect_timeout, TcpStream::connect(&addr))
            .await
            .map_err(|_| format!("switch {}: connect to {addr} timed out", self.idx))?
            .map_err(|e| format!("switch {}: connect to {addr}: {e}", self.idx))?;
        stream.set_nodelay(true).ok();
        if let Some(c) = &shared.tls {
            let mut t = crate::tls::connect(c, &cfg.controller).map_err(|e| format!("switch {}: {e}", self.idx))?;
            t.set_buffer_limit(None); // bounded by the window, not by rustls
            self.tls = Some(Box::new(t));
        }
        Message::hello(cfg.version, &[cfg.version]).encode_into(&mut self.out);
        let mut inbuf = vec![0u8; read_chunk(cfg.switches).clamp(16 << 10, 256 << 10)];
        let mut have = 0usize;
        let mut written = 0usize;
        let tick_every = (cfg.timeout / 4).clamp(Duration::from_millis(50), Duration::from_millis(500));
        let mut tick = tokio::time::interval(tick_every);
        let timeout_ns = cfg.timeout.as_nanos() as u64;
        let mut phase = *phase_rx.borrow();
        let mut phase_change = Box::pin(next_phase(phase_rx));
        // Listen mode raises nothing: the controller speaks first.
        let raising = shared.flow_mods.is_none();
        loop {
            if raising && phase >= Phase::Learn && self.sw.features_sent && !self.learned {
                self.send_learn();
            }
            if raising && phase == Phase::Run && self.sw.features_sent {
                self.generate(shared);
            }
            tokio::select! {
                r = std::future::poll_fn(|cx| stream.poll_read_ready(cx)) => {
                    r.map_err(|e| format!("switch {}: {e}", self.idx))?;
                    let got = match &mut self.tls {
                        Some(t) => crate::tls::read(t, &stream, &mut inbuf[have..]),
                        None => read_draining(&stream, &mut inbuf[have..]),
                    };
                    match got {
                        Ok(0) => return Err(format!("switch {}: controller closed the connection", self.idx)),
                        Ok(n) => {
                            have += n;
                            let used = self.process(&inbuf[..have], shared, phase)?;
                            inbuf.copy_within(used..have, 0);
                            have -= used;
                            if have == inbuf.len() {
                                inbuf.resize(inbuf.len() * 2, 0); // one message larger than the buffer
                            }
                            // Answer in the same wake-up: replies and new requests
                            // leave in one write instead of one per select round.
                            if raising && phase == Phase::Run && self.sw.features_sent {
                                self.generate(shared);
                            }
                            if self.pending_write(written) {
                                written = self.flush(&stream, written)?;
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) => return Err(format!("switch {}: read: {e}", self.idx)),
                    }
                }
                r = std::future::poll_fn(|cx| stream.poll_write_ready(cx)), if self.pending_write(written) => {
                    r.map_err(|e| format!("switch {}: {e}", self.idx))?;
                    written = self.flush(&stream, written)?;
                }
                (rx, next) = &mut phase_change => {
                    phase = next;
                    if phase == Phase::Stop {
                        return Ok(());
                    }
                    phase_change.set(next_phase(rx));
                }
                Some(relay) = next_relay(&mut inbox) => {
                    // A neighbour's discovery frame arrives on our linked port
                    // (dropped until our own handshake is done, as on a real link).
                    if self.sw.features_sent {
                        packet::packet_in(self.sw.version, relay.port, NO_BUFFER, relay.frame, &self.profile).encode_into(&mut self.out);
                        self.local.relayed += 1;
                    }
                }
                _ = tick.tick() => {
                    let n = self.tracker.expire(crate::now_ns(), timeout_ns);
                    if phase == Phase::Run {
                        self.local.timeouts += n as u64;
                    }
                    shared.counters.add(&self.local);
                    self.local = Snapshot::default();
                    shared.latencies.record(&mut self.samples);
                }
            }
            if !self.local.is_zero() {
                shared.counters.add(&self.local);
                self.local = Snapshot::default();
            }
        }
    }

    /// Bytes wait to be written: ours, or TLS records rustls still holds.
    fn pending_write(&self, written: usize) -> bool {
        written < self.out.len() || self.tls.as_ref().is_some_and(|t| t.wants_write())
    }

    /// Writes what the socket takes; returns the new count of bytes written.
    fn flush(&mut self, stream: &TcpStream, mut written: usize) -> Result<usize, String> {
        if let Some(t) = &mut self.tls {
            // rustls takes all plaintext and queues the records the socket refuses.
            crate::tls::write(t, stream, &self.out[written..]).map_err(|e| format!("switch {}: write: {e}", self.idx))?;
            self.out.clear();
            return Ok(0);
        }
        match stream.try_write(&self.out[written..]) {
            Ok(n) => {
                written += n;
                if written == self.out.len() {
                    self.out.clear();
                    written = 0;
                } else if written > OUT_HIGH_WATER {
                    self.out.drain(..written);
                    written = 0;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(format!("switch {}: write: {e}", self.idx)),
        }
        Ok(written)
    }

    /// Tops the window up with new PACKET_INs, each from the next host. Only
    /// refills once an eighth of the window is free, so writes stay large.
    fn generate(&mut self, shared: &Shared) {
        if self.window - self.tracker.outstanding() < self.refill {
            return;
        }
        let now = crate::now_ns();
        while self.tracker.outstanding() < self.window && self.out.len() < OUT_HIGH_WATER {
            let host = self.next_host;
            self.next_host = if host + 1 >= self.macs { 0 } else { host + 1 };
            self.template.push(&mut self.out, self.idx, self.seq, host);
            self.tracker.sent(self.seq, host, now);
            if let Some(p) = &shared.paths {
                p.sent(self.idx, host, now);
            }
            self.seq = packet::next_seq(self.seq);
            self.local.sent += 1;
        }
    }

    /// One PACKET_IN from the destination host, so learning controllers know
    /// where it is and answer test packets with FLOW_MODs (cbench's -L).
    fn send_learn(&mut self) {
        self.learned = true;
        if !self.learn {
            return;
        }
        let f = packet::learn_frame(self.idx, &self.profile);
        packet::packet_in(self.sw.version, packet::DST_PORT, NO_BUFFER, f, &self.profile).encode_into(&mut self.out);
    }

    /// Handles every complete message in `buf`; returns the bytes consumed.
    fn process(&mut self, buf: &[u8], shared: &Shared, phase: Phase) -> Result<usize, String> {
        let mut at = 0;
        let now = crate::now_ns();
        let measuring = shared.measuring.load(Relaxed);
        // Path mode ties flows by MAC before buffer id, so it takes the full view.
        let fast = phase == Phase::Run && shared.paths.is_none();
        while let Some(len) = frame_len(&buf[at..]).map_err(|e| self.decode_failure(e))? {
            let msg = &buf[at..at + len];
            at += len;
            if let (Some(sink), msg_type::FLOW_MOD) = (&shared.flow_mods, msg[1]) {
                if let Err(e) = crate::listen::report(msg, self.idx, self.sw.dpid, sink) {
                    self.decode_failure(e);
                }
                continue;
            }
            if let Some(seq) = released_buffer(msg).filter(|&id| fast && id <= packet::MAX_SEQ) {
                let outcome = self.tracker.answer_seq(seq, now);
                self.count(outcome, measuring, shared);
                continue;
            }
            if msg[1] == msg_type::FLOW_MOD || msg[1] == msg_type::PACKET_OUT {
                match response_view(msg) {
                    Ok(Some(v)) => self.on_response(v, now, phase, measuring, shared),
                    Ok(None) => {}
                    Err(e) => {
                        self.decode_failure(e);
                    }
                }
                continue;
            }
            match Message::decode(msg) {
                Ok(m) => {
                    if self.on_control(&m, msg)? {
                        shared.ready.fetch_add(1, Relaxed);
                    }
                }
                Err(e) => {
                    self.decode_failure(e);
                }
            }
        }
        Ok(at)
    }

    fn decode_failure(&mut self, e: openflow::DecodeError) -> String {
        self.local.decode_errors += 1;
        let text = format!("switch {}: undecodable message from the controller: {e}", self.idx);
        if self.first_decode_error.is_none() {
            eprintln!("{text}");
            self.first_decode_error = Some(text.clone());
        }
        text
    }

    fn on_response(&mut self, v: openflow::fast::ResponseView, now: u64, phase: Phase, measuring: bool, shared: &Shared) {
        if v.is_lldp() {
            self.local.lldp += 1;
            if let Some(t) = &shared.topology {
                for (peer, port) in t.destinations(self.idx, self.sw.version, v.in_port, v.actions) {
                    let _ = shared.relays[peer as usize].send(Relay { port, frame: v.packet.to_vec() });
                }
            }
            return;
        }
        if let ResponseKind::FlowMod { command } = v.kind {
            if command > 2 {
                return; // DELETE: not an answer to a PACKET_IN
            }
        }
        if phase != Phase::Run {
            return;
        }
        if let (Some(p), ResponseKind::FlowMod { .. }) = (&shared.paths, v.kind) {
            // A flow for another switch's host: a hop of that host's path.
            if let Some((src, host)) = v.eth_src().and_then(|m| packet::owner_of(&m)).filter(|(s, _)| *s != self.idx) {
                if measuring {
                    p.flow_mod(self.idx, src, host, now, &mut self.path_samples);
                }
                return;
            }
        }
        let outcome = match packet::ties_to(&v, self.idx) {
            Ties::Seq(seq) => self.tracker.answer_seq(seq, now),
            Ties::Host(host) => self.tracker.answer_host(host, now),
            Ties::Learning => return, // answer to the learning packet
            Ties::Nothing => Outcome::Unmatched,
        };
        self.count(outcome, measuring, shared);
    }

    /// Counts one answer to a PACKET_IN by what it answered.
    fn count(&mut self, outcome: Outcome, measuring: bool, shared: &Shared) {
        self.local.responses += 1;
        match outcome {
            Outcome::Matched { latency_ns } => {
                self.local.matched += 1;
                self.sample_in -= 1;
                if self.sample_in == 0 {
                    self.sample_in = self.sample_every;
                    if measuring {
                        self.samples.push(latency_ns);
                        if self.samples.len() >= crate::latency::BATCH {
                            shared.latencies.record(&mut self.samples);
                        }
                    }
                }
            }
            Outcome::Duplicate => self.local.duplicates += 1,
            Outcome::Late => self.local.late += 1,
            Outcome::Unmatched => self.local.unmatched += 1,
        }
    }

    /// HELLO negotiation and the switch's replies to everything else;
    /// true when this message completed the handshake (FEATURES_REPLY sent).
    fn on_control(&mut self, m: &Message, raw: &[u8]) -> Result<bool, String> {
        if let openflow::Body::Hello(_) = m.body {
            let ours = self.sw.version;
            let theirs = m.hello_versions();
            let ok = theirs.contains(&ours) || (m.version > ours && theirs == [m.version]);
            if !ok {
                let err = Message::new(ours, m.xid, openflow::Body::Error { err_type: 0, code: 0, data: b"version".to_vec() });
                err.encode_into(&mut self.out);
                return Err(format!("switch {}: controller offers OpenFlow versions {theirs:?}, not 0x{ours:02x}", self.idx));
            }
            return Ok(false);
        }
        let was_ready = self.sw.features_sent;
        for r in self.sw.reply(m, raw) {
            r.encode_into(&mut self.out);
        }
        Ok(!was_ready && self.sw.features_sent)
    }
}
