//! One 802.11 collision domain: an access point and its stations contending
//! with DCF for one medium, in explicit time (virtual in tests, the monotonic
//! clock in the emulator).
//!
//! Each contender (the AP, each station) has a FIFO of frames and a backoff
//! counter. Counters run in slots from `origin`, the end of DIFS after the last
//! exchange; a contender with counter c transmits at `origin + c·slot`, and all
//! contenders whose counters expire at the same boundary collide. At every slot
//! boundary a counter that is not zero is decremented, the boundary where
//! someone else starts transmitting included (the EDCA boundary rule with
//! AIFSN 2, which is also the virtual slot of Bianchi's model), then frozen
//! while the medium is busy. A lone transmission succeeds with the frame
//! success probability of its SNR and rate (optionally shadowed per attempt);
//! success costs DATA + SIFS + ACK, a collision or a frame error DATA (the
//! longest of the colliding frames) — Bianchi's Tc; EIFS is not modelled. A
//! failure doubles CW up to CWmax; after `retry_limit` attempts the frame is
//! dropped. Every transmission ends with a fresh backoff in [0, CW], also with
//! an empty queue (post-backoff); a frame arriving at an idle contender whose
//! post-backoff is over, while the medium has been idle for DIFS, goes at the
//! next slot boundary.
//!
//! A frame's fate is decided when its attempt starts: [`Medium::advance`]
//! returns it with `at_ns`, the end of its data frame's airtime, which may lie
//! after the time it was called with. A moving station's path (distance, SNR,
//! rate) is evaluated at that start too, on the medium's motion clock
//! ([`motion`](crate::wifi::motion)), which [`Medium::restart_motion`] resets.

use std::collections::VecDeque;

use crate::wifi::airtime::{Timing, MAC_OVERHEAD};
use crate::wifi::motion::StationPath;
use crate::wifi::phy::{frame_success, Rate};

/// Which way a frame goes: from the station to the AP, or back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Up,
    Down,
}

impl Dir {
    fn index(self) -> usize {
        self as usize
    }
}

/// One station's radio path to the AP, both ways: mean SNR and rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Path {
    pub snr_up_db: f64,
    pub snr_down_db: f64,
    pub rate_up: Rate,
    pub rate_down: Rate,
}

impl Path {
    fn of(&self, dir: Dir) -> (f64, Rate) {
        match dir {
            Dir::Up => (self.snr_up_db, self.rate_up),
            Dir::Down => (self.snr_down_db, self.rate_down),
        }
    }
}

/// Fixed settings of a medium besides its timing and paths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Frames one contender holds (the AP's queue is shared by its stations).
    pub queue_pkts: usize,
    /// Log-normal shadowing drawn per attempt, dB (0: none).
    pub shadowing_sigma_db: f64,
    pub seed: u64,
}

/// What happened to the frames of one station in one direction (cumulative).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Rate of the last attempt, Mbit/s.
    pub rate_mbps: u32,
    pub attempts: u64,
    /// Attempts after a frame's first.
    pub retries: u64,
    pub collisions: u64,
    /// Lone attempts lost to a frame error.
    pub frame_errors: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    /// Frames dropped after the retry limit.
    pub retry_drops: u64,
    /// Frames refused because the sender's queue was full.
    pub queue_drops: u64,
    /// Time the medium was busy with these frames: DATA, plus SIFS + ACK on success.
    pub airtime_ns: u64,
}

impl Counters {
    /// Field-wise self − base (a report window); the rate stays the latest.
    pub fn since(&self, base: &Counters) -> Counters {
        Counters {
            rate_mbps: self.rate_mbps,
            attempts: self.attempts - base.attempts,
            retries: self.retries - base.retries,
            collisions: self.collisions - base.collisions,
            frame_errors: self.frame_errors - base.frame_errors,
            delivered_pkts: self.delivered_pkts - base.delivered_pkts,
            delivered_bytes: self.delivered_bytes - base.delivered_bytes,
            retry_drops: self.retry_drops - base.retry_drops,
            queue_drops: self.queue_drops - base.queue_drops,
            airtime_ns: self.airtime_ns - base.airtime_ns,
        }
    }
}

