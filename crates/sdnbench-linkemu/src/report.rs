//! JSON Lines output in sdnbench's envelope (crate sdnbench-jsonl); `data` is
//! documented by schemas/linkemu.schema.json. Every record lists each link
//! direction with its frame counters and release lateness over the record's
//! window: `start` (links open, forwarding), `period` (every --interval),
//! `mark` (since the previous SIGUSR1) and, in the summary, the whole run.

use serde_json::{json, Map, Value};

use crate::engine::{Direction, Reporter, TOTAL};
use crate::sys;

/// Fields of one direction over window `which`.
pub fn direction(d: &Direction, which: usize) -> Value {
    let c = d.counters.since(&d.base[which]);
    let late = d.late[which].summary();
    let mut m = json!({
        "link": d.link, "dir": d.dir, "from": d.from, "to": d.to, "held_pkts": d.netem.held_pkts(),
        "released_pkts": late.count, "late_p50_us": late.p50_us, "late_p99_us": late.p99_us,
        "late_max_us": late.max_us,
    });
    for (name, value) in c.fields() {
        m[name] = json!(value);
    }
    m
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
        let mut m = self.facts.clone();
        m.insert("scope".into(), json!(scope));
        m.insert("t_s".into(), json!((now - self.started_ns) as f64 / 1e9));
        m.insert("window_s".into(), json!((now - self.window_started_ns[which]) as f64 / 1e9));
        m.insert("cpu_s".into(), json!(sys::cpu_s()));
        m.insert("links".into(), Value::Array(dirs.iter().map(|d| direction(d, which)).collect()));
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
