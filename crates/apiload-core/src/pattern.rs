//! Failure pattern of a run: none, partial (scattered failures) or continuous
//! (a long unbroken run of failed requests).
//!
//! Published northbound-API load tests separate a controller that drops some
//! requests under load (partial failure) from one that stops answering
//! altogether (continuous failure). Here "consecutive" means consecutive in
//! request order, i.e. by intended send time, not by completion time: a slow
//! success that finishes late does not break a run of failures that the
//! server produced in between, and vice versa.

/// What happened to one scheduled request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A response that met the success rule (status code, body check).
    Ok,
    /// Sent, but failed: HTTP status, timeout, refused, reset, bad body.
    Failed,
    /// Never sent (dropped at the in-flight cap or not sent before the end);
    /// neither breaks nor extends a run of failures.
    NotSent,
}

/// When a run of consecutive failures counts as continuous failure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PatternThresholds {
    /// At least this many consecutive failed requests …
    pub min_run: u64,
    /// … spanning at least this many seconds of intended send time
    /// (first to last failure), so that a burst of 20 failures within 20 ms
    /// at 1,000 rps is not called an outage.
    pub min_span_s: f64,
}

impl Default for PatternThresholds {
    fn default() -> Self {
        PatternThresholds {
            min_run: 20,
            min_span_s: 0.1,
        }
    }
}

/// The three labels of a run's failure pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternKind {
    None,
    Partial,
    Continuous,
}

impl PatternKind {
    /// The label used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            PatternKind::None => "none",
            PatternKind::Partial => "partial",
            PatternKind::Continuous => "continuous",
        }
    }
}

/// The classified pattern and the evidence for it.
#[derive(Debug, Clone, PartialEq)]
pub struct FailurePattern {
    pub kind: PatternKind,
    pub failed: u64,
    /// Number of separate runs of consecutive failures.
    pub runs: u64,
    pub longest_run: u64,
    /// Intended send time of the first request of the longest run (seconds).
    pub longest_run_start_s: Option<f64>,
    /// Intended time from the first to the last failure of the longest run.
    pub longest_run_span_s: f64,
}

/// Classifies `(intended_s, outcome)` pairs given in request (intended-time) order.
pub fn classify<I>(outcomes: I, th: PatternThresholds) -> FailurePattern
where
    I: IntoIterator<Item = (f64, Outcome)>,
{
    let mut p = FailurePattern {
        kind: PatternKind::None,
        failed: 0,
        runs: 0,
        longest_run: 0,
        longest_run_start_s: None,
        longest_run_span_s: 0.0,
    };
    // (start time, last time, length) of the run in progress.
    let mut cur: Option<(f64, f64, u64)> = None;
    let close = |cur: &mut Option<(f64, f64, u64)>, p: &mut FailurePattern| {
        if let Some((start, last, len)) = cur.take() {
            if len > p.longest_run {
                p.longest_run = len;
                p.longest_run_start_s = Some(start);
                p.longest_run_span_s = last - start;
            }
        }
    };
    for (t, o) in outcomes {
        match o {
            Outcome::Failed => {
                p.failed += 1;
                cur = Some(match cur {
                    Some((start, _, len)) => (start, t, len + 1),
                    None => {
                        p.runs += 1;
                        (t, t, 1)
                    }
                });
            }
            Outcome::Ok => close(&mut cur, &mut p),
            Outcome::NotSent => {}
        }
    }
    close(&mut cur, &mut p);
    p.kind = if p.failed == 0 {
        PatternKind::None
    } else if p.longest_run >= th.min_run && p.longest_run_span_s >= th.min_span_s {
        PatternKind::Continuous
    } else {
        PatternKind::Partial
    };
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// n requests at `rps`, failing where `fail(k)` says so.
    fn run(n: u64, rps: f64, fail: impl Fn(u64) -> bool) -> Vec<(f64, Outcome)> {
        (0..n)
            .map(|k| {
                (
                    k as f64 / rps,
                    if fail(k) {
                        Outcome::Failed
                    } else {
                        Outcome::Ok
                    },
                )
            })
            .collect()
    }

    #[test]
    fn no_failures_is_none() {
        let p = classify(run(100, 10.0, |_| false), PatternThresholds::default());
        assert_eq!(p.kind, PatternKind::None);
        assert_eq!((p.failed, p.runs, p.longest_run), (0, 0, 0));
        assert_eq!(p.longest_run_start_s, None);
    }

    #[test]
    fn every_tenth_is_partial() {
        let p = classify(
            run(1000, 100.0, |k| k % 10 == 9),
            PatternThresholds::default(),
        );
        assert_eq!(p.kind, PatternKind::Partial);
        assert_eq!((p.failed, p.runs, p.longest_run), (100, 100, 1));
        assert!((p.longest_run_start_s.unwrap() - 0.09).abs() < 1e-9);
    }

    #[test]
    fn fifty_in_a_row_at_second_five_is_continuous() {
        let p = classify(
            run(800, 100.0, |k| (500..550).contains(&k) || k == 10),
            PatternThresholds::default(),
        );
        assert_eq!(p.kind, PatternKind::Continuous);
        assert_eq!((p.failed, p.runs, p.longest_run), (51, 2, 50));
        assert!((p.longest_run_start_s.unwrap() - 5.0).abs() < 1e-9);
        assert!((p.longest_run_span_s - 0.49).abs() < 1e-9);
    }

    #[test]
    fn short_fast_burst_is_not_an_outage() {
        // 30 failures in a row at 10,000 rps last 2.9 ms: below the 100 ms span.
        let p = classify(
            run(1000, 10_000.0, |k| (100..130).contains(&k)),
            PatternThresholds::default(),
        );
        assert_eq!(p.longest_run, 30);
        assert_eq!(p.kind, PatternKind::Partial);
        let strict = PatternThresholds {
            min_run: 30,
            min_span_s: 0.0,
        };
        assert_eq!(
            classify(run(1000, 10_000.0, |k| (100..130).contains(&k)), strict).kind,
            PatternKind::Continuous
        );
    }

    #[test]
    fn unsent_slots_neither_break_nor_extend_a_run() {
        let mut v = run(100, 10.0, |k| (10..40).contains(&k));
        for slot in v.iter_mut().skip(20).take(5) {
            slot.1 = Outcome::NotSent;
        }
        let p = classify(v, PatternThresholds::default());
        assert_eq!((p.failed, p.runs, p.longest_run), (25, 1, 25));
        assert_eq!(p.kind, PatternKind::Continuous);
    }

    #[test]
    fn failure_until_the_end_is_closed() {
        let p = classify(run(100, 10.0, |k| k >= 70), PatternThresholds::default());
        assert_eq!(p.longest_run, 30);
        assert!((p.longest_run_start_s.unwrap() - 7.0).abs() < 1e-9);
    }
}
