//! Mininet-WiFi's link model without wmediumd, so published results can be
//! reproduced: every station's wireless interface gets a netem qdisc (on its
//! egress, and on its IFB for ingress) whose parameters depend only on the
//! distance to its AP, and the AP's interface gets a fixed one. No airtime is
//! shared. The rules, from Mininet-WiFi's `mn_wifi/link.py` (mode g):
//!
//! - nothing is configured closer than 0.01 m;
//! - rate = 11 × 1.01^(−d) Mbit/s (0.1 if that were not positive), written with 4 decimals;
//! - delay (tc's `latency`, netem's synonym of `delay`) = d / 20 ms, only above 0.1 ms, 2 decimals;
//! - loss = 2 d / 1000 %, only above 0.1 %, 1 decimal;
//! - the AP: rate 54 Mbit/s and 1 ms on everything it sends.
//!
//! The AP's qdisc is one queue for all its stations; here its 1 ms is added to
//! each downlink direction, and its 54 Mbit/s is not shared (it binds only when
//! the downlinks together exceed 54 Mbit/s, i.e. five or more stations each at
//! their ≤ 11 Mbit/s cap).
//!
//! A moving station ([`Moving`]) gets the parameters of its distance when each
//! frame arrives: what Mininet-WiFi's mobility does by rewriting the qdiscs
//! whenever it moves a station, continuously here.

use crate::config::{Impairment, LossSpec};
use crate::wifi::motion::Trajectory;

/// The rate of mode g before the distance factor (Mininet-WiFi's "custom rate").
pub const BASE_RATE_MBPS: f64 = 11.0;
/// What the AP's own qdisc sets.
pub const AP_RATE_MBPS: f64 = 54.0;
pub const AP_DELAY_MS: f64 = 1.0;

/// netem parameters of one station link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompatLink {
    pub rate_mbps: f64,
    /// 0 when Mininet-WiFi leaves it out.
    pub delay_ms: f64,
    /// 0 when Mininet-WiFi leaves it out.
    pub loss_pct: f64,
}

/// `x` as it reads once printed with `decimals` decimals (tc receives the text).
fn printed(x: f64, decimals: usize) -> f64 {
    format!("{x:.decimals$}").parse().expect("a formatted number parses")
}

/// The station's qdisc at `distance_m` from its AP; None when Mininet-WiFi sets none.
pub fn station_link(distance_m: f64) -> Option<CompatLink> {
    if distance_m < 0.01 {
        return None;
    }
    let mut rate = BASE_RATE_MBPS * 1.01f64.powf(-distance_m);
    if rate <= 0.0 {
        rate = 0.1;
    }
    let delay = distance_m / 10.0 / 2.0;
    let loss = distance_m * 2.0 / 1000.0;
    Some(CompatLink {
        rate_mbps: printed(rate, 4),
        delay_ms: if delay > 0.1 { printed(delay, 2) } else { 0.0 },
        loss_pct: if loss > 0.1 { printed(loss, 1) } else { 0.0 },
    })
}

impl CompatLink {
    /// The same parameters as a link direction's impairment; `extra_delay_ms` adds a stage's delay in series.
    pub fn impairment(&self, extra_delay_ms: f64) -> Impairment {
        let loss = if self.loss_pct > 0.0 {
            LossSpec::Bernoulli { loss_pct: self.loss_pct, correlation_pct: 0.0 }
        } else {
            LossSpec::None
        };
        Impairment {
            rate_bps: (self.rate_mbps * 1e6).round() as u64,
            delay_ns: ((self.delay_ms + extra_delay_ms) * 1e6).round() as u64,
            loss,
            ..Impairment::default()
        }
    }
}

/// Both directions of a station link: (uplink, downlink) impairments; transparent closer than 0.01 m
/// except for the AP's delay on the downlink.
pub fn impairments(distance_m: f64) -> (Impairment, Impairment) {
    match station_link(distance_m) {
        Some(l) => (l.impairment(0.0), l.impairment(AP_DELAY_MS)),
        None => {
            let ap = CompatLink { rate_mbps: AP_RATE_MBPS, delay_ms: AP_DELAY_MS, loss_pct: 0.0 };
            (Impairment::default(), ap.impairment(0.0))
        }
    }
}

