//! The coordinator: start the switches, wait for their handshakes, drive the
//! phases (learn, warm-up, measured loops), and print interval and summary
//! records.

use crate::conn::{run_switch, Phase, SwitchEnd};
use crate::stats::{describe, host_cpu_jiffies, process_cpu_s, Snapshot};
use crate::workers::Workers;
use crate::{emit, Config, Shared};
use serde_json::json;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs a whole benchmark; returns the process exit code (0, 1 or 2).
pub fn run(cfg: Config) -> i32 {
    if let Err(e) = cfg.validate() {
        emit("error", json!({"message": e}));
        return 2;
    }
    raise_fd_limit();
    let threads = if cfg.threads > 0 { cfg.threads } else { crate::workers::default_threads() };
    // The coordinator sleeps through the loops on the main thread; the
    // switches run on the worker threads.
    let (rt, workers) = match (tokio::runtime::Builder::new_current_thread().enable_all().build(), Workers::start(threads, cfg.busy_poll)) {
        (Ok(rt), Ok(w)) => (rt, w),
        (Err(e), _) | (_, Err(e)) => {
            emit("error", json!({"message": format!("cannot start runtime: {e}")}));
            return 2;
        }
    };
    let result = rt.block_on(drive(cfg, &workers));
    workers.stop();
    match result {
        Ok(code) => code,
        Err(e) => {
            emit("error", json!({"message": e}));
            2
        }
    }
}

