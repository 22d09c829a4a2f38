//! Building blocks of sdnbench-tgen that need no sockets: the probe wire format,
//! open-loop schedules, packet sources (probes, video), unit parsing, per-flow
//! receiver statistics and the video playout model. Kept apart from the I/O so
//! every piece is unit-testable without root.

pub mod schedule;
pub mod source;
pub mod stats;
pub mod units;
pub mod video;
pub mod wire;
