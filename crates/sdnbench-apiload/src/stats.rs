//! Counters per interval and per run, and the JSON they become.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use apiload_core::{LatencyHistogram, LatencySummary, Outcome};
use serde_json::{json, Value};

/// What happened in one interval (or the whole run).
#[derive(Default)]
pub struct Counters {
    pub sent: u64,
    pub late: u64,
    pub dropped: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub reasons: BTreeMap<String, u64>,
    pub stalled: u64,
    pub opened: u64,
    pub retried: u64,
    /// Latency from the intended send time, for every complete response.
    pub latency: LatencyHistogram,
}

impl Counters {
    fn fail(&mut self, reason: &str) {
        self.failed += 1;
        *self.reasons.entry(reason.to_string()).or_insert(0) += 1;
    }
}

/// Per-template tallies for the summary.
#[derive(Default, Clone, Copy)]
pub struct TemplateCount {
    pub sent: u64,
    pub succeeded: u64,
    pub failed: u64,
}

/// The result of one request, as the runner hands it over.
pub struct Completion {
    pub k: u64,
    pub template: usize,
    /// From the intended send time to the end of the response (µs).
    pub latency_us: u64,
    /// From the actual send to the end of the response (µs).
    pub service_us: u64,
    /// None = success, Some(reason) = failure.
    pub failure: Option<String>,
    /// Did a complete HTTP response arrive (successful or not)?
    pub responded: bool,
    pub stalled_conn: Option<u64>,
    /// When the request finished.
    pub done: Instant,
}

/// All mutable state of a run, behind one lock.
///
/// Events are filed under the whole second (since start) in which they
/// happened, by their own timestamp, not by when the reporter wakes: the
/// reporter's timer fires a little after each second ends, and a request
/// sent at 1.0002 s must not land in second 0.
pub struct Stats {
    start: Instant,
    /// Counters per second not yet printed.
    seconds: BTreeMap<u64, Counters>,
    /// The next second to print; late-filed events go into it.
    next_second: u64,
    pub total: Counters,
    pub service: LatencyHistogram,
    /// Per scheduled request: 0 not sent, 1 ok, 2 failed.
    pub outcomes: Vec<u8>,
    pub templates: Vec<TemplateCount>,
    pub stalled_conns: HashSet<u64>,
    pub in_flight: u64,
}

impl Stats {
    /// Empty state for `total` scheduled requests over `templates` templates.
    pub fn new(start: Instant, total: u64, templates: usize) -> Self {
        Stats {
            start,
            seconds: BTreeMap::new(),
            next_second: 0,
            total: Counters::default(),
            service: LatencyHistogram::new(),
            outcomes: vec![0; total as usize],
            templates: vec![TemplateCount::default(); templates],
            stalled_conns: HashSet::new(),
            in_flight: 0,
        }
    }

    /// The counters of the second in which `at` falls.
    fn second(&mut self, at: Instant) -> &mut Counters {
        let s = (at.saturating_duration_since(self.start).as_secs()).max(self.next_second);
        self.seconds.entry(s).or_default()
    }

    /// Applies `f` to the counters of the second of `at` and to the run totals.
    fn both(&mut self, at: Instant, f: impl Fn(&mut Counters)) {
        f(self.second(at));
        f(&mut self.total);
    }

    /// A request left at `at`; `late` when after its intended time plus tolerance.
    pub fn sent(&mut self, at: Instant, template: usize, late: bool) {
        self.both(at, |c| {
            c.sent += 1;
            c.late += u64::from(late);
        });
        self.templates[template].sent += 1;
        self.in_flight += 1;
    }

    /// A send time passed while the in-flight cap was reached (drop policy).
    pub fn dropped(&mut self, at: Instant) {
        self.both(at, |c| c.dropped += 1);
    }

    /// A new TCP connection was opened.
    pub fn opened(&mut self, at: Instant) {
        self.both(at, |c| c.opened += 1);
    }

    /// A stale keep-alive connection failed before any response and the request was retried.
    pub fn retried(&mut self, at: Instant) {
        self.both(at, |c| c.retried += 1);
    }

    /// A request finished (response, error or timeout).
    pub fn completed(&mut self, c: &Completion) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let tc = &mut self.templates[c.template];
        match &c.failure {
            None => tc.succeeded += 1,
            Some(_) => tc.failed += 1,
        }
        if let Some(slot) = self.outcomes.get_mut(c.k as usize) {
            *slot = if c.failure.is_none() { 1 } else { 2 };
        }
        if let Some(id) = c.stalled_conn {
            self.stalled_conns.insert(id);
        }
        if c.responded {
            self.service.record_us(c.service_us);
        }
        self.both(c.done, |ctr| {
            match &c.failure {
                None => ctr.succeeded += 1,
                Some(r) => ctr.fail(r),
            }
            if c.responded {
                ctr.latency.record_us(c.latency_us);
            }
            ctr.stalled += u64::from(c.stalled_conn.is_some());
        });
    }

    /// Outcomes in request order, for the failure-pattern classifier.
    pub fn outcome_of(code: u8) -> Outcome {
        match code {
            1 => Outcome::Ok,
            2 => Outcome::Failed,
            _ => Outcome::NotSent,
        }
    }
}

/// Latency percentiles as JSON (milliseconds, µs resolution).
pub fn latency_json(s: &LatencySummary, full: bool) -> Value {
    let r = |v: f64| (v * 1000.0).round() / 1000.0;
    let mut v = json!({"count": s.count, "p50": r(s.p50_ms), "p90": r(s.p90_ms), "p99": r(s.p99_ms), "max": r(s.max_ms)});
    if full {
        v["mean"] = json!(r(s.mean_ms));
        v["p999"] = json!(r(s.p999_ms));
    }
    v
}

/// Rounds a rate or ratio for output.
pub fn round(v: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (v * m).round() / m
}

/// The `data` of the `interval` line for second `t_s` (lasting `dur_s`); later
/// events for that second are filed under the next one.
pub fn take_interval(st: &mut Stats, t_s: u64, dur_s: f64, target: u64) -> Value {
    let c = st.seconds.remove(&t_s).unwrap_or_default();
    st.next_second = st.next_second.max(t_s + 1);
    let per = |n: u64| {
        if dur_s > 0.0 {
            round(n as f64 / dur_s, 3)
        } else {
            0.0
        }
    };
    json!({
        "t_s": t_s,
        "dur_s": round(dur_s, 3),
        "target": target,
        "target_rps": per(target),
        "sent": c.sent,
        "achieved_rps": per(c.sent),
        "late": c.late,
        "dropped": c.dropped,
        "succeeded": c.succeeded,
        "failed": c.failed,
        "failed_by_reason": c.reasons,
        "throughput_rps": per(c.succeeded),
        "latency_ms": latency_json(&c.latency.summary(), false),
        "in_flight": st.in_flight,
        "connections_opened": c.opened,
        "stalled": c.stalled,
    })
}
