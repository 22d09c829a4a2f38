//! The open-loop engine: a pacing thread releases requests at their intended
//! times, tokio tasks carry them out, a reporter prints one line per second.
//!
//! The pacer is an OS thread sleeping with a 1 µs timer slack rather than a
//! tokio timer, because tokio's timer wheel has 1 ms granularity: against a
//! server answering in 100 µs, rounding every send up to the next
//! millisecond would add ~0.5 ms of phantom latency from the intended time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::runtime::Handle;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::cli::{Config, Overflow};
use crate::http::{connect, Conn, Failure, Response};
use crate::output::emit;
use crate::request::WeightedPicker;
use crate::stats::{take_interval, Completion, Stats};

/// State shared by the pacer, the request tasks and the reporter.
pub struct Shared {
    pub cfg: Config,
    pub stats: Mutex<Stats>,
    pub start: Instant,
    pool: Mutex<Vec<Conn>>,
    next_conn: AtomicU64,
    pub stop: AtomicBool,
    pub sem: Arc<Semaphore>,
    /// Slots whose time came but which were not sent before the schedule ended.
    pub unsent: AtomicU64,
    /// Slots the pacer reached before a stop signal (all of them when not stopped).
    pub reached: AtomicU64,
}

impl Shared {
    /// Fresh state with `warm` idle connections; the clock starts now.
    pub fn new(cfg: Config, warm: Vec<Conn>) -> Arc<Self> {
        let start = Instant::now();
        let mut stats = Stats::new(start, cfg.schedule.total_requests(), cfg.prepared.len());
        for _ in &warm {
            stats.opened(start);
        }
        let next_conn = AtomicU64::new(warm.len() as u64);
        let sem = Arc::new(Semaphore::new(cfg.max_in_flight as usize));
        Arc::new(Shared {
            cfg,
            stats: Mutex::new(stats),
            start,
            pool: Mutex::new(warm),
            next_conn,
            stop: AtomicBool::new(false),
            sem,
            unsent: AtomicU64::new(0),
            reached: AtomicU64::new(u64::MAX),
        })
    }

