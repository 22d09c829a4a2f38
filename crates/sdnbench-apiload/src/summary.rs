//! The per-run summary: totals, rates next to the target, failure pattern,
//! connection symptoms and the pass/fail verdict on user thresholds.

use apiload_core::classify;
use serde_json::{json, Value};

use crate::cli::Overflow;
use crate::runner::Shared;
use crate::stats::{latency_json, round, Stats};

/// A user threshold and whether the run met it.
struct Check {
    name: &'static str,
    limit: f64,
    value: f64,
    passed: bool,
}

/// Builds the summary; when interrupted, the target is the slots the pacer
/// reached and the duration ends at the stop. Returns (data, passed).
pub fn summarize(
    sh: &Shared,
    elapsed_s: f64,
    stopped_at_s: f64,
    interrupted: bool,
) -> (Value, bool) {
    let cfg = &sh.cfg;
    let st: std::sync::MutexGuard<'_, Stats> = sh.stats.lock().unwrap_or_else(|p| p.into_inner());
    let sched = &cfg.schedule;
    let reached = sh.reached.load(std::sync::atomic::Ordering::Relaxed);
    let target = reached.min(sched.total_requests());
    let duration_s = if interrupted {
        stopped_at_s.min(sched.duration_s())
    } else {
        sched.duration_s()
    };
    let t = &st.total;
    let unsent = sh.unsent.load(std::sync::atomic::Ordering::Relaxed);
    let answered = t.succeeded + t.failed;
    let ratio = |n: u64, d: u64| if d == 0 { 1.0 } else { n as f64 / d as f64 };
    let per_s = |n: u64| {
        if duration_s > 0.0 {
            n as f64 / duration_s
        } else {
            0.0
        }
    };
    let achieved_ratio = ratio(t.sent, target);
    let on_time_ratio = ratio(t.sent - t.late, target);
    let error_rate = if answered == 0 {
        0.0
    } else {
        t.failed as f64 / answered as f64
    };
    let lat = t.latency.summary();

    let pattern = classify(
        st.outcomes
            .iter()
            .enumerate()
            .take(target as usize)
            .map(|(k, &o)| (sched.intended_s(k as u64), Stats::outcome_of(o))),
        cfg.pattern,
    );

    let mut checks = Vec::new();
    if cfg.min_achieved > 0.0 {
        checks.push(Check {
            name: "min_achieved",
            limit: cfg.min_achieved,
            value: achieved_ratio,
            passed: achieved_ratio >= cfg.min_achieved,
        });
    }
    if cfg.min_on_time > 0.0 {
        checks.push(Check {
            name: "min_on_time",
            limit: cfg.min_on_time,
            value: on_time_ratio,
            passed: on_time_ratio >= cfg.min_on_time,
        });
    }
    if let Some(m) = cfg.max_error_rate {
        checks.push(Check {
            name: "max_error_rate",
            limit: m,
            value: error_rate,
            passed: error_rate <= m,
        });
    }
    if let Some(m) = cfg.max_p99_ms {
        checks.push(Check {
            name: "max_p99_ms",
            limit: m,
            value: lat.p99_ms,
            passed: lat.count > 0 && lat.p99_ms <= m,
        });
    }
    let passed = checks.iter().all(|c| c.passed);

    let mut notes = Vec::new();
    if t.stalled > 0 {
        notes.push(format!(
            "{} responses on {} connections paused ≥{} ms between reads: the signature of Nagle's algorithm on the server \
             meeting delayed ACKs; --quickack or --no-keepalive avoid it",
            t.stalled,
            st.stalled_conns.len(),
            cfg.conn.stall_after.as_millis()
        ));
    }
    if t.late > 0 || t.dropped > 0 || unsent > 0 {
        notes.push(format!(
            "{} requests late, {} dropped, {} unsent: the target rate was not held (cap {} in flight, policy {})",
            t.late,
            t.dropped,
            unsent,
            cfg.max_in_flight,
            overflow_name(cfg.overflow)
        ));
    }
    let templates: Vec<Value> = cfg
        .prepared
        .iter()
        .zip(&st.templates)
        .map(|(p, c)| json!({"name": p.name, "sent": c.sent, "succeeded": c.succeeded, "failed": c.failed}))
        .collect();
    let data = json!({
        "url": cfg.url,
        "duration_s": round(duration_s, 3),
        "elapsed_s": round(elapsed_s, 3),
        "interrupted": interrupted,
        "target": target,
        "target_rps": round(per_s(target), 3),
        "sent": t.sent,
        "achieved_rps": round(per_s(t.sent), 3),
        "achieved_ratio": round(achieved_ratio, 6),
        "on_time_ratio": round(on_time_ratio, 6),
        "late": t.late,
        "dropped": t.dropped,
        "unsent": unsent,
        "succeeded": t.succeeded,
        "failed": t.failed,
        "failed_by_reason": t.reasons,
        "error_rate": round(error_rate, 6),
        "throughput_rps": round(per_s(t.succeeded), 3),
        "latency_ms": latency_json(&lat, true),
        "service_time_ms": latency_json(&st.service.summary(), true),
        "failure_pattern": {
            "pattern": pattern.kind.as_str(),
            "failed": pattern.failed,
            "runs": pattern.runs,
            "longest_run": pattern.longest_run,
            "longest_run_start_s": pattern.longest_run_start_s.map(|v| round(v, 6)),
            "longest_run_span_s": round(pattern.longest_run_span_s, 6),
            "continuous_min_run": cfg.pattern.min_run,
            "continuous_min_span_s": cfg.pattern.min_span_s,
        },
        "connections": {
            "opened": t.opened,
            "retried_stale": t.retried,
            "stalled_responses": t.stalled,
            "connections_with_stalls": st.stalled_conns.len(),
            "stall_after_ms": cfg.conn.stall_after.as_secs_f64() * 1000.0,
            "keep_alive": cfg.keep_alive,
            "nodelay": cfg.conn.nodelay,
            "quickack": cfg.conn.quickack,
        },
        "requests": templates,
        "settings": {
            "max_in_flight": cfg.max_in_flight,
            "overflow": overflow_name(cfg.overflow),
            "late_after_ms": cfg.late_after.as_secs_f64() * 1000.0,
            "timeout_ms": cfg.timeout.as_secs_f64() * 1000.0,
            "threads": cfg.threads,
        },
        "thresholds": checks.iter().map(|c| json!({"name": c.name, "limit": c.limit, "value": round(c.value, 6), "passed": c.passed})).collect::<Vec<_>>(),
        "passed": passed,
        "notes": notes,
    });
    (data, passed)
}

fn overflow_name(o: Overflow) -> &'static str {
    match o {
        Overflow::Late => "late",
        Overflow::Drop => "drop",
    }
}
