//! The generator's worker threads. Each runs its own single-threaded tokio
//! runtime and owns a fixed shard of the switches (switch i on thread
//! i mod n). A work-stealing runtime moves a switch's task to whichever
//! worker is awake, so every wake-up may cross cores and pay a futex and an
//! inter-processor interrupt; with one outstanding PACKET_IN per switch
//! (latency mode) that is paid per response. A shard never leaves its thread.

use std::future::Future;
use std::io;
use std::thread::JoinHandle;
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

/// Running worker threads; dropped (or `stop`ped), they end and their tasks are dropped.
pub struct Workers {
    handles: Vec<Handle>,
    stops: Vec<oneshot::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts `n` (at least one) worker threads.
    pub fn start(n: usize) -> io::Result<Workers> {
        let mut w = Workers { handles: Vec::new(), stops: Vec::new(), threads: Vec::new() };
        for i in 0..n.max(1) {
            let rt = Builder::new_current_thread().enable_all().build()?;
            let (stop_tx, stop_rx) = oneshot::channel::<()>();
            w.handles.push(rt.handle().clone());
            w.stops.push(stop_tx);
            let thread = std::thread::Builder::new().name(format!("ofload-{i}")).spawn(move || {
                // A current-thread runtime runs its tasks only inside block_on.
                let _ = rt.block_on(stop_rx);
            })?;
            w.threads.push(thread);
        }
        Ok(w)
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

impl Drop for Workers {
    fn drop(&mut self) {
        self.end();
    }
}
