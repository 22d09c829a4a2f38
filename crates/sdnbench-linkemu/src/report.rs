//! JSON Lines output in sdnbench's envelope (crate sdnbench-jsonl); `data` is
//! documented by schemas/linkemu.schema.json. Every record lists each link
//! direction with its frame counters and release lateness over the record's
//! window: `start` (links open, forwarding), `period` (every --interval),
//! `mark` (since the previous SIGUSR1) and, in the summary, the whole run.
//! Directions on a wireless medium add an `air` object: the medium's counters
//! for the station in that direction, and its share of the window's airtime.

use serde_json::{json, Map, Value};

use linkemu_core::wifi::Dir;

use crate::air::AirLink;
use crate::engine::{Direction, Reporter, TOTAL};
use crate::sys;

/// Fields of one direction over window `which`, `window_ns` long.
pub fn direction(d: &Direction, which: usize, window_ns: u64) -> Value {
    let c = d.counters.since(&d.base[which]);
    let late = d.late[which].summary();
    let mut m = json!({
        "link": d.link, "dir": d.dir, "from": d.from, "to": d.to, "held_pkts": d.held_pkts(),
        "released_pkts": late.count, "late_p50_us": late.p50_us, "late_p99_us": late.p99_us,
        "late_max_us": late.max_us,
    });
    for (name, value) in c.fields() {
        m[name] = json!(value);
    }
    if let Some(a) = &d.air {
        m["air"] = air(a, which, window_ns);
    }
    m
}

/// The medium's view of one direction over window `which`.
pub fn air(a: &AirLink, which: usize, window_ns: u64) -> Value {
    let c = a.counters.since(&a.base[which]);
    json!({
        "medium": a.medium, "station": a.at.station, "way": if a.at.dir == Dir::Up { "up" } else { "down" },
        "rate_mbps": c.rate_mbps, "attempts": c.attempts, "retries": c.retries, "collisions": c.collisions,
        "frame_errors": c.frame_errors, "delivered_pkts": c.delivered_pkts, "retry_drops": c.retry_drops,
        "queue_drops": c.queue_drops, "airtime_us": c.airtime_ns as f64 / 1e3,
        "airtime_share": if window_ns > 0 { c.airtime_ns as f64 / window_ns as f64 } else { 0.0 },
    })
}

/// Writes records to stdout, with the run's fixed facts in each.
pub struct Out {
    pub started_ns: u64,
    pub window_started_ns: [u64; 3],
    pub facts: Map<String, Value>,
}

impl Out {
    pub fn new(facts: Map<String, Value>) -> Out {
        let now = sys::mono_ns();
        Out { started_ns: now, window_started_ns: [now; 3], facts }
    }

    fn record(&self, scope: &str, which: usize, dirs: &[Direction]) -> Value {
        let now = sys::mono_ns();
        let window_ns = now - self.window_started_ns[which];
        let mut m = self.facts.clone();
        m.insert("scope".into(), json!(scope));
        m.insert("t_s".into(), json!((now - self.started_ns) as f64 / 1e9));
        m.insert("window_s".into(), json!(window_ns as f64 / 1e9));
        m.insert("cpu_s".into(), json!(sys::cpu_s()));
        m.insert("links".into(), Value::Array(dirs.iter().map(|d| direction(d, which, window_ns)).collect()));
        Value::Object(m)
    }

    /// The first record: every link is open and forwarding.
    pub fn start(&mut self, dirs: &[Direction]) {
        let r = self.record("start", TOTAL, dirs);
        sdnbench_jsonl::emit("interval", r);
    }

    /// The summary over the whole run.
    pub fn summary(&mut self, dirs: &[Direction], held: usize, exit_code: i32) {
        let mut r = self.record("total", TOTAL, dirs);
        r["held_at_exit_pkts"] = json!(held);
        r["exit_code"] = json!(exit_code);
        sdnbench_jsonl::emit("summary", r);
    }
}

impl Reporter for Out {
    fn window(&mut self, scope: &str, which: usize, dirs: &[Direction]) {
        let r = self.record(scope, which, dirs);
        self.window_started_ns[which] = sys::mono_ns();
        sdnbench_jsonl::emit("interval", r);
    }
}
