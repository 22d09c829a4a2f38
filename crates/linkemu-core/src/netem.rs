//! One direction of an emulated link, deciding each frame's fate the way
//! sch_netem's enqueue does, in the same order:
//!
//! 1. duplicate? (the copy is decided later, on its own, without duplication)
//! 2. lost? (a loss cancels the duplicate first: netem counts copies)
//! 3. corrupt? one random bit of one random byte
//! 4. queue limit (packets, and bytes here) → drop-tail
//! 5. reordered? (`reorder P gap G`: one of G packets may leave at once, ahead of the queue)
//! 6. delay = mu + sigma × q(correlated u); with a rate, the frame also waits
//!    for the one ahead to finish: t = max(now + delay, t_last) + (len + overhead) × 8 / rate
//!
//! The frame then waits in the caller's timing wheel until its release time.
//! Frames with jitter leave in release-time order, so jitter reorders them, as
//! in netem; `keep_order` holds each back until the one ahead has left.

use crate::config::Impairment;
use crate::dist::Distribution;
use crate::loss::Loss;
use crate::random::{Correlated, Threshold};

/// Why a frame was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    /// The loss model chose it.
    Loss,
    /// The direction already held `limit_pkts` frames or `limit_bytes` bytes.
    Limit,
}

/// One copy of a frame to release later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// Release time on the caller's clock, ns.
    pub at_ns: u64,
    /// Flip bit `1 << bit` of byte `byte` before sending (corruption).
    pub corrupt: Option<(usize, u8)>,
    /// Sent at once by the reorder stage, ahead of delayed frames.
    pub reordered: bool,
}

/// The fate of one offered frame: up to two copies, or a drop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub copies: [Option<Release>; 2],
    pub dropped: Option<Drop>,
    /// The duplicate was dropped by the queue limit or the loss model (counted apart).
    pub duplicate_dropped: Option<Drop>,
}

impl Verdict {
    /// The copies to release.
    pub fn releases(&self) -> impl Iterator<Item = &Release> {
        self.copies.iter().flatten()
    }
}

/// The impairment state of one link direction.
#[derive(Clone, Debug)]
pub struct Netem {
    cfg: Impairment,
    rng: fastrand::Rng,
    delay_cor: Correlated,
    dup_cor: Correlated,
    corrupt_cor: Correlated,
    reorder_cor: Correlated,
    loss: Loss,
    duplicate: Threshold,
    corrupt: Threshold,
    reorder: Threshold,
    gap: u32,
    counter: u32,
    /// Frames and bytes held (offered, not yet released), for the limits and the rate.
    held_pkts: u64,
    held_bytes: u64,
    /// Latest release time among held frames (netem's queue tail, for the rate).
    last_ns: Option<u64>,
}

impl Netem {
    /// A direction with this impairment; its random numbers come from `cfg.seed` or `fallback_seed`.
    pub fn new(cfg: &Impairment, fallback_seed: u64) -> Netem {
        let mut rng = fastrand::Rng::with_seed(cfg.seed.unwrap_or(fallback_seed));
        let mut first = || rng.u32(..);
        let (a, b, c, d, e) = (first(), first(), first(), first(), first());
        Netem {
            delay_cor: Correlated::new(cfg.delay_correlation_pct, a),
            dup_cor: Correlated::new(cfg.duplicate_correlation_pct, b),
            corrupt_cor: Correlated::new(cfg.corrupt_correlation_pct, c),
            reorder_cor: Correlated::new(cfg.reorder_correlation_pct, d),
            loss: Loss::new(&cfg.loss, e),
            duplicate: Threshold::from_pct(cfg.duplicate_pct),
            corrupt: Threshold::from_pct(cfg.corrupt_pct),
            reorder: Threshold::from_pct(cfg.reorder_pct),
            gap: cfg.effective_gap(),
            counter: 0,
            held_pkts: 0,
            held_bytes: 0,
            last_ns: None,
            cfg: cfg.clone(),
            rng,
        }
    }

    /// The impairment this direction applies.
    pub fn config(&self) -> &Impairment {
        &self.cfg
    }

    /// Applies `cfg` from the next frame on, as `tc qdisc change` does: frames held keep their release
    /// times, the queue and the random stream go on; a loss model that changes starts afresh.
    pub fn retune(&mut self, cfg: &Impairment) {
        if cfg.loss != self.cfg.loss {
            self.loss = Loss::new(&cfg.loss, self.rng.u32(..));
        }
        self.duplicate = Threshold::from_pct(cfg.duplicate_pct);
        self.corrupt = Threshold::from_pct(cfg.corrupt_pct);
        self.reorder = Threshold::from_pct(cfg.reorder_pct);
        self.gap = cfg.effective_gap();
        self.cfg = cfg.clone();
    }