async fn drive(cfg: Config, workers: &Workers) -> Result<i32, String> {
    let threads = workers.len();
    let n = cfg.switches;
    let topology = match &cfg.topology {
        Some(path) => Some(crate::topology::Topology::load(path, n)?),
        None => None,
    };
    let (mut relays, mut inboxes) = (Vec::new(), Vec::new());
    if topology.is_some() {
        for _ in 0..n {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            relays.push(tx);
            inboxes.push(Some(rx));
        }
    } else {
        inboxes.resize_with(n, || None);
    }
    let tls = match (&cfg.tls, &cfg.tls_ca) {
        (true, Some(ca)) => Some(crate::tls::client_config(ca, cfg.tls_cert.as_deref(), cfg.tls_key.as_deref())?),
        _ => None,
    };
    let paths = match (&topology, cfg.paths) {
        (Some(t), true) => Some(crate::paths::Paths::new(t, cfg.macs)?),
        _ => None,
    };
    // Listen mode: the switches hand every FLOW_MOD to the coordinator, which prints it.
    let (flow_mods, flow_mods_rx) = if cfg.listen_flow_mods {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let shared = Arc::new(Shared { cfg, counters: Default::default(), ready: 0.into(), failed: 0.into(), measuring: false.into(), latencies: Default::default(), tls, topology, paths, relays, flow_mods });
    let cfg = &shared.cfg;
    let (phase_tx, phase_rx) = tokio::sync::watch::channel(Phase::Connecting);
    let mut tasks = Vec::with_capacity(n);
    let t_connect = Instant::now();
    for (i, inbox) in inboxes.into_iter().enumerate() {
        tasks.push(workers.spawn(i, run_switch(i as u32, shared.clone(), phase_rx.clone(), inbox)));
        if i % 64 == 63 {
            // Ramp connections so the controller's accept backlog is not overrun.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let deadline = t_connect + cfg.connect_timeout;
    while shared.ready.load(Relaxed) + shared.failed.load(Relaxed) < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ready = shared.ready.load(Relaxed);
    let connect_s = t_connect.elapsed().as_secs_f64();
    if ready == 0 {
        let _ = phase_tx.send(Phase::Stop);
        let first = first_error(tasks).await.unwrap_or_else(|| "no handshake completed".into());
        return Err(format!("no switch completed the OpenFlow handshake with {}:{}: {first}", cfg.controller, cfg.port));
    }
    if let Some(rx) = flow_mods_rx {
        return crate::listen::listen(shared.clone(), rx, tasks, phase_tx, connect_s).await;
    }
    let _ = phase_tx.send(Phase::Learn);
    tokio::time::sleep(Duration::from_millis(200 + cfg.delay)).await;
    let _ = phase_tx.send(Phase::Run);

    let loop_len = Duration::from_millis(cfg.ms_per_loop);
    let start = Instant::now();
    let mut prev = shared.counters.snapshot();
    let mut rates = Vec::new();
    let mut matched_rates = Vec::new();
    let (mut cpu0, mut host0, mut t_measure) = (process_cpu_s(), host_cpu_jiffies(), Instant::now());
    let mut idle0 = workers.idle_s();
    let mut measured = Snapshot::default();
    for l in 0..cfg.loops {
        let warm = l < cfg.warmup;
        if l == cfg.warmup {
            shared.measuring.store(true, Relaxed);
            (cpu0, host0, t_measure) = (process_cpu_s(), host_cpu_jiffies(), Instant::now());
            idle0 = workers.idle_s();
        }
        let t0 = Instant::now();
        tokio::time::sleep_until((start + loop_len * (l + 1)).into()).await;
        let snap = shared.counters.snapshot();
        let d = snap.since(&prev);
        prev = snap;
        let secs = t0.elapsed().as_secs_f64();
        let (rps, mps) = (d.responses as f64 / secs, d.matched as f64 / secs);
        if !warm {
            rates.push(rps);
            matched_rates.push(mps);
            measured = measured.plus(&d);
        }
        let mut data = d.to_json();
        let extra = json!({"loop": l, "warmup": warm, "t_s": start.elapsed().as_secs_f64(), "duration_s": secs,
                           "responses_per_s": rps, "matched_per_s": mps, "sent_per_s": d.sent as f64 / secs});
        data.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        emit("interval", data);
    }
    let wall = t_measure.elapsed().as_secs_f64();
    let cpu1 = process_cpu_s();
    let host1 = host_cpu_jiffies();
    let idle1 = workers.idle_s();
    shared.measuring.store(false, Relaxed);
    let _ = phase_tx.send(Phase::Stop);

    let mut errors = Vec::new();
    let mut controller_errors = 0;
    let mut first_decode_error = None;
    for t in tasks {
        if let Ok(Ok(end)) = tokio::time::timeout(Duration::from_secs(5), t).await {
            let SwitchEnd { error, controller_errors: ce, first_decode_error: fde } = end;
            first_decode_error = first_decode_error.or(fde);
            controller_errors += ce;
            errors.extend(error);
        }
    }

    let cpu_used = (cpu1.0 - cpu0.0) + (cpu1.1 - cpu0.1);
    let cores_used = cpu_used / wall.max(1e-9);
    let usable = threads.min(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(threads)) as f64;
    // A busy-polling generator uses its cores whether or not it has work, so
    // its load is the time it was not spinning idle.
    let cores_busy = match (idle0, idle1) {
        (Some(i0), Some(i1)) => (threads as f64 - (i1 - i0) / wall.max(1e-9)).clamp(0.0, threads as f64),
        _ => cores_used,
    };
    let saturated = cores_busy >= 0.9 * usable;
    let host_busy = match (host0, host1) {
        (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => Some(100.0 * (b1 - b0) as f64 / (t1 - t0) as f64),
        _ => None,
    };
    let mut invalid = Vec::new();
    if saturated {
        invalid.push(format!("generator busy {cores_busy:.2} of {usable} usable cores: it, not the controller, may be the bottleneck"));
    }
    if ready < n {
        invalid.push(format!("only {ready} of {n} switches completed the handshake"));
    }
    if !errors.is_empty() && ready == n {
        invalid.push(format!("{} switches lost their controller connection during the run", errors.len()));
    }
    if measured.matched == 0 {
        invalid.push("no PACKET_IN was answered during the measured loops".into());
    }
    // In latency mode a timeout is a dropped request (rate limits, ignored hosts):
    // the switch waits for it, so the rate then measures the timeout. In throughput
    // mode a deep window queued at a slow controller also outlives the timeout and
    // is answered late, so there timeouts are reported, not judged.
    let asked = measured.matched + measured.timeouts;
    if !cfg.throughput && measured.timeouts > 0 && measured.timeouts * 100 > asked {
        invalid.push(format!("{} of {asked} PACKET_INs went unanswered until their timeout (over 1 %): the controller drops requests", measured.timeouts));
    }
    let hist = shared.latencies.merged();
    let latency = (!hist.is_empty()).then(|| {
        let us = |q: f64| hist.value_at_quantile(q) as f64 / 1e3;
        json!({"count": hist.len(), "mean": hist.mean() / 1e3, "p50": us(0.5), "p90": us(0.9), "p99": us(0.99),
               "p999": us(0.999), "max": hist.max() as f64 / 1e3, "min": hist.min() as f64 / 1e3,
               "sample_every": cfg.latency_sample_every()})
    });
    let mean_rate = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
    let mut unmet = Vec::new();
    if let Some(min) = cfg.min_rate {
        if mean_rate < min {
            unmet.push(format!("mean {mean_rate:.0} responses/s below --min-rate {min}"));
        }
    }
    if let (Some(max), Some(l)) = (cfg.max_p99_us, &latency) {
        if l["p99"].as_f64().unwrap_or(f64::MAX) > max {
            unmet.push(format!("p99 latency {} us above --max-p99-us {max}", l["p99"]));
        }
    }
    emit("summary", json!({
        "tool": "sdnbench-ofload", "tool_version": env!("CARGO_PKG_VERSION"),
        "controller": format!("{}:{}", cfg.controller, cfg.port),
        "openflow_version": if cfg.version == openflow::OFP10 { "1.0" } else { "1.3" },
        "mode": if cfg.throughput { "throughput" } else { "latency" },
        "transport": if cfg.tls { "tls" } else { "tcp" },
        "paths": shared.paths.as_ref().map(|p| p.summary()),
        "topology_links": shared.topology.as_ref().map(|t| t.neighbours.iter().map(|m| m.len()).sum::<usize>() / 2),
        "switches": n, "switches_connected": ready, "connect_s": connect_s,
        "macs_per_switch": cfg.macs, "window": cfg.effective_window(), "buffered": !cfg.no_buffer,
        "loops": cfg.loops, "warmup_loops": cfg.warmup, "ms_per_loop": cfg.ms_per_loop,
        "responses_per_s": describe(&rates), "matched_per_s": describe(&matched_rates),
        "latency_us": latency, "totals": measured.to_json(), "totals_all_phases": shared.counters.snapshot().to_json(),
        "controller_errors": controller_errors, "first_decode_error": first_decode_error,
        "switch_errors": errors.iter().take(5).collect::<Vec<_>>(), "switch_error_count": errors.len(),
        "generator_cpu": {"user_s": cpu1.0 - cpu0.0, "sys_s": cpu1.1 - cpu0.1, "cores_used": cores_used, "cores_busy": cores_busy, "busy_poll": idle1.is_some(),
                          "threads": threads, "saturated": saturated},
        "host_cpu_busy_pct": host_busy,
        "valid": invalid.is_empty(), "invalid_reasons": invalid,
        "thresholds_met": unmet.is_empty(), "thresholds_unmet": unmet,
    }));
    Ok(if unmet.is_empty() { 0 } else { 1 })
}

/// Thousands of switches need thousands of sockets: lift the soft limit on
/// open files to the hard limit (a no-op when it already is).
fn raise_fd_limit() {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

async fn first_error(tasks: Vec<tokio::task::JoinHandle<SwitchEnd>>) -> Option<String> {
    for t in tasks {
        if let Ok(Ok(end)) = tokio::time::timeout(Duration::from_secs(2), t).await {
            if end.error.is_some() {
                return end.error;
            }
        }
    }
    None
}
