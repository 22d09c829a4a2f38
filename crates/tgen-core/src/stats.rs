//! Per-flow receiver statistics: delay moments and percentiles, RFC 3550 jitter,
//! loss, reordering and duplicates (counted separately), throughput and intervals.

use crate::schedule::Rng;

/// Running count/mean/variance/min/max (Welford), so nothing overflows at 10^6 pps.
#[derive(Clone, Debug, Default)]
pub struct Moments {
    pub n: u64,
    mean: f64,
    m2: f64,
    pub min: f64,
    pub max: f64,
}

impl Moments {
    pub fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.min = x;
            self.max = x;
        }
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    /// Sample standard deviation (n - 1), 0 for a single value.
    pub fn sd(&self) -> Option<f64> {
        match self.n {
            0 => None,
            1 => Some(0.0),
            n => Some((self.m2 / (n - 1) as f64).sqrt()),
        }
    }
}

/// Sequence numbers seen so far, as a bitmap that grows with the highest sequence.
///
/// Sequences at or above `limit` are refused (counted out of range) so a corrupt or
/// hostile packet cannot make the receiver allocate gigabytes.
#[derive(Clone, Debug)]
pub struct SeqSet {
    bits: Vec<u64>,
    limit: u64,
}

impl SeqSet {
    pub fn new(limit: u64) -> SeqSet {
        SeqSet { bits: Vec::new(), limit }
    }

    /// Marks `seq`; returns Some(true) if new, Some(false) if seen before, None if out of range.
    pub fn insert(&mut self, seq: u64) -> Option<bool> {
        if seq >= self.limit {
            return None;
        }
        let (w, b) = ((seq / 64) as usize, seq % 64);
        if w >= self.bits.len() {
            self.bits.resize((w + 1).max(self.bits.len() * 2), 0);
        }
        let new = self.bits[w] & (1 << b) == 0;
        self.bits[w] |= 1 << b;
        Some(new)
    }

    /// Runs of consecutive sequence numbers below `end` never seen: loss bursts (RFC 3357),
    /// so loss / bursts is the mean burst length.
    pub fn missing_runs(&self, end: u64) -> u64 {
        let end = end.min(self.limit);
        let (mut runs, mut in_gap) = (0, false);
        let mut seq = 0;
        while seq < end {
            let word = self.bits.get((seq / 64) as usize).copied().unwrap_or(0);
            if seq % 64 == 0 && word == u64::MAX && end - seq >= 64 {
                in_gap = false;   // 64 received in a row
                seq += 64;
                continue;
            }
            let seen = word & (1 << (seq % 64)) != 0;
            runs += (!seen && !in_gap) as u64;
            in_gap = !seen;
            seq += 1;
        }
        runs
    }
}

/// `a - b` in nanoseconds, exact for any realistic times and clamped (never
/// overflowing) for corrupt ones; epoch nanoseconds exceed an f64's 53-bit mantissa,
/// so differences are always taken in integers first.
pub fn ns_diff(a: u64, b: u64) -> i64 {
    (a as i128 - b as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// What the receiver made of one arriving probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    New,
    Reordered,
    Duplicate,
    OutOfRange,
}

/// Counters for one reporting interval (by arrival time).
#[derive(Clone, Debug, Default)]
pub struct Interval {
    pub rx_pkts: u64,
    pub payload_bytes: u64,
    pub l2_bytes: u64,
    pub delay_ns: Moments,
    pub lost_gaps: u64,
}

/// Everything a receiver learns about one flow.
#[derive(Clone, Debug)]
pub struct FlowStats {
    pub flow_id: u32,
    seen: SeqSet,
    pub rx_pkts: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub out_of_range: u64,
    pub max_seq: Option<u64>,
    /// Packets the sender says it sent (from its FIN), when it arrived.
    pub sender_count: Option<u64>,
    pub delay_ns: Moments,
    /// Delay from the intended send time: includes sender lateness.
    pub delay_from_intended_ns: Moments,
    samples: Vec<i64>,
    sample_cap: usize,
    sampled_total: u64,
    rng: Rng,
    /// RFC 3550 interarrival jitter estimate, in ns.
    pub jitter_ns: f64,
    prev: Option<(u64, u64)>,
    prev_delay: Option<i64>,
    pub ipdv_abs_ns: Moments,
    pub first_arrival_ns: Option<u64>,
    pub last_arrival_ns: u64,
    /// Longest silence between consecutive arrivals, and the arrival that ended it:
    /// an outage (a controller restart, a link down) and when forwarding came back.
    pub longest_gap_ns: u64,
    pub longest_gap_end_ns: Option<u64>,
    pub payload_bytes: u64,
    pub l2_bytes: u64,
    pub interval: Interval,
}

/// Delay percentiles in ns, and whether they come from a uniform sample of the delays.
#[derive(Clone, Debug, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub sampled: bool,
}

