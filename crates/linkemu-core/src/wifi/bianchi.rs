//! Bianchi's saturation model of DCF (IEEE JSAC 18(3), 2000), the analytic
//! reference the medium is calibrated against: n stations that always have a
//! frame, an ideal channel, binary exponential backoff with W = CWmin + 1 and
//! m doublings (no retry limit).
//!
//! tau = 2 / (1 + W + p W Σ_{i<m} (2p)^i), p = 1 − (1 − tau)^(n−1);
//! S = Ps Ptr E[P] / [(1 − Ptr) σ + Ptr Ps Ts + Ptr (1 − Ps) Tc],
//! Ts = DATA + SIFS + ACK + DIFS, Tc = DATA + DIFS.
//!
//! [`per_station_mbps`] extends it to stations with different frame times (the
//! "performance anomaly"): every station has the same tau, so each succeeds in
//! a slot with the same probability tau (1 − tau)^(n−1), and the mean slot
//! weighs each station's own Ts; a collision costs the longest frame's Tc.

use crate::wifi::airtime::Timing;

/// Doublings of the contention window from CWmin to CWmax.
fn stages(t: &Timing) -> u32 {
    ((t.cw_max + 1) / (t.cw_min + 1)).ilog2()
}

/// Bianchi's fixed point: (tau, p) for `n` saturated stations.
pub fn tau(n: usize, t: &Timing) -> (f64, f64) {
    let w = (t.cw_min + 1) as f64;
    let m = stages(t) as i32;
    let g = |tau: f64| {
        let p = 1.0 - (1.0 - tau).powi(n as i32 - 1);
        let series: f64 = (0..m).map(|i| (2.0 * p).powi(i)).sum();
        (2.0 / (1.0 + w + p * w * series), p)
    };
    // tau − g(tau) grows with tau: bisect for its root.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid < g(mid).0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let tau = 0.5 * (lo + hi);
    (tau, g(tau).1)
}

/// Saturation goodput of each station, Mbit/s, given each one's data frame airtime
/// and ACK exchange (SIFS + ACK) in ns, for `payload_bytes` of goodput per frame.
pub fn per_station_mbps(t: &Timing, payload_bytes: usize, data_ns: &[u64], ack_exchange_ns: &[u64]) -> Vec<f64> {
    let n = data_ns.len();
    let (tau, _) = tau(n, t);
    let ptr = 1.0 - (1.0 - tau).powi(n as i32);
    let ps_each = tau * (1.0 - tau).powi(n as i32 - 1);
    let pc = ptr - n as f64 * ps_each;
    let tc = (*data_ns.iter().max().expect("one station at least") + t.difs_ns) as f64;
    let busy_success: f64 =
        data_ns.iter().zip(ack_exchange_ns).map(|(&d, &a)| ps_each * (d + a + t.difs_ns) as f64).sum();
    let mean_slot_ns = (1.0 - ptr) * t.slot_ns as f64 + busy_success + pc * tc;
    let bits = 8.0 * payload_bytes as f64;
    (0..n).map(|_| ps_each * bits / mean_slot_ns * 1e3).collect()
}

/// Total saturation goodput of `n` identical stations, Mbit/s.
pub fn saturation_mbps(t: &Timing, n: usize, payload_bytes: usize, data_ns: u64, ack_exchange_ns: u64) -> f64 {
    per_station_mbps(t, payload_bytes, &vec![data_ns; n], &vec![ack_exchange_ns; n]).iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::airtime::{msdu_of_udp, Slot};

    fn g54(n: usize) -> f64 {
        let t = Timing::g(Slot::Short);
        saturation_mbps(&t, n, 1024, t.data_ns(msdu_of_udp(1024), 54), t.ack_exchange_ns(54))
    }

    #[test]
    fn fixed_point_is_consistent() {
        let t = Timing::g(Slot::Short);
        assert_eq!(stages(&t), 6);
        let (tau1, p1) = tau(1, &t);
        assert!((tau1 - 2.0 / 17.0).abs() < 1e-12 && p1 == 0.0);
        let (tau5, p5) = tau(5, &t);
        assert!((p5 - (1.0 - (1.0 - tau5).powi(4))).abs() < 1e-12);
        assert!(tau5 < tau1);
    }

    #[test]
    fn reproduces_the_published_802_11g_figures() {
        // One station equals the closed form DIFS + 7.5 slots + DATA + SIFS + ACK.
        assert!((g54(1) - 8192.0 / 329.5).abs() < 1e-9);
        // The notes' 25.7 / 25.0 / 23.8 / 22.3 Mbit/s (N = 2 / 5 / 10 / 20), within 2 %.
        for (n, published) in [(2, 25.7), (5, 25.0), (10, 23.8), (20, 22.3)] {
            let s = g54(n);
            assert!((s / published - 1.0).abs() < 0.02, "N = {n}: {s:.2} Mbit/s vs {published}");
        }
    }
}
