//! Building blocks of sdnbench-tgen that need no sockets: the probe wire format,
//! open-loop schedules, unit parsing and per-flow receiver statistics.
//! Kept apart from the I/O so every piece is unit-testable without root.

pub mod schedule;
pub mod stats;
pub mod units;
pub mod wire;