/// One direction of a moving station's link: Mininet-WiFi's parameters at its distance now.
#[derive(Clone, Debug, PartialEq)]
pub struct Moving {
    pub trajectory: Trajectory,
    pub ap: [f64; 3],
    /// The AP sends this way (it adds its delay).
    pub downlink: bool,
    /// The direction's own random stream, kept across changes.
    pub seed: Option<u64>,
    /// Start of the motion clock, ns.
    pub origin_ns: u64,
}

impl Moving {
    /// The direction's impairment at `now_ns`.
    pub fn impairment_at(&self, now_ns: u64) -> Impairment {
        let t_s = now_ns.saturating_sub(self.origin_ns) as f64 / 1e9;
        let (up, down) = impairments(self.trajectory.distance_at(t_s, self.ap));
        Impairment { seed: self.seed, ..if self.downlink { down } else { up } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_mininet_wifi_for_a_few_distances() {
        // 10 m: 11 × 1.01^−10 = 9.9582 Mbit/s, 0.5 ms, loss 0.02 % (left out).
        assert_eq!(station_link(10.0), Some(CompatLink { rate_mbps: 9.9582, delay_ms: 0.5, loss_pct: 0.0 }));
        // 1 m: 0.05 ms is not above 0.1: no delay.
        assert_eq!(station_link(1.0), Some(CompatLink { rate_mbps: 10.8911, delay_ms: 0.0, loss_pct: 0.0 }));
        // 50 m: loss 0.1 % is not above 0.1.
        assert_eq!(station_link(50.0), Some(CompatLink { rate_mbps: 6.6884, delay_ms: 2.5, loss_pct: 0.0 }));
        // 70 m: 0.14 % printed as 0.1 %.
        assert_eq!(station_link(70.0), Some(CompatLink { rate_mbps: 5.4815, delay_ms: 3.5, loss_pct: 0.1 }));
        assert_eq!(station_link(100.0), Some(CompatLink { rate_mbps: 4.0668, delay_ms: 5.0, loss_pct: 0.2 }));
        assert_eq!(station_link(0.005), None);
    }

    #[test]
    fn impairments_carry_the_values_and_the_ap_delay() {
        let (up, down) = impairments(100.0);
        assert_eq!(up.rate_bps, 4_066_800);
        assert_eq!(up.delay_ns, 5_000_000);
        assert_eq!(up.loss, LossSpec::Bernoulli { loss_pct: 0.2, correlation_pct: 0.0 });
        assert_eq!(down.delay_ns, 6_000_000);
        assert_eq!(down.rate_bps, up.rate_bps);
        up.validate().unwrap();
        let (up0, down0) = impairments(0.0);
        assert!(up0.is_transparent());
        assert_eq!(down0.rate_bps, 54_000_000);
    }

    #[test]
    fn a_moving_station_gets_the_parameters_of_its_distance_now() {
        use crate::wifi::motion::Waypoint;
        let w = |t_s, x| Waypoint { t_s, position: [x, 0.0, 0.0] };
        let trajectory = Trajectory::new(vec![w(0.0, 10.0), w(9.0, 100.0)]).unwrap();
        let m = Moving { trajectory, ap: [0.0; 3], downlink: true, seed: Some(3), origin_ns: 1_000_000_000 };
        let (_, at_10) = impairments(10.0);
        assert_eq!(m.impairment_at(0), Impairment { seed: Some(3), ..at_10 });
        assert_eq!(m.impairment_at(1_000_000_000).rate_bps, 9_958_200);
        let far = m.impairment_at(60_000_000_000);
        assert_eq!((far.rate_bps, far.delay_ns), (4_066_800, 6_000_000));
    }
}