    /// Opens `cfg.preconnect` connections at once; failures are left to the run to count.
    pub async fn preconnect(cfg: &Config) -> Vec<Conn> {
        let opens = (0..cfg.preconnect).map(|id| connect(cfg.target.addr, cfg.conn, u64::from(id)));
        let mut warm = Vec::new();
        for c in opens {
            if let Ok(Ok(c)) = tokio::time::timeout(cfg.timeout, c).await {
                warm.push(c);
            }
        }
        warm
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stats> {
        self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends one request over an idle or new connection; retries once when a
    /// reused keep-alive connection turns out to be closed by the server.
    async fn send(&self, idx: usize) -> Result<(Response, Option<u64>), Failure> {
        let req = &self.cfg.prepared[idx];
        for attempt in 0..2 {
            let idle = self.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let mut conn = match idle {
                Some(c) => c,
                None => {
                    let id = self.next_conn.fetch_add(1, Ordering::Relaxed);
                    let c = connect(self.cfg.target.addr, self.cfg.conn, id).await?;
                    self.lock().opened(Instant::now());
                    c
                }
            };
            match conn.exchange(req, self.cfg.expect_body.as_deref()).await {
                Ok(resp) => {
                    let stalled = resp.stalled.then_some(conn.id);
                    if resp.keep_alive && self.cfg.keep_alive {
                        self.pool
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(conn);
                    } else {
                        tokio::spawn(conn.linger_close());
                    }
                    return Ok((resp, stalled));
                }
                Err(f) if attempt == 0 && conn.reused && f.before_response => {
                    self.lock().retried(Instant::now());
                }
                Err(f) => return Err(f),
            }
        }
        unreachable!("the loop returns on its second attempt")
    }

    /// Does request `k` and records its outcome.
    async fn one_request(
        self: Arc<Self>,
        k: u64,
        idx: usize,
        intended: Instant,
        _permit: OwnedSemaphorePermit,
    ) {
        let sent_at = Instant::now();
        let res = tokio::time::timeout(self.cfg.timeout, self.send(idx)).await;
        let done = Instant::now();
        let (failure, responded, stalled_conn) = match res {
            Err(_) => (Some("timeout".to_string()), false, None),
            Ok(Err(f)) => (Some(f.reason.to_string()), false, None),
            Ok(Ok((resp, stalled))) => {
                let ok_status = self
                    .cfg
                    .ok_status
                    .iter()
                    .any(|&(a, b)| (a..=b).contains(&resp.status));
                let failure = if !ok_status {
                    Some(format!("http_{}", resp.status))
                } else if !resp.body_matched {
                    Some("body_mismatch".to_string())
                } else {
                    None
                };
                (failure, true, stalled)
            }
        };
        let us = |d: Duration| d.as_micros().min(u128::from(u64::MAX)) as u64;
        let c = Completion {
            k,
            template: idx,
            latency_us: us(done.saturating_duration_since(intended)),
            service_us: us(done.saturating_duration_since(sent_at)),
            failure,
            responded,
            stalled_conn,
            done,
        };
        self.lock().completed(&c);
    }
}

/// Lowers this thread's timer slack so `sleep` wakes within microseconds.
fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long; no pointers involved.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Records a stop signal at slot `k`: the target becomes the slots due by
/// now, and those due but not yet sent are unsent.
fn stopped(sh: &Shared, k: u64) {
    let sched = &sh.cfg.schedule;
    let due_now = (sched.due_at(sh.start.elapsed().as_secs_f64()) - 1e-9)
        .ceil()
        .max(0.0) as u64;
    let due = due_now.clamp(k, sched.total_requests());
    sh.reached.store(due, Ordering::Relaxed);
    sh.unsent.store(due - k, Ordering::Relaxed);
}

/// How waiting for a free in-flight slot ended.
enum Slot {
    Got(OwnedSemaphorePermit),
    Stopped,
    TooLate,
}

/// Waits for a free slot until `give_up`, looking at the stop flag every 50 ms.
async fn wait_for_slot(sh: &Shared, give_up: Instant) -> Slot {
    loop {
        let step = (Instant::now() + Duration::from_millis(50)).min(give_up);
        match tokio::time::timeout_at(step.into(), sh.sem.clone().acquire_owned()).await {
            Ok(Ok(p)) => return Slot::Got(p),
            Ok(Err(_)) => return Slot::TooLate, // semaphore closed: cannot happen, treat as the end
            Err(_) if sh.stop.load(Ordering::Relaxed) => return Slot::Stopped,
            Err(_) if Instant::now() >= give_up => return Slot::TooLate,
            Err(_) => {}
        }
    }
}

/// When to wake for a request intended at `intended`: that instant, or the
/// end of its pacing quantum so that one wake-up sends a whole batch.
fn wake_time(start: Instant, intended: Instant, quantum: Duration) -> Instant {
    if quantum.is_zero() {
        return intended;
    }
    let q = quantum.as_nanos();
    let since = intended.duration_since(start).as_nanos();
    let slot_end = since.div_ceil(q) * q;
    start + Duration::from_nanos(slot_end.min(u128::from(u64::MAX)) as u64)
}

/// The pacing loop: runs on its own OS thread until the schedule ends or `stop` is set.
pub fn pace(sh: Arc<Shared>, rt: Handle) {
    tighten_timer_slack();
    let sched = &sh.cfg.schedule;
    let total = sched.total_requests();
    let end = sh.start + Duration::from_secs_f64(sched.duration_s());
    // Past this instant nothing more is sent: the backlog counts as unsent.
    let give_up = end + sh.cfg.late_after;
    let mut picker = WeightedPicker::new(&sh.cfg.weights).expect("weights checked at startup");
    for k in 0..total {
        if sh.stop.load(Ordering::Relaxed) {
            stopped(&sh, k);
            return;
        }
        let intended = sh.start + Duration::from_secs_f64(sched.intended_s(k));
        let now = Instant::now();
        if intended > now {
            std::thread::sleep(wake_time(sh.start, intended, sh.cfg.pacing_quantum) - now);
        }
        let idx = picker.next_index();
        let permit = match sh.sem.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) if sh.cfg.overflow == Overflow::Drop => {
                sh.lock().dropped(Instant::now());
                continue;
            }
            Err(_) => match rt.block_on(wait_for_slot(&sh, give_up)) {
                Slot::Got(p) => p,
                Slot::Stopped => {
                    stopped(&sh, k);
                    return;
                }
                Slot::TooLate => {
                    sh.unsent.store(total - k, Ordering::Relaxed);
                    return;
                }
            },
        };
        let now = Instant::now();
        if now > give_up {
            sh.unsent.store(total - k, Ordering::Relaxed);
            return;
        }
        sh.lock()
            .sent(now, idx, now.duration_since(intended) > sh.cfg.late_after);
        rt.spawn(sh.clone().one_request(k, idx, intended, permit));
    }
    // The run lasts as long as the schedule, even when its last slot comes early.
    while !sh.stop.load(Ordering::Relaxed) && Instant::now() < end {
        std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
    }
}

/// Prints one `interval` line per second until `done` resolves, then a final partial one.
pub async fn report(sh: Arc<Shared>, mut done: tokio::sync::watch::Receiver<bool>) {
    let targets = sh.cfg.schedule.per_second_targets();
    let mut i: u64 = 0;
    loop {
        let tick = sh.start + Duration::from_secs(i + 1);
        tokio::select! {
            _ = tokio::time::sleep_until(tick.into()) => {
                let target = targets.get(i as usize).copied().unwrap_or(0);
                let data = take_interval(&mut sh.lock(), i, 1.0, target);
                emit("interval", data);
                i += 1;
            }
            _ = done.changed() => {
                let elapsed = sh.start.elapsed().as_secs_f64();
                let dur = (elapsed - i as f64).max(0.0);
                let target = targets.get(i as usize).copied().unwrap_or(0);
                if dur > 0.001 {
                    let data = take_interval(&mut sh.lock(), i, dur, target);
                    emit("interval", data);
                }
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_times_round_up_to_the_quantum() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        assert_eq!(wake_time(t0, at(1234), Duration::ZERO), at(1234));
        assert_eq!(wake_time(t0, at(1234), Duration::from_millis(1)), at(2000));
        assert_eq!(wake_time(t0, at(2000), Duration::from_millis(1)), at(2000));
        assert_eq!(wake_time(t0, at(1), Duration::from_micros(250)), at(250));
    }
}