impl FlowStats {
    /// `sample_cap` bounds the delays kept for percentiles (reservoir sampling beyond it).
    pub fn new(flow_id: u32, seq_limit: u64, sample_cap: usize) -> FlowStats {
        FlowStats {
            flow_id,
            seen: SeqSet::new(seq_limit),
            rx_pkts: 0,
            duplicates: 0,
            reordered: 0,
            out_of_range: 0,
            max_seq: None,
            sender_count: None,
            delay_ns: Moments::default(),
            delay_from_intended_ns: Moments::default(),
            samples: Vec::new(),
            sample_cap,
            sampled_total: 0,
            rng: Rng::new(flow_id as u64 ^ 0x5eed),
            jitter_ns: 0.0,
            prev: None,
            prev_delay: None,
            ipdv_abs_ns: Moments::default(),
            first_arrival_ns: None,
            last_arrival_ns: 0,
            longest_gap_ns: 0,
            longest_gap_end_ns: None,
            payload_bytes: 0,
            l2_bytes: 0,
            interval: Interval::default(),
        }
    }

    /// Records one arriving data probe. Duplicates and out-of-range sequences are
    /// counted and otherwise ignored, so they never inflate delay or throughput.
    pub fn observe(&mut self, seq: u64, send_ns: u64, intended_ns: u64, arrival_ns: u64,
                   payload: usize, l2: usize) -> Outcome {
        match self.seen.insert(seq) {
            None => {
                self.out_of_range += 1;
                return Outcome::OutOfRange;
            }
            Some(false) => {
                self.duplicates += 1;
                return Outcome::Duplicate;
            }
            Some(true) => {}
        }
        let mut outcome = Outcome::New;
        match self.max_seq {
            Some(m) if seq < m => {
                self.reordered += 1;
                outcome = Outcome::Reordered;
            }
            Some(m) => {
                self.interval.lost_gaps += seq - m - 1;
                self.max_seq = Some(seq);
            }
            None => {
                self.interval.lost_gaps += seq;
                self.max_seq = Some(seq);
            }
        }
        self.rx_pkts += 1;
        let delay = ns_diff(arrival_ns, send_ns);
        self.delay_ns.add(delay as f64);
        self.delay_from_intended_ns.add(ns_diff(arrival_ns, intended_ns) as f64);
        self.keep_sample(delay);
        // RFC 3550 section 6.4.1: D(i,j) = (Rj - Ri) - (Sj - Si); J += (|D| - J) / 16,
        // taken between consecutive arrivals.
        if let Some((pr, ps)) = self.prev {
            let d = ((arrival_ns as i128 - pr as i128) - (send_ns as i128 - ps as i128)) as f64;
            self.jitter_ns += (d.abs() - self.jitter_ns) / 16.0;
        }
        if let Some(pd) = self.prev_delay {
            self.ipdv_abs_ns.add((delay as i128 - pd as i128).abs() as f64);
        }
        self.prev = Some((arrival_ns, send_ns));
        self.prev_delay = Some(delay);
        if self.first_arrival_ns.is_some() && arrival_ns > self.last_arrival_ns
            && arrival_ns - self.last_arrival_ns > self.longest_gap_ns
        {
            self.longest_gap_ns = arrival_ns - self.last_arrival_ns;
            self.longest_gap_end_ns = Some(arrival_ns);
        }
        self.first_arrival_ns.get_or_insert(arrival_ns);
        self.last_arrival_ns = self.last_arrival_ns.max(arrival_ns);
        self.payload_bytes += payload as u64;
        self.l2_bytes += l2 as u64;
        let iv = &mut self.interval;
        iv.rx_pkts += 1;
        iv.payload_bytes += payload as u64;
        iv.l2_bytes += l2 as u64;
        iv.delay_ns.add(delay as f64);
        outcome
    }