    /// Frames held now (offered and not yet released).
    pub fn held_pkts(&self) -> u64 {
        self.held_pkts
    }

    /// Decide the fate of a frame of `len` bytes offered at `now_ns`.
    pub fn offer(&mut self, now_ns: u64, len: usize) -> Verdict {
        let mut v = Verdict::default();
        let mut count = 1;
        if self.duplicate.0 != 0 && self.duplicate.hit(self.dup_cor.next(self.rng.u32(..))) {
            count += 1;
        }
        let mut draw = || self.rng.u32(..);
        if self.loss.lose(&mut draw) {
            count -= 1;
        }
        if count == 0 {
            v.dropped = Some(Drop::Loss);
            return v;
        }
        let corrupt = self.corruption(len);
        if self.full(len) {
            v.dropped = Some(Drop::Limit);
            return v;
        }
        if count > 1 {
            // The copy goes through the whole path again, without duplication (as netem re-enqueues it).
            match self.copy(now_ns, len) {
                Ok(r) => v.copies[1] = Some(r),
                Err(d) => v.duplicate_dropped = Some(d),
            }
        }
        v.copies[0] = Some(self.schedule(now_ns, len, corrupt));
        v
    }

    /// The frame left the direction: free its place.
    pub fn released(&mut self, len: usize) {
        self.held_pkts = self.held_pkts.saturating_sub(1);
        self.held_bytes = self.held_bytes.saturating_sub(len as u64);
        if self.held_pkts == 0 {
            self.last_ns = None;
        }
    }

    /// Serialisation time of a frame at the configured rate, ns (0 without a rate).
    pub fn tx_time_ns(&self, len: usize) -> u64 {
        if self.cfg.rate_bps == 0 {
            return 0;
        }
        let bytes = (len as i64 + self.cfg.overhead_bytes).max(0) as u128;
        (bytes * 8 * 1_000_000_000 / self.cfg.rate_bps as u128) as u64
    }

    fn copy(&mut self, now_ns: u64, len: usize) -> Result<Release, Drop> {
        let mut draw = || self.rng.u32(..);
        if self.loss.lose(&mut draw) {
            return Err(Drop::Loss);
        }
        let corrupt = self.corruption(len);
        if self.full(len) {
            return Err(Drop::Limit);
        }
        Ok(self.schedule(now_ns, len, corrupt))
    }

    fn corruption(&mut self, len: usize) -> Option<(usize, u8)> {
        if self.corrupt.0 == 0 || len == 0 || !self.corrupt.hit(self.corrupt_cor.next(self.rng.u32(..))) {
            return None;
        }
        Some((self.rng.usize(..len), self.rng.u8(..8)))
    }

    fn full(&self, len: usize) -> bool {
        self.held_pkts >= self.cfg.limit_pkts
            || (self.cfg.limit_bytes > 0 && self.held_bytes + len as u64 > self.cfg.limit_bytes)
    }

    fn schedule(&mut self, now_ns: u64, len: usize, corrupt: Option<(usize, u8)>) -> Release {
        self.held_pkts += 1;
        self.held_bytes += len as u64;
        let in_gap = self.gap == 0 || self.counter < self.gap - 1;
        if in_gap || !self.reorder.hit(self.reorder_cor.next(self.rng.u32(..))) {
            let at_ns = self.delayed(now_ns, len);
            self.counter += 1;
            self.last_ns = Some(self.last_ns.map_or(at_ns, |l| l.max(at_ns)));
            return Release { at_ns, corrupt, reordered: false };
        }
        self.counter = 0;
        Release { at_ns: now_ns, corrupt, reordered: true }
    }

    fn delayed(&mut self, now_ns: u64, len: usize) -> u64 {
        let sigma = self.cfg.jitter_ns;
        let delay = if sigma == 0 {
            self.cfg.delay_ns
        } else {
            let u = self.delay_cor.next(self.rng.u32(..));
            Distribution::delay_ns(self.cfg.delay_distribution, self.cfg.delay_ns, sigma, u)
        };
        let mut at = now_ns + delay;
        if self.cfg.rate_bps > 0 || self.cfg.keep_order {
            // The frame ahead is the reference: this one cannot start before it has left.
            if let Some(last) = self.last_ns {
                at = at.max(last);
            }
        }
        at + self.tx_time_ns(len)
    }
}

#[cfg(test)]
mod tests;
