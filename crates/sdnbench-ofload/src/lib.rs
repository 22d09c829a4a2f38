//! sdnbench-ofload: emulated OpenFlow switches that measure a controller's
//! flow-setup throughput and latency (cbench's job, for OpenFlow 1.0 and
//! 1.3, multi-threaded, with repeated-loop statistics and response matching).

pub mod config;
pub mod conn;
pub mod latency;
pub mod listen;
pub mod packet;
pub mod paths;
pub mod proto;
mod run;
pub mod stats;
pub mod tls;
pub mod topology;
pub mod tracker;
pub mod workers;

pub use config::Config;
pub use run::run;

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// State every switch task shares with the coordinator.
pub struct Shared {
    pub cfg: Config,
    pub counters: stats::Counters,
    /// Switches whose handshake completed (FEATURES_REPLY sent).
    pub ready: AtomicUsize,
    /// Switches that failed before completing the handshake.
    pub failed: AtomicUsize,
    /// True after the warm-up loops: latencies are recorded.
    pub measuring: AtomicBool,
    pub latencies: latency::Latencies,
    /// TLS client configuration when --tls is given.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Topology-aware mode: the links, and one relay inbox per switch.
    pub topology: Option<topology::Topology>,
    /// Multi-hop flow-setup accounting (--paths).
    pub paths: Option<paths::Paths>,
    pub relays: Vec<tokio::sync::mpsc::UnboundedSender<topology::Relay>>,
    /// Listen mode (--listen-flow-mods): where switches report the FLOW_MODs they receive.
    pub flow_mods: Option<listen::Sink>,
}

/// Monotonic nanoseconds since the first call (process-wide origin).
pub fn now_ns() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// One JSON Lines record in sdnbench's envelope (a closed stdout does not abort the run).
pub use sdnbench_jsonl::emit;
