//! The forwarding loop: one thread for all links. It drains the receive rings,
//! decides each frame's fate (linkemu-core's netem stages), holds frames in one
//! timing wheel, and releases each at its time: an absolute timerfd wakes it a
//! little early (`spin`), then it spins to the exact instant, still reading the
//! rings while it waits. Every release records its lateness. Directions on a
//! wireless medium (crate::air) go through its DCF scheduler instead of netem;
//! the loop also wakes for the medium's next attempt. A moving station's
//! `compat` link directions retune their netem stage to its distance per frame.
//! Marks (SIGUSR1) restart the motion clock: moving stations start again from
//! their first waypoint, so every trial's window sees the same movement.

use linkemu_core::lateness::Lateness;
use linkemu_core::netem::Drop as Dropped;
use linkemu_core::wifi::compat::Moving;
use linkemu_core::{Netem, Wheel};

use crate::air::{Air, AirLink};
use crate::ring::{Frame, Ring};
use crate::spec::Spec;
use crate::sys::{self, Poller, Request, Signals, Timer};

/// Frames taken from one ring before looking at the others and at due releases.
const RX_BATCH: usize = 256;
const TAG_RELEASE: u64 = u64::MAX;
const TAG_INTERVAL: u64 = u64::MAX - 1;
const TAG_SIGNAL: u64 = u64::MAX - 2;

/// Declares the frame counters of one direction once: the struct, window
/// differences and the (name, value) list the reports print.
macro_rules! counters {
    ($($name:ident),* $(,)?) => {
        /// Frame counters of one direction (cumulative; windows subtract a snapshot).
        #[derive(Clone, Copy, Debug, Default)]
        pub struct Counters { $(pub $name: u64),* }

        impl Counters {
            /// Field-wise self − base.
            pub fn since(&self, base: &Counters) -> Counters {
                Counters { $($name: self.$name - base.$name),* }
            }

            /// Every counter with its name (the JSON key).
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name)),*]
            }
        }
    };
}

counters!(rx_pkts, rx_bytes, tx_pkts, tx_bytes, lost_pkts, limit_drop_pkts, duplicated_pkts, corrupted_pkts,
          reordered_pkts, tx_error_pkts, truncated_pkts, ring_drop_pkts);

/// The report windows: periodic intervals, marks (SIGUSR1), the whole run.
pub const PERIOD: usize = 0;
pub const MARK: usize = 1;
pub const TOTAL: usize = 2;

/// One direction of one link.
pub struct Direction {
    pub link: String,
    pub dir: &'static str,
    pub from: String,
    pub to: String,
    out: usize,
    pub netem: Netem,
    pub counters: Counters,
    /// Counters at the start of each window.
    pub base: [Counters; 3],
    pub late: [Lateness; 3],
    /// Arrival time of the last frame: arrivals never go backwards (see receive()).
    last_rx_ns: u64,
    /// The medium this direction shares, if any (then `netem` stays idle).
    pub air: Option<AirLink>,
    /// A moving `compat` station's parameters over time (then `netem` follows them).
    motion: Option<Moving>,
}

impl Direction {
    /// Frames offered and not yet sent or dropped.
    pub fn held_pkts(&self) -> u64 {
        self.air.as_ref().map_or_else(|| self.netem.held_pkts(), |a| a.held)
    }
}

struct Held {
    dir: u32,
    buf: Vec<u8>,
}

/// What the loop reports to (periodic intervals, marks).
pub trait Reporter {
    fn window(&mut self, scope: &str, which: usize, dirs: &[Direction]);
}

pub struct Engine {
    ports: Vec<Ring>,
    /// Direction of frames arriving on each port.
    ingress: Vec<usize>,
    pub dirs: Vec<Direction>,
    wheel: Wheel<Held>,
    air: Air<Held>,
    pool: Vec<Vec<u8>>,
    spin_ns: u64,
    offset_ns: i128,
}

