//! sdnbench-apiload: open-loop load for SDN controllers' northbound REST APIs.
//!
//! `main.rs` parses flags and calls [`run`]; everything else lives here so it
//! can be tested. Module map: `cli` (flags → config), `target` (where load
//! may go), `request` (templates → bytes), `http` (the client), `runner`
//! (pacing, tasks, per-second report), `stats` and `summary` (numbers and
//! verdict), `output` (JSON Lines).

pub mod cli;
pub mod http;
pub mod output;
pub mod request;
pub mod runner;
pub mod stats;
pub mod summary;
pub mod target;

use std::sync::atomic::Ordering;
use std::time::Duration;

pub use cli::Args;

/// Exit codes shared by all sdnbench tools.
pub const EXIT_OK: i32 = 0;
pub const EXIT_THRESHOLD: i32 = 1;
pub const EXIT_ERROR: i32 = 2;

/// Runs the load described by `args`; returns the process exit code.
pub fn run(args: Args) -> i32 {
    let cfg = match args.into_config() {
        Ok(c) => c,
        Err(e) => {
            output::emit_error(&e);
            return EXIT_ERROR;
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cfg.threads)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            output::emit_error(&format!("cannot start the I/O runtime: {e}"));
            return EXIT_ERROR;
        }
    };
    let result = rt.block_on(execute(cfg));
    // Lingering closes may still wait for servers' FINs; they are not results.
    rt.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(true) => EXIT_OK,
        Ok(false) => EXIT_THRESHOLD,
        Err(()) => EXIT_ERROR,
    }
}

/// Paces the schedule, waits for outstanding requests, prints the summary.
async fn execute(cfg: cli::Config) -> Result<bool, ()> {
    let timeout = cfg.timeout;
    let cap = cfg.max_in_flight;
    let warm = runner::Shared::preconnect(&cfg).await;
    let sh = runner::Shared::new(cfg, warm);
    let (done_tx, done_rx) = tokio::sync::watch::channel(false);
    let reporter = tokio::spawn(runner::report(sh.clone(), done_rx));
    let pacer = {
        let (sh, handle) = (sh.clone(), tokio::runtime::Handle::current());
        std::thread::Builder::new()
            .name("pacer".into())
            .spawn(move || runner::pace(sh, handle))
            .expect("spawn pacer thread")
    };
    let pacer_done = tokio::task::spawn_blocking(move || pacer.join());
    tokio::pin!(pacer_done);
    let (joined, interrupted) = tokio::select! {
        j = &mut pacer_done => (j, false),
        _ = shutdown_signal() => {
            sh.stop.store(true, Ordering::Relaxed);
            ((&mut pacer_done).await, true)
        }
    };
    if !matches!(joined, Ok(Ok(()))) {
        output::emit_error("internal error: the pacing thread failed; results are incomplete");
        return Err(());
    }
    let stopped_at_s = sh.start.elapsed().as_secs_f64();
    // Every request holds a permit until it completes or times out.
    let all = sh.sem.acquire_many(cap);
    let _ = tokio::time::timeout(timeout + Duration::from_secs(1), all).await;
    let _ = done_tx.send(true);
    let _ = reporter.await;
    let (data, passed) = summary::summarize(
        &sh,
        sh.start.elapsed().as_secs_f64(),
        stopped_at_s,
        interrupted,
    );
    output::emit("summary", data);
    Ok(passed)
}

/// Resolves on SIGINT or SIGTERM, so a stopped run still prints its summary.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut a), Ok(mut b)) => {
            tokio::select! { _ = a.recv() => {}, _ = b.recv() => {} }
        }
        _ => std::future::pending::<()>().await,
    }
}