    fn keep_sample(&mut self, delay: i64) {
        self.sampled_total += 1;
        if self.samples.len() < self.sample_cap {
            self.samples.push(delay);
        } else {
            let j = self.rng.next_u64() % self.sampled_total;
            if (j as usize) < self.sample_cap {
                self.samples[j as usize] = delay;
            }
        }
    }

    /// Packets expected: the sender's own count when known, else highest sequence + 1.
    pub fn expected(&self) -> u64 {
        let by_seq = self.max_seq.map_or(0, |m| m + 1);
        self.sender_count.map_or(by_seq, |c| c.max(by_seq))
    }

    /// Packets lost (expected minus distinct packets received).
    pub fn lost(&self) -> u64 {
        self.expected().saturating_sub(self.rx_pkts)
    }

    /// Runs of consecutive lost sequence numbers (a late, reordered packet fills its gap).
    pub fn loss_bursts(&self) -> u64 {
        self.seen.missing_runs(self.expected())
    }

    /// Nearest-rank percentiles of the one-way delay, None without samples.
    pub fn percentiles(&mut self) -> Option<Percentiles> {
        if self.samples.is_empty() {
            return None;
        }
        self.samples.sort_unstable();
        let n = self.samples.len();
        let rank = |p: f64| self.samples[((p / 100.0 * n as f64).ceil() as usize).clamp(1, n) - 1] as f64;
        Some(Percentiles { p50: rank(50.0), p90: rank(90.0), p99: rank(99.0),
                           sampled: self.sampled_total as usize > self.samples.len() })
    }

    /// Seconds between first and last arrival.
    pub fn active_s(&self) -> f64 {
        self.first_arrival_ns.map_or(0.0, |f| (self.last_arrival_ns - f) as f64 / 1e9)
    }