/// A frame whose fate is decided.
#[derive(Debug)]
pub struct Outcome<T> {
    pub station: usize,
    pub dir: Dir,
    /// End of the last attempt's data frame: when a delivered frame leaves the medium.
    pub at_ns: u64,
    pub retries: u32,
    pub delivered: bool,
    pub item: T,
}

struct Queued<T> {
    station: usize,
    dir: Dir,
    msdu: usize,
    attempts: u32,
    item: T,
}

struct Contender<T> {
    queue: VecDeque<Queued<T>>,
    cw: u32,
    /// Slots from the medium's origin to this contender's next boundary; None: no backoff running.
    backoff: Option<u64>,
}

/// The medium of one access point.
pub struct Medium<T> {
    timing: Timing,
    params: Params,
    rng: fastrand::Rng,
    paths: Vec<StationPath>,
    /// Start of the motion clock: a moving station's waypoint times count from here.
    motion_origin: u64,
    /// Contender 0 is the AP, station s is s + 1.
    contenders: Vec<Contender<T>>,
    /// Start of slot 0: DIFS after the end of the last exchange.
    origin: u64,
    now: u64,
    counters: Vec<[Counters; 2]>,
    outcomes: Vec<Outcome<T>>,
    senders: Vec<usize>,
}

impl<T> Medium<T> {
    /// An idle medium at `now_ns` (idle for DIFS already) with one path per station; the motion clock starts too.
    pub fn new<P: Into<StationPath>>(timing: Timing, paths: Vec<P>, params: Params, now_ns: u64) -> Medium<T> {
        let paths: Vec<StationPath> = paths.into_iter().map(Into::into).collect();
        let contenders = (0..=paths.len())
            .map(|_| Contender { queue: VecDeque::new(), cw: timing.cw_min, backoff: None })
            .collect();
        Medium {
            counters: vec![[Counters::default(); 2]; paths.len()],
            rng: fastrand::Rng::with_seed(params.seed),
            timing, params, paths, contenders, origin: now_ns, now: now_ns, motion_origin: now_ns, outcomes: Vec::new(),
            senders: Vec::new(),
        }
    }

    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    pub fn stations(&self) -> usize {
        self.paths.len()
    }

    /// A station's path at `now_ns` (its position on the motion clock).
    pub fn path(&self, station: usize, now_ns: u64) -> Path {
        self.paths[station].at(now_ns.saturating_sub(self.motion_origin))
    }

    /// Restarts the motion clock at `now_ns`: moving stations start again from their first waypoint.
    /// Attempts due before `now_ns` run first, on the old clock.
    pub fn restart_motion(&mut self, now_ns: u64) {
        let now = now_ns.max(self.now);
        self.run_until(now);
        self.motion_origin = now;
    }

    pub fn counters(&self, station: usize, dir: Dir) -> &Counters {
        &self.counters[station][dir.index()]
    }

    /// Frames waiting at the contender that sends `dir` for `station` (for Down: the AP's whole queue).
    pub fn queue_len(&self, station: usize, dir: Dir) -> usize {
        self.contenders[Self::sender(station, dir)].queue.len()
    }

    fn sender(station: usize, dir: Dir) -> usize {
        match dir {
            Dir::Up => station + 1,
            Dir::Down => 0,
        }
    }

    /// Offers a frame of `msdu` bytes at `now_ns`; a full queue gives it back.
    pub fn enqueue(&mut self, station: usize, dir: Dir, msdu: usize, item: T, now_ns: u64) -> Result<(), T> {
        let now = now_ns.max(self.now);
        self.run_until(now);
        let slot = self.timing.slot_ns;
        let (origin, cw_min) = (self.origin, self.timing.cw_min);
        let c = &mut self.contenders[Self::sender(station, dir)];
        if c.queue.len() >= self.params.queue_pkts {
            self.counters[station][dir.index()].queue_drops += 1;
            return Err(item);
        }
        if c.queue.is_empty() {
            let over = c.backoff.is_none_or(|b| now >= origin + b * slot);
            if over {
                c.backoff = Some(if now >= origin {
                    // Idle for DIFS: go at the next slot boundary.
                    (now - origin).div_ceil(slot)
                } else {
                    self.rng.u64(..=cw_min as u64)
                });
            }
        }
        c.queue.push_back(Queued { station, dir, msdu, attempts: 0, item });
        Ok(())
    }

