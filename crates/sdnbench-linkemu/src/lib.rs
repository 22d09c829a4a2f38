//! sdnbench-linkemu: one process emulates every impaired link of a network.
//! Each link is two veth ends it reads and writes with AF_PACKET; frames get
//! netem's impairments per direction (crate linkemu-core) and leave at their
//! release time, to tens of microseconds: SCHED_FIFO where permitted, a timing
//! wheel, an early timerfd wake-up, then a spin. The emulator reports its own
//! lateness per link direction as JSON Lines. Station links of a wireless cell
//! share one 802.11 medium instead (crate::air). `main.rs` only parses flags.

pub mod air;
pub mod cli;
pub mod engine;
pub mod report;
pub mod ring;
pub mod spec;
pub mod sys;

use serde_json::{json, Map};

use cli::Options;
use engine::{Engine, TOTAL};
use spec::Spec;

/// Waits up to `wait_ns` for every interface, then sets each up.
fn interfaces_up(spec: &Spec, wait_ns: u64) -> Result<(), String> {
    let names: Vec<&String> = spec.links.iter().flat_map(|l| [&l.a, &l.b]).collect();
    let deadline = sys::mono_ns() + wait_ns;
    loop {
        let missing: Vec<&&String> = names.iter().filter(|n| sys::ifindex(n).is_none()).collect();
        if missing.is_empty() {
            break;
        }
        if sys::mono_ns() >= deadline {
            let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            return Err(format!("interfaces never appeared: {}", list.join(", ")));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    for n in names {
        sys::bring_up(n).map_err(|e| format!("{n}: cannot set it up: {e}"))?;
    }
    Ok(())
}

fn run_inner(opts: &Options) -> Result<i32, String> {
    let spec = Spec::load(&opts.config)?;
    if opts.check {
        return Ok(0);
    }
    // Signals first: a SIGTERM during start-up must still end the run cleanly.
    let signals = sys::Signals::new().map_err(|e| format!("signalfd: {e}"))?;
    if opts.netns_private {
        sys::unshare_netns().map_err(|e| format!("cannot make a network namespace: {e}"))?;
    }
    interfaces_up(&spec, opts.wait_ns)?;
    if let Some(cpu) = opts.cpu {
        sys::pin_cpu(cpu).map_err(|e| format!("--cpu {cpu}: {e}"))?;
    }
    let sched = sys::try_realtime(opts.rt_priority);
    sys::tight_timer_slack();
    let spin_ns = opts.spin_ns.unwrap_or(if sched == "other" { 200_000 } else { 25_000 });
    let seed = opts.seed.unwrap_or_else(sys::mono_ns);
    let mut engine = Engine::new(&spec, opts.ring_frames, spin_ns, seed)?;
    let mut facts = Map::new();
    facts.insert("sched".into(), json!(sched));
    facts.insert("spin_us".into(), json!(spin_ns as f64 / 1000.0));
    facts.insert("clock".into(), json!("CLOCK_MONOTONIC (release times and lateness)"));
    let mut out = report::Out::new(facts);
    out.start(&engine.dirs);
    engine.run(&signals, opts.interval_ns, &mut out)?;
    engine.collect_ring_drops();
    engine.snapshot_air();
    let over = opts.max_late_p99_ns.is_some_and(|limit| {
        engine.dirs.iter().any(|d| d.late[TOTAL].summary().p99_us * 1000.0 > limit as f64)
    });
    let code = if over { 1 } else { 0 };
    out.summary(&engine.dirs, engine.held(), code);
    Ok(code)
}

/// Runs the emulator and returns the exit code (0 ok, 1 lateness over --max-late-p99, 2 error).
pub fn run(opts: &Options) -> i32 {
    match run_inner(opts) {
        Ok(code) => code,
        Err(message) => {
            sdnbench_jsonl::emit_error(&message);
            eprintln!("sdnbench-linkemu: {message}");
            2
        }
    }
}