    /// Starts a new interval and returns the finished one.
    pub fn take_interval(&mut self) -> Interval {
        std::mem::take(&mut self.interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow() -> FlowStats {
        FlowStats::new(1, 1 << 24, 1000)
    }

    #[test]
    fn counts_loss_reorder_duplicates_separately() {
        let mut f = flow();
        // Sent 0..10; 4 and 7 lost; 6 arrives after 8; 2 arrives twice.
        for s in [0u64, 1, 2, 2, 3, 5, 8, 6, 9] {
            f.observe(s, 0, 0, 10, 64, 106);
        }
        f.sender_count = Some(10);
        assert_eq!((f.rx_pkts, f.duplicates, f.reordered, f.lost()), (8, 1, 1, 2));
        assert_eq!(f.loss_bursts(), 2);
    }

    #[test]
    fn loss_bursts_are_runs_of_missing_sequences() {
        let mut set = SeqSet::new(1 << 20);
        // 0..200 received except 3..6 (one burst), 70 (one), 130..140 and the tail 190..200.
        for s in (0..190u64).filter(|s| !(3..6).contains(s) && *s != 70 && !(130..140).contains(s)) {
            set.insert(s);
        }
        assert_eq!(set.missing_runs(200), 4);
        assert_eq!(set.missing_runs(190), 3);
        assert_eq!(set.missing_runs(3), 0);
        assert_eq!(SeqSet::new(10).missing_runs(100), 1);
    }

    #[test]
    fn longest_gap_is_the_outage_and_ends_at_the_first_packet_after_it() {
        let mut f = flow();
        // Every 1 ms, then nothing from 5 ms to 305 ms, then every 1 ms again; a late duplicate is ignored.
        let arrivals: Vec<u64> = (0..5).map(|i| i * 1_000_000).chain((0..5).map(|i| 305_000_000 + i * 1_000_000)).collect();
        for (seq, t) in arrivals.iter().enumerate() {
            f.observe(seq as u64, 0, 0, *t, 64, 106);
        }
        f.observe(3, 0, 0, 900_000_000, 64, 106);
        assert_eq!(f.longest_gap_ns, 301_000_000);
        assert_eq!(f.longest_gap_end_ns, Some(305_000_000));
        assert_eq!(flow().longest_gap_end_ns, None);
    }

    #[test]
    fn jitter_matches_independent_rfc3550() {
        // Sends every 10 ms; delays alternate 1 ms / 3 ms with a spike.
        let delays_ms: [f64; 10] = [1.0, 3.0, 1.0, 3.0, 7.0, 1.0, 1.0, 2.5, 1.0, 3.0];
        let mut f = flow();
        let mut j = 0.0f64;
        for (i, d) in delays_ms.iter().enumerate() {
            // Realistic epoch times: a float subtraction of these would lose ~256 ns.
            let s = 1_763_700_000_123_456_789u64 + i as u64 * 10_000_000;
            let r = s + (d * 1e6) as u64 + 7;
            f.observe(i as u64, s, s, r, 64, 106);
            if i > 0 {
                j += ((d - delays_ms[i - 1]).abs() - j) / 16.0;
            }
        }
        assert!((f.jitter_ns / 1e6 - j).abs() < 1e-9, "{} vs {}", f.jitter_ns / 1e6, j);
        let ipdv: f64 = delays_ms.windows(2).map(|w| (w[1] - w[0]).abs()).sum::<f64>() / 9.0;
        assert!((f.ipdv_abs_ns.mean().unwrap() / 1e6 - ipdv).abs() < 1e-9);
    }

    #[test]
    fn delay_moments_and_percentiles() {
        let mut f = flow();
        for i in 0..100u64 {
            f.observe(i, 1000, 1000, 1000 + (i + 1) * 1000, 64, 106);
        }
        assert_eq!(f.delay_ns.min, 1000.0);
        assert_eq!(f.delay_ns.max, 100_000.0);
        assert_eq!(f.delay_ns.mean(), Some(50_500.0));
        let p = f.percentiles().unwrap();
        assert_eq!((p.p50, p.p90, p.p99, p.sampled), (50_000.0, 90_000.0, 99_000.0, false));
    }

    #[test]
    fn out_of_range_sequence_is_refused() {
        let mut f = flow();
        assert_eq!(f.observe(u64::MAX, 0, 0, 1, 64, 106), Outcome::OutOfRange);
        assert_eq!((f.rx_pkts, f.out_of_range), (0, 1));
    }

    #[test]
    fn reservoir_bounds_memory() {
        let mut f = FlowStats::new(1, 1 << 24, 10);
        for i in 0..1000u64 {
            f.observe(i, 0, 0, i, 64, 106);
        }
        assert!(f.percentiles().unwrap().sampled);
        assert_eq!(f.samples.len(), 10);
    }

    proptest::proptest! {
        /// Any sequence/time input keeps the books balanced: every packet is exactly one of
        /// distinct, duplicate or out of range, and loss never exceeds what was expected.
        #[test]
        fn counters_always_balance(pkts in proptest::collection::vec((0u64..300, proptest::prelude::any::<u64>(),
                                                                     proptest::prelude::any::<u64>()), 0..400)) {
            let mut f = FlowStats::new(1, 256, 50);
            for (seq, s, r) in &pkts {
                f.observe(*seq, *s, *s, *r, 64, 106);
            }
            proptest::prop_assert_eq!(f.rx_pkts + f.duplicates + f.out_of_range, pkts.len() as u64);
            proptest::prop_assert!(f.lost() <= f.expected() && f.reordered <= f.rx_pkts);
            let _ = f.percentiles();
        }
    }
}
