//! Latency recording in HDR histograms and the percentiles the tool reports.

use hdrhistogram::Histogram;

/// Latencies in microseconds, 1 µs to 1 hour, 3 significant digits.
///
/// HDR keeps the relative error of every percentile below 0.1 % at a fixed
/// memory cost, so a run of millions of requests needs no sampling.
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

/// Percentiles of one histogram in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        let h = Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid HDR bounds");
        LatencyHistogram { h }
    }

    /// Records one latency in microseconds (clamped into the histogram's range).
    pub fn record_us(&mut self, us: u64) {
        self.h.saturating_record(us.max(1));
    }

    /// Adds every value of `other`.
    pub fn add(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.h.add(&other.h);
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Empties the histogram, keeping its memory.
    pub fn reset(&mut self) {
        self.h.reset();
    }

    /// Percentiles in milliseconds (all zero when empty).
    pub fn summary(&self) -> LatencySummary {
        if self.h.is_empty() {
            return LatencySummary::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        LatencySummary {
            count: self.h.len(),
            mean_ms: self.h.mean() / 1000.0,
            p50_ms: ms(self.h.value_at_quantile(0.50)),
            p90_ms: ms(self.h.value_at_quantile(0.90)),
            p99_ms: ms(self.h.value_at_quantile(0.99)),
            p999_ms: ms(self.h.value_at_quantile(0.999)),
            max_ms: ms(self.h.max()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_uniform_spread() {
        let mut h = LatencyHistogram::new();
        for us in 1..=1000u64 {
            h.record_us(us * 1000); // 1 ms … 1000 ms
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_ms - 500.0).abs() <= 0.5, "{s:?}");
        assert!((s.p99_ms - 990.0).abs() <= 1.0, "{s:?}");
        assert!((s.max_ms - 1000.0).abs() <= 1.0, "{s:?}");
        let mut total = LatencyHistogram::new();
        total.add(&h);
        total.add(&h);
        assert_eq!(total.count(), 2000);
        h.reset();
        assert_eq!(h.summary(), LatencySummary::default());
    }
}