    /// When the next attempt starts, if any frame waits.
    pub fn next_event_ns(&self) -> Option<u64> {
        self.contenders
            .iter()
            .filter(|c| !c.queue.is_empty())
            .filter_map(|c| c.backoff)
            .min()
            .map(|b| self.origin + b * self.timing.slot_ns)
    }

    /// Runs every attempt that starts by `now_ns`; the frames decided since the last call.
    pub fn advance(&mut self, now_ns: u64) -> std::vec::Drain<'_, Outcome<T>> {
        self.run_until(now_ns.max(self.now));
        self.outcomes.drain(..)
    }

    fn run_until(&mut self, t: u64) {
        while let Some(tx) = self.next_event_ns() {
            if tx > t {
                break;
            }
            self.attempt(tx);
        }
        self.now = self.now.max(t);
    }

    fn attempt(&mut self, tx: u64) {
        let k = (tx - self.origin) / self.timing.slot_ns;
        self.senders.clear();
        for (i, c) in self.contenders.iter_mut().enumerate() {
            match c.backoff {
                Some(b) if b == k && !c.queue.is_empty() => self.senders.push(i),
                Some(b) if b > k => c.backoff = Some(b - k - 1),
                _ => c.backoff = None,
            }
        }
        let collision = self.senders.len() > 1;
        let mut busy_ns = 0;
        for si in 0..self.senders.len() {
            let ci = self.senders[si];
            let end = self.transmit(ci, tx, collision);
            busy_ns = busy_ns.max(end);
        }
        self.now = tx;
        self.origin = tx + busy_ns + self.timing.difs_ns;
    }

    /// One contender's attempt at `tx`; how long it keeps the medium busy.
    fn transmit(&mut self, ci: usize, tx: u64, collision: bool) -> u64 {
        let timing = self.timing;
        let shadow = self.shadowing();
        let c = &mut self.contenders[ci];
        let head = c.queue.front_mut().expect("a sender has a frame");
        head.attempts += 1;
        let (station, dir, attempts) = (head.station, head.dir, head.attempts);
        let (snr, rate) = self.paths[station].at(tx.saturating_sub(self.motion_origin)).of(dir);
        let data_ns = timing.data_ns(head.msdu, rate.mbps);
        let ok = !collision && self.rng.f64() < frame_success(snr + shadow, rate, head.msdu + MAC_OVERHEAD);
        let busy = data_ns + if ok { timing.ack_exchange_ns(rate.mbps) } else { 0 };
        let n = &mut self.counters[station][dir.index()];
        n.rate_mbps = rate.mbps;
        n.attempts += 1;
        n.retries += (attempts > 1) as u64;
        n.collisions += collision as u64;
        n.frame_errors += (!collision && !ok) as u64;
        n.airtime_ns += busy;
        let done = ok || attempts >= timing.retry_limit;
        if done {
            let q = c.queue.pop_front().expect("the head");
            c.cw = timing.cw_min;
            if ok {
                n.delivered_pkts += 1;
                n.delivered_bytes += q.msdu as u64;
            } else {
                n.retry_drops += 1;
            }
            self.outcomes.push(Outcome { station, dir, at_ns: tx + data_ns, retries: attempts - 1, delivered: ok,
                                         item: q.item });
        } else {
            c.cw = timing.next_cw(c.cw);
        }
        c.backoff = Some(self.rng.u64(..=c.cw as u64));
        busy
    }

    /// This attempt's shadowing, dB: a normal draw (Box-Muller), or 0.
    fn shadowing(&mut self) -> f64 {
        let sigma = self.params.shadowing_sigma_db;
        if sigma == 0.0 {
            return 0.0;
        }
        let (u1, u2) = (1.0 - self.rng.f64(), self.rng.f64());
        sigma * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests;
