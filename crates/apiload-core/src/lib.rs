//! Pure parts of the northbound load generator: units, open-loop schedules,
//! latency summaries and failure-pattern classification.
//!
//! Nothing here does I/O, so every rule that decides a reported number
//! (when a request was meant to leave, what counts as a continuous failure)
//! is unit-tested without a server.

pub mod latency;
pub mod pattern;
pub mod schedule;
pub mod units;

pub use latency::{LatencyHistogram, LatencySummary};
pub use pattern::{classify, FailurePattern, Outcome, PatternKind, PatternThresholds};
pub use schedule::{Schedule, Stage};
