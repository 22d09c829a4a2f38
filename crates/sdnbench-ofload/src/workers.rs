//! The generator's worker threads. Each runs its own single-threaded tokio
//! runtime and owns a fixed shard of the switches (switch i on thread
//! i mod n). A work-stealing runtime moves a switch's task to whichever
//! worker is awake, so every wake-up may cross cores and pay a futex and an
//! inter-processor interrupt; with one outstanding PACKET_IN per switch
//! (latency mode) that is paid per response. A shard never leaves its thread.

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;
use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// Worker threads when `-T` is not given. On a machine the generator shares
/// with the controller (the usual case: every CPU is ours to run on) it takes
/// half the CPUs, at least one, and leaves the rest to the controller; a
/// generator that competes with the controller for cores measures no more
/// and costs more (on two cores, two workers spent 10-20 % more CPU per
/// response than one in latency mode). When the process was confined to
/// fewer CPUs than the machine has (taskset, cpuset, a CPU quota), those
/// CPUs are the generator's own and it uses them all.
pub fn default_threads() -> usize {
    let ours = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    // SAFETY: sysconf only reads a system value.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let online = if online > 0 { online as usize } else { ours };
    if ours < online { ours } else { (ours / 2).max(1) }
}

/// A gap between two turns of the busy-poll loop shorter than this means the
/// thread found nothing to do (one empty epoll_wait and one scheduler tick).
const IDLE_TURN_NS: u64 = 5_000;

/// Running worker threads; dropped (or `stop`ped), they end and their tasks are dropped.
pub struct Workers {
    handles: Vec<Handle>,
    stops: Vec<oneshot::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
    /// Busy-poll mode: nanoseconds the workers spent finding nothing to do.
    idle_ns: Arc<AtomicU64>,
    busy_poll: bool,
}

impl Workers {
    /// Starts `n` (at least one) worker threads. With `busy_poll` each one
    /// polls its sockets without ever sleeping, as cbench does: a sleeping
    /// generator must be woken by the controller's every send, and the
    /// wake-up is paid on the controller's core (against ovs-testcontroller
    /// pinned apart from the generator: 82 k/s sleeping, 102 k/s polling).
    pub fn start(n: usize, busy_poll: bool) -> io::Result<Workers> {
        let idle_ns = Arc::new(AtomicU64::new(0));
        let mut w = Workers { handles: Vec::new(), stops: Vec::new(), threads: Vec::new(), idle_ns: idle_ns.clone(), busy_poll };
        for i in 0..n.max(1) {
            // Busy-polling, the runtime looks at the sockets (epoll_wait with
            // no timeout) each time it has run every ready switch, as cbench
            // polls once per sweep; polling after each switch instead cost
            // 1.3 epoll_waits per answer in latency mode and 14 % of the rate.
            let rt = Builder::new_current_thread().enable_all().build()?;
            let (stop_tx, stop_rx) = oneshot::channel::<()>();
            w.handles.push(rt.handle().clone());
            w.stops.push(stop_tx);
            let idle = idle_ns.clone();
            let thread = std::thread::Builder::new().name(format!("ofload-{i}")).spawn(move || {
                // A current-thread runtime runs its tasks only inside block_on.
                if busy_poll {
                    let _ = rt.block_on(spin_until(stop_rx, idle));
                } else {
                    let _ = rt.block_on(stop_rx);
                }
            })?;
            w.threads.push(thread);
        }
        Ok(w)
    }

    /// Busy-poll mode: seconds the workers spent idle so far (summed over threads).
    pub fn idle_s(&self) -> Option<f64> {
        self.busy_poll.then(|| self.idle_ns.load(Relaxed) as f64 / 1e9)
    }

    pub fn len(&self) -> usize {
        self.handles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// Runs `fut` on worker `i mod n`.
    pub fn spawn<F>(&self, i: usize, fut: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handles[i % self.handles.len()].spawn(fut)
    }

    /// Ends every worker thread and waits for it.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        for s in self.stops.drain(..) {
            let _ = s.send(());
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Yields to the scheduler until `stop` fires, so the runtime never parks
/// with a timeout; turns that come back within IDLE_TURN_NS count as idle.
async fn spin_until(mut stop: oneshot::Receiver<()>, idle_ns: Arc<AtomicU64>) {
    let (mut last, mut idle) = (Instant::now(), 0u64);
    loop {
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = tokio::task::yield_now() => {}
        }
        let now = Instant::now();
        let gap = now.duration_since(last).as_nanos() as u64;
        if gap < IDLE_TURN_NS {
            idle += gap;
            if idle >= 1_000_000 {
                idle_ns.fetch_add(idle, Relaxed); // publish every millisecond, not every turn
                idle = 0;
            }
        }
        last = now;
    }
    idle_ns.fetch_add(idle, Relaxed);
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_poll_workers_count_their_idle_time_and_sleeping_ones_do_not() {
        let spinning = Workers::start(1, true).unwrap();
        let sleeping = Workers::start(1, false).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        // Nothing to do: nearly all of the 0.3 s is idle turns (lenient: shared CI cores preempt).
        let idle = spinning.idle_s().unwrap();
        assert!(idle > 0.05 && idle < 0.5, "idle {idle}");
        assert_eq!(sleeping.idle_s(), None);
        spinning.stop();
        sleeping.stop();
    }
}
