//! How late frames left compared with their release time: the emulator's own
//! accuracy, kept per link direction in an HDR histogram (3 significant digits,
//! 1 ns to 60 s) so p50/p99/max cost nothing per frame.

use hdrhistogram::Histogram;

/// Release lateness of one link direction over some window.
#[derive(Clone, Debug)]
pub struct Lateness {
    hist: Histogram<u64>,
}

/// Summary of a window, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatenessSummary {
    pub count: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness { hist: Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds") }
    }
}

impl Lateness {
    /// One frame released `late_ns` after its time (0 when on time).
    pub fn record(&mut self, late_ns: u64) {
        self.hist.saturating_record(late_ns.max(1));
    }

    /// Adds another window's frames (a trial window from intervals).
    pub fn add(&mut self, other: &Lateness) {
        let _ = self.hist.add(&other.hist);
    }

    /// p50, p99 and max of the window (zeros when no frame left).
    pub fn summary(&self) -> LatenessSummary {
        if self.hist.is_empty() {
            return LatenessSummary::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        LatenessSummary {
            count: self.hist.len(),
            p50_us: us(self.hist.value_at_quantile(0.5)),
            p99_us: us(self.hist.value_at_quantile(0.99)),
            max_us: us(self.hist.max()),
        }
    }

    /// Start a new window.
    pub fn reset(&mut self) {
        self.hist.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_within_the_histograms_precision() {
        let mut l = Lateness::default();
        for i in 1..=1000u64 {
            l.record(i * 1000);
        }
        let s = l.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_us - 500.0).abs() <= 0.5 && (s.p99_us - 990.0).abs() <= 1.0, "{s:?}");
        assert!((s.max_us - 1000.0).abs() <= 1.0);
        let mut total = Lateness::default();
        total.add(&l);
        total.add(&l);
        assert_eq!(total.summary().count, 2000);
        l.reset();
        assert_eq!(l.summary(), LatenessSummary::default());
    }
}
