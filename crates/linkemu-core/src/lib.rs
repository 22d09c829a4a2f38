//! The parts of sdnbench-linkemu that need no sockets: one direction of an
//! emulated link with tc-netem's semantics ([`netem::Netem`]: loss, duplication,
//! corruption, queue limit, delay with a distribution and correlation,
//! reordering, rate with per-frame overhead), the loss models and their
//! closed-form statistics ([`loss`]), delay distributions ([`dist`]), netem's
//! correlated random numbers ([`random`]), the timing wheel that holds packets
//! until their release time ([`wheel`]) and the release-lateness histogram
//! ([`lateness`]), and an 802.11g cell whose stations share one medium with
//! DCF contention ([`wifi`]). Kept apart from the I/O so every stage is unit- and
//! property-tested without root.

pub mod config;
pub mod dist;
pub mod lateness;
pub mod loss;
pub mod netem;
pub mod random;
pub mod wheel;
pub mod wifi;

pub use config::Impairment;
pub use netem::{Netem, Verdict};
pub use wheel::Wheel;
