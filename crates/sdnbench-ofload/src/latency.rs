//! Latency samples. An HDR histogram spanning 1 ns..60 s takes tens to
//! hundreds of kilobytes, too much to give each of 5,000 switches.
//! Switches buffer samples and add them in batches to one histogram per
//! worker thread, so the lock is taken once per batch and never contended.

use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// Samples a switch buffers before adding them to its thread's histogram.
pub const BATCH: usize = 256;

type Shared = Arc<Mutex<Histogram<u64>>>;

/// The histograms of one run, one per worker thread that recorded.
pub struct Latencies {
    run: u64,
    hists: Mutex<Vec<Shared>>,
}

thread_local! {
    /// This thread's histogram and the run it belongs to.
    static LOCAL: RefCell<Option<(u64, Shared)>> = const { RefCell::new(None) };
}

/// A histogram for nanosecond latencies from 1 ns to 60 s. Two significant
/// digits (values within 1 %) keep it at ~40 kB, inside the L2 cache: with
/// three it is ~300 kB and every record is a cache miss at millions per second.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 2).expect("valid histogram bounds")
}

impl Default for Latencies {
    fn default() -> Self {
        static RUNS: AtomicU64 = AtomicU64::new(0);
        Latencies { run: RUNS.fetch_add(1, Relaxed), hists: Mutex::new(Vec::new()) }
    }
}

impl Latencies {
    /// Adds (and clears) a batch of nanosecond samples.
    pub fn record(&self, samples: &mut Vec<u64>) {
        if samples.is_empty() {
            return;
        }
        let hist = LOCAL.with(|l| {
            let mut l = l.borrow_mut();
            match &*l {
                Some((run, h)) if *run == self.run => h.clone(),
                _ => {
                    let h = Arc::new(Mutex::new(histogram()));
                    self.hists.lock().unwrap_or_else(|e| e.into_inner()).push(h.clone());
                    *l = Some((self.run, h.clone()));
                    h
                }
            }
        });
        let mut h = hist.lock().unwrap_or_else(|e| e.into_inner());
        for &s in samples.iter() {
            let _ = h.record(s.max(1));
        }
        samples.clear();
    }

    /// All threads' samples in one histogram.
    pub fn merged(&self) -> Histogram<u64> {
        let mut all = histogram();
        for h in self.hists.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = all.add(&*h.lock().unwrap_or_else(|e| e.into_inner()));
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_from_several_threads_merge() {
        let l = Arc::new(Latencies::default());
        let handles: Vec<_> = (0..3)
            .map(|t| {
                let l = l.clone();
                std::thread::spawn(move || {
                    let mut v: Vec<u64> = (1..=100).map(|i| i * 1000 + t).collect();
                    l.record(&mut v);
                    assert!(v.is_empty());
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let m = l.merged();
        assert_eq!(m.len(), 300);
        assert!((m.value_at_quantile(0.5) as i64 - 50_000).abs() < 600);
    }
}
