//! Counters shared by the switch tasks, summary statistics of the loops, and
//! the generator's own CPU use (so a run whose generator was the bottleneck
//! is flagged instead of reported as the controller's limit).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// One thread's event counters, on cache lines of their own.
#[derive(Default)]
#[repr(align(128))]
struct Shard {
    sent: AtomicU64,
    responses: AtomicU64,
    matched: AtomicU64,
    duplicates: AtomicU64,
    late: AtomicU64,
    unmatched: AtomicU64,
    timeouts: AtomicU64,
    decode_errors: AtomicU64,
    lldp: AtomicU64,
    relayed: AtomicU64,
}

/// Shards: threads beyond this many share them (still correct, just contended).
const SHARDS: usize = 64;

/// Event counters, added to in batches by the switch tasks. Each thread adds
/// to its own shard: switches add after every wake-up, and one set of atomics
/// shared by all worker threads would bounce between their caches.
pub struct Counters {
    shards: Box<[Shard]>,
}

impl Default for Counters {
    fn default() -> Self {
        Counters { shards: (0..SHARDS).map(|_| Shard::default()).collect() }
    }
}

/// This thread's shard number, handed out in order of first use.
fn shard_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Relaxed) % SHARDS;
    }
    INDEX.with(|i| *i)
}

/// A plain copy of the counters at one instant.
#[derive(Default, Clone, Copy, Debug)]
pub struct Snapshot {
    pub sent: u64,
    pub responses: u64,
    pub matched: u64,
    pub duplicates: u64,
    pub late: u64,
    pub unmatched: u64,
    pub timeouts: u64,
    pub decode_errors: u64,
    pub lldp: u64,
    pub relayed: u64,
}

impl Counters {
    pub fn add(&self, d: &Snapshot) {
        for (a, v) in self.shards[shard_index()].fields().into_iter().zip(d.values()) {
            if v != 0 {
                a.fetch_add(v, Relaxed);
            }
        }
    }

    /// The sum over all shards.
    pub fn snapshot(&self) -> Snapshot {
        let mut v = [0u64; 10];
        for shard in self.shards.iter() {
            for (sum, a) in v.iter_mut().zip(shard.fields()) {
                *sum += a.load(Relaxed);
            }
        }
        Snapshot::from_values(&v)
    }
}

impl Shard {
    fn fields(&self) -> [&AtomicU64; 10] {
        [&self.sent, &self.responses, &self.matched, &self.duplicates, &self.late, &self.unmatched, &self.timeouts, &self.decode_errors, &self.lldp, &self.relayed]
    }
}

impl Snapshot {
    fn values(&self) -> [u64; 10] {
        [self.sent, self.responses, self.matched, self.duplicates, self.late, self.unmatched, self.timeouts, self.decode_errors, self.lldp, self.relayed]
    }

    fn from_values(v: &[u64]) -> Snapshot {
        Snapshot { sent: v[0], responses: v[1], matched: v[2], duplicates: v[3], late: v[4], unmatched: v[5], timeouts: v[6], decode_errors: v[7], lldp: v[8], relayed: v[9] }
    }

    /// Field-wise `self - earlier`.
    pub fn since(&self, earlier: &Snapshot) -> Snapshot {
        let v: Vec<u64> = self.values().iter().zip(earlier.values()).map(|(a, b)| a.saturating_sub(b)).collect();
        Snapshot::from_values(&v)
    }

    /// Field-wise `self + other`.
    pub fn plus(&self, other: &Snapshot) -> Snapshot {
        let v: Vec<u64> = self.values().iter().zip(other.values()).map(|(a, b)| a + b).collect();
        Snapshot::from_values(&v)
    }

    pub fn is_zero(&self) -> bool {
        self.values().iter().all(|v| *v == 0)
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "sent": self.sent, "responses": self.responses, "matched": self.matched,
            "duplicates": self.duplicates, "late": self.late, "unmatched": self.unmatched,
            "timeouts": self.timeouts, "decode_errors": self.decode_errors, "lldp_packet_outs": self.lldp, "lldp_relayed": self.relayed,
        })
    }
}

/// min / max / mean / sample standard deviation of a series.
pub fn describe(xs: &[f64]) -> serde_json::Value {
    if xs.is_empty() {
        return serde_json::json!({"n": 0, "mean": null, "sd": null, "min": null, "max": null});
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = if xs.len() > 1 { (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
    let min = xs.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    serde_json::json!({"n": xs.len(), "mean": mean, "sd": sd, "min": min, "max": max})
}

/// User + system CPU seconds this process has used so far.
pub fn process_cpu_s() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we pass.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// (busy, total) jiffies of the whole host from /proc/stat, if readable.
pub fn host_cpu_jiffies() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    let line = s.lines().next()?;
    let v: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3)? + v.get(4).unwrap_or(&0);
    Some((total - idle, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_matches_hand_computation() {
        let d = describe(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(d["mean"], 5.0);
        assert!((d["sd"].as_f64().unwrap() - 2.138).abs() < 1e-3);
        assert_eq!((d["min"].as_f64(), d["max"].as_f64()), (Some(2.0), Some(9.0)));
    }

    #[test]
    fn snapshots_subtract() {
        let c = Counters::default();
        c.add(&Snapshot { sent: 5, matched: 3, ..Default::default() });
        let a = c.snapshot();
        c.add(&Snapshot { sent: 2, ..Default::default() });
        let d = c.snapshot().since(&a);
        assert_eq!((d.sent, d.matched), (2, 0));
    }

    #[test]
    fn shards_of_several_threads_sum() {
        let c = std::sync::Arc::new(Counters::default());
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || c.add(&Snapshot { sent: 10, responses: 7, ..Default::default() }))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let s = c.snapshot();
        assert_eq!((s.sent, s.responses, s.matched), (30, 21, 0));
    }
}
