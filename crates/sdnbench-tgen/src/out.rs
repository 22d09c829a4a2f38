//! JSON Lines output in sdnbench's envelope (crate sdnbench-jsonl); `data` is
//! documented by schemas/tgen.schema.json.

use serde_json::{json, Map, Value};
use tgen_core::stats::FlowStats;

pub use sdnbench_jsonl::{emit, SCHEMA};

/// Prints an error line (the caller then exits 2).
pub fn error(message: &str) {
    sdnbench_jsonl::emit_error(message);
}

/// Nanoseconds to milliseconds, or null.
pub fn ms(ns: Option<f64>) -> Value {
    ns.map_or(Value::Null, |v| json!(v / 1e6))
}

/// Delay, jitter, loss, order and throughput fields of one flow under `prefix`
/// ("owd" for one-way, "rtt" for round trip), shared by receiver and echo sender.
pub fn flow_fields(f: &mut FlowStats, prefix: &str, delay_valid: bool) -> Map<String, Value> {
    let mut m = Map::new();
    let expected = f.expected();
    let lost = f.lost();
    m.insert("expected_pkts".into(), json!(expected));
    m.insert("sender_count_known".into(), json!(f.sender_count.is_some()));
    m.insert("rx_pkts".into(), json!(f.rx_pkts));
    m.insert("loss_pkts".into(), json!(lost));
    m.insert("loss_pct".into(), if expected > 0 { json!(100.0 * lost as f64 / expected as f64) } else { Value::Null });
    m.insert("loss_bursts".into(), json!(f.loss_bursts()));
    m.insert("reordered_pkts".into(), json!(f.reordered));
    m.insert("duplicate_pkts".into(), json!(f.duplicates));
    m.insert("out_of_range_pkts".into(), json!(f.out_of_range));
    let pct = if delay_valid { f.percentiles() } else { None };
    let d = &f.delay_ns;
    let ok = |v: Option<f64>| if delay_valid { ms(v) } else { Value::Null };
    m.insert(format!("{prefix}_mean_ms"), ok(d.mean()));
    m.insert(format!("{prefix}_min_ms"), ok((d.n > 0).then_some(d.min)));
    m.insert(format!("{prefix}_max_ms"), ok((d.n > 0).then_some(d.max)));
    m.insert(format!("{prefix}_sd_ms"), ok(d.sd()));
    m.insert(format!("{prefix}_p50_ms"), ok(pct.as_ref().map(|p| p.p50)));
    m.insert(format!("{prefix}_p90_ms"), ok(pct.as_ref().map(|p| p.p90)));
    m.insert(format!("{prefix}_p99_ms"), ok(pct.as_ref().map(|p| p.p99)));
    m.insert("percentiles_sampled".into(), json!(pct.as_ref().is_some_and(|p| p.sampled)));
    m.insert(format!("{prefix}_from_intended_mean_ms"), ok(f.delay_from_intended_ns.mean()));
    m.insert(format!("{prefix}_from_intended_max_ms"),
             ok((f.delay_from_intended_ns.n > 0).then_some(f.delay_from_intended_ns.max)));
    m.insert("jitter_ms".into(), if f.rx_pkts > 1 { json!(f.jitter_ns / 1e6) } else { Value::Null });
    m.insert("ipdv_mean_ms".into(), ms(f.ipdv_abs_ns.mean()));
    m.insert("longest_gap_ms".into(), json!(f.longest_gap_ns as f64 / 1e6));
    m.insert("longest_gap_end_ns".into(), json!(f.longest_gap_end_ns));
    let span = f.active_s();
    let rate = |x: f64| if span > 0.0 && f.rx_pkts > 1 { json!(x) } else { Value::Null };
    // N arrivals span N-1 gaps: rates use (N-1) packets' worth over the arrival span.
    let per_pkt = |total: u64| total as f64 * f.rx_pkts.saturating_sub(1) as f64 / f.rx_pkts.max(1) as f64;
    m.insert("rx_payload_bytes".into(), json!(f.payload_bytes));
    m.insert("rx_duration_s".into(), json!(span));
    m.insert("rx_pps".into(), rate(f.rx_pkts.saturating_sub(1) as f64 / span));
    m.insert("rx_payload_bps".into(), rate(per_pkt(f.payload_bytes) * 8.0 / span));
    m.insert("rx_l2_bps".into(), rate(per_pkt(f.l2_bytes) * 8.0 / span));
    m
}