impl Engine {
    /// Opens every link's two interfaces (already up in this namespace).
    pub fn new(spec: &Spec, ring_frames: usize, spin_ns: u64, seed: u64) -> Result<Engine, String> {
        let links = &spec.links;
        let start = sys::mono_ns();
        let (air, mut air_links) = Air::new(spec, seed, start)?;
        let mut motions = spec.compat_motions(start);
        let mut ports = Vec::new();
        let mut ingress = Vec::new();
        let mut dirs = Vec::new();
        for (i, l) in links.iter().enumerate() {
            for (name, idx) in [(&l.a, 0usize), (&l.b, 1)] {
                let ifindex = sys::ifindex(name).ok_or_else(|| format!("link {}: no interface {name}", l.name))?;
                ports.push(Ring::open(ifindex, ring_frames).map_err(|e| format!("link {}: {name}: {e}", l.name))?);
                ingress.push(dirs.len() + idx);
            }
            let base = ports.len() - 2;
            for (dir, cfg, from, to, out) in [("a>b", &l.a_to_b, &l.a, &l.b, base + 1), ("b>a", &l.b_to_a, &l.b, &l.a, base)] {
                // Distinct streams per direction, reproducible from one run seed.
                let fallback = seed ^ ((i as u64) << 1 | (dir == "b>a") as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                dirs.push(Direction {
                    link: l.name.clone(), dir, from: from.clone(), to: to.clone(), out,
                    netem: Netem::new(cfg, fallback), counters: Counters::default(),
                    base: [Counters::default(); 3], late: Default::default(), last_rx_ns: 0,
                    air: air_links[dirs.len()].take(), motion: motions[dirs.len()].take(),
                });
            }
        }
        let now = sys::mono_ns();
        Ok(Engine { ports, ingress, dirs, wheel: Wheel::new(4096, 8_000, now), air, pool: Vec::new(), spin_ns,
                    offset_ns: sys::realtime_offset_ns() })
    }

    /// Frames held now: in the wheel, and in the media's queues.
    pub fn held(&self) -> usize {
        self.dirs.iter().map(|d| d.held_pkts() as usize).sum()
    }

    /// Runs until SIGTERM/SIGINT; periodic reports every `interval_ns` (0: none).
    pub fn run(&mut self, signals: &Signals, interval_ns: u64, out: &mut impl Reporter) -> Result<(), String> {
        let poller = Poller::new().map_err(|e| e.to_string())?;
        let release = Timer::new().map_err(|e| e.to_string())?;
        let interval = Timer::new().map_err(|e| e.to_string())?;
        for (i, p) in self.ports.iter().enumerate() {
            poller.add(p.fd(), i as u64).map_err(|e| e.to_string())?;
        }
        poller.add(release.fd(), TAG_RELEASE).map_err(|e| e.to_string())?;
        poller.add(interval.fd(), TAG_INTERVAL).map_err(|e| e.to_string())?;
        poller.add(signals.fd(), TAG_SIGNAL).map_err(|e| e.to_string())?;
        if interval_ns > 0 {
            interval.set(sys::mono_ns() + interval_ns, interval_ns);
        }
        let mut ready = Vec::with_capacity(64);
        loop {
            self.receive_all();
            self.advance_air();
            self.release_due();
            let next = match (self.wheel.next_deadline(), self.air.next_deadline()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if let Some(t) = next {
                let now = sys::mono_ns();
                if t <= now {
                    continue;
                }
                if t - now <= self.spin_ns {
                    self.spin_until(t);
                    continue;
                }
                release.set(t - self.spin_ns, 0);
            } else {
                release.set(0, 0);
            }
            poller.wait(&mut ready, -1);
            for &tag in &ready {
                match tag {
                    TAG_RELEASE => release.drain(),
                    TAG_INTERVAL => {
                        interval.drain();
                        self.offset_ns = sys::realtime_offset_ns();
                        self.close_window(PERIOD, "period", out);
                    }
                    TAG_SIGNAL => match signals.next() {
                        Some(Request::Stop) => return Ok(()),
                        Some(Request::Mark) => {
                            self.restart_motion();
                            self.close_window(MARK, "mark", out);
                        }
                        None => {}
                    },
                    _ => {}
                }
            }
        }
    }

    /// Report one window, then start it again.
    fn close_window(&mut self, which: usize, scope: &str, out: &mut impl Reporter) {
        self.collect_ring_drops();
        self.snapshot_air();
        out.window(scope, which, &self.dirs);
        for d in &mut self.dirs {
            d.base[which] = d.counters;
            d.late[which].reset();
            if let Some(a) = &mut d.air {
                a.base[which] = a.counters;
            }
        }
    }

    /// Moving stations start again from their first waypoint, now.
    fn restart_motion(&mut self) {
        let now = sys::mono_ns();
        self.air.restart_motion(now);
        for m in self.dirs.iter_mut().filter_map(|d| d.motion.as_mut()) {
            m.origin_ns = now;
        }
    }

    /// Copies each medium's counters into its directions, for a report.
    pub fn snapshot_air(&mut self) {
        for d in &mut self.dirs {
            if let Some(a) = &mut d.air {
                a.counters = self.air.counters(a.at);
            }
        }
    }

    /// Runs the media to now: delivered frames wait in the wheel for the end of their airtime.
    fn advance_air(&mut self) {
        let Engine { dirs, wheel, air, pool, .. } = self;
        air.advance(sys::mono_ns(), |di, o| {
            if o.delivered {
                wheel.insert(o.at_ns, o.item);
            } else {
                let d = &mut dirs[di];
                d.counters.lost_pkts += 1;
                if let Some(a) = &mut d.air {
                    a.held -= 1;
                }
                pool.push(o.item.buf);
            }
        });
    }

    /// Kernel ring drops since the last look, into each port's ingress direction.
    pub fn collect_ring_drops(&mut self) {
        for (p, ring) in self.ports.iter().enumerate() {
            self.dirs[self.ingress[p]].counters.ring_drop_pkts += ring.ring_drops();
        }
    }

    fn spin_until(&mut self, t: u64) {
        loop {
            if self.ports.iter().any(|p| p.ready()) {
                return;
            }
            if sys::mono_ns() >= t {
                return;
            }
            std::hint::spin_loop();
        }
    }

    fn receive_all(&mut self) {
        for p in 0..self.ports.len() {
            if self.ports[p].ready() {
                self.receive(p);
            }
        }
    }

    fn receive(&mut self, p: usize) {
        let offset = self.offset_ns;
        let Engine { ports, ingress, dirs, wheel, air, pool, .. } = self;
        let di = ingress[p];
        let d = &mut dirs[di];
        ports[p].receive(RX_BATCH, |f| {
            d.counters.rx_pkts += 1;
            d.counters.rx_bytes += f.wire_len as u64;
            if f.wire_len > f.data.len() {
                d.counters.truncated_pkts += 1;
                return;
            }
            // The kernel's arrival stamp, not our wake-up, starts the delay. Stamps taken on
            // different CPUs can disagree with the ring's order by a few µs; netem's clock at
            // enqueue never goes back, so neither does ours (equal delays keep frames in order).
            // A stamp is never in the future; a clamp to the batch's start would make frames that
            // arrive while the batch is read leave early.
            let now = sys::mono_ns() as i128;
            let at = ((f.rx_realtime_ns as i128 - offset).clamp(0, now) as u64).max(d.last_rx_ns);
            d.last_rx_ns = at;
            let len = f.data.len() + if f.vlan.is_some() { 4 } else { 0 };
            if let Some(a) = &mut d.air {
                match air.offer(a.at, len, Held { dir: di as u32, buf: copy_frame(pool, &f) }, at) {
                    Ok(()) => a.held += 1,
                    Err(h) => {
                        d.counters.limit_drop_pkts += 1;
                        pool.push(h.buf);
                    }
                }
                return;
            }
            if let Some(m) = &d.motion {
                let now = m.impairment_at(at);
                if now != *d.netem.config() {
                    d.netem.retune(&now);
                }
            }
            let v = d.netem.offer(at, len);
            match v.dropped {
                Some(Dropped::Loss) => d.counters.lost_pkts += 1,
                Some(Dropped::Limit) => d.counters.limit_drop_pkts += 1,
                None => {}
            }
            match v.duplicate_dropped {
                Some(Dropped::Loss) => d.counters.lost_pkts += 1,
                Some(Dropped::Limit) => d.counters.limit_drop_pkts += 1,
                None => {}
            }
            d.counters.duplicated_pkts += v.copies[1].is_some() as u64;
            for r in v.releases() {
                let mut buf = copy_frame(pool, &f);
                if let Some((byte, bit)) = r.corrupt {
                    let i = byte.min(buf.len() - 1);
                    buf[i] ^= 1 << bit;
                    d.counters.corrupted_pkts += 1;
                }
                d.counters.reordered_pkts += r.reordered as u64;
                wheel.insert(r.at_ns, Held { dir: di as u32, buf });
            }
        });
    }

    fn release_due(&mut self) {
        let Engine { ports, dirs, wheel, pool, .. } = self;
        wheel.pop_due(sys::mono_ns(), |at, h| {
            let d = &mut dirs[h.dir as usize];
            let t = sys::mono_ns();
            if ports[d.out].send(&h.buf) {
                d.counters.tx_pkts += 1;
                d.counters.tx_bytes += h.buf.len() as u64;
            } else {
                d.counters.tx_error_pkts += 1;
            }
            let late = t.saturating_sub(at);
            for l in &mut d.late {
                l.record(late);
            }
            match &mut d.air {
                Some(a) => a.held -= 1,
                None => d.netem.released(h.buf.len()),
            }
            pool.push(h.buf);
        });
    }
}

/// A received frame in a buffer from the pool, its VLAN tag put back in place.
fn copy_frame(pool: &mut Vec<Vec<u8>>, f: &Frame) -> Vec<u8> {
    let mut buf = pool.pop().unwrap_or_else(|| Vec::with_capacity(crate::ring::FRAME_SIZE));
    buf.clear();
    match f.vlan {
        Some((tpid, tci)) if f.data.len() >= 12 => {
            buf.extend_from_slice(&f.data[..12]);
            buf.extend_from_slice(&tpid.to_be_bytes());
            buf.extend_from_slice(&tci.to_be_bytes());
            buf.extend_from_slice(&f.data[12..]);
        }
        _ => buf.extend_from_slice(f.data),
    }
    buf
}
