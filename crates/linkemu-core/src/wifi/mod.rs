//! An 802.11g wireless cell without radio drivers: the access point and its
//! stations share one medium. [`phy`] gives path loss, SNR, rates and frame
//! errors; [`airtime`] the ERP-OFDM durations and backoff parameters; [`dcf`]
//! the contention of the AP and its stations for the medium, in explicit time;
//! [`bianchi`] the analytic saturation model it is calibrated on; [`compat`]
//! Mininet-WiFi's distance-only link model (no shared airtime), for comparison
//! with published results; [`motion`] stations moving along waypoints;
//! [`cell`] a cell as the emulator's configuration describes it.

pub mod airtime;
pub mod bianchi;
pub mod cell;
pub mod compat;
pub mod dcf;
pub mod motion;
pub mod phy;

pub use cell::CellSpec;
pub use dcf::{Dir, Medium, Outcome, Path};
