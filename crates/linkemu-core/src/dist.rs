//! Delay distributions as netem defines them: `delay = mu + sigma × q(u)` where
//! `q` is the quantile function of a standardised distribution and `u` a
//! (possibly correlated) uniform.
//!
//! netem's non-uniform distributions are iproute2's tables (normal.c, pareto.c,
//! paretonormal.c): 4,096 quantiles scaled by 8,192 and clipped to an s16, i.e. to
//! ±4. The same quantile functions are computed here exactly, with the same
//! normalisation and clipping. netem indexes its table with the low bits of the
//! correlated draw, which loses the correlation; here the whole draw is used, so
//! `delay_correlation_pct` correlates every distribution.

use serde::Deserialize;
use statrs::function::erf::erfc_inv;

use crate::random::unit;

/// Largest table value netem can hold: 32767 / 8192.
pub const CLIP: f64 = 32767.0 / 8192.0;

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// netem's default: mu ± sigma, flat.
    #[default]
    Uniform,
    /// Standard normal: sigma is the standard deviation.
    Normal,
    /// Pareto with shape 3, shifted and scaled as iproute2's pareto.c: (x − 1.5) × 4/3.
    Pareto,
    /// iproute2's paretonormal.c: (normal + 3 × pareto) / 4 at the same quantile.
    Paretonormal,
}

fn normal_q(u: f64) -> f64 {
    // Φ⁻¹(u) = −√2 · erfc⁻¹(2u); u is in (0, 1) here.
    (-std::f64::consts::SQRT_2 * erfc_inv(2.0 * u)).clamp(-CLIP, CLIP)
}

fn pareto_q(u: f64) -> f64 {
    let x = (1.0 - u).powf(-1.0 / 3.0);
    ((x - 1.5) * 4.0 / 3.0).min(CLIP)
}

impl Distribution {
    /// The standardised quantile at u in [0, 1).
    pub fn quantile(self, u: f64) -> f64 {
        // Keep u away from 0 and 1 where the quantiles are infinite.
        let u = u.clamp(1e-12, 1.0 - 1e-12);
        match self {
            Distribution::Uniform => 2.0 * u - 1.0,
            Distribution::Normal => normal_q(u),
            Distribution::Pareto => pareto_q(u),
            Distribution::Paretonormal => (normal_q(u) + 3.0 * pareto_q(u)) / 4.0,
        }
    }

    /// netem's tabledist: mu + sigma × q(u) for a 32-bit draw, in ns, never below 0.
    pub fn delay_ns(self, mu_ns: u64, sigma_ns: u64, rnd: u32) -> u64 {
        if sigma_ns == 0 {
            return mu_ns;
        }
        let d = mu_ns as f64 + sigma_ns as f64 * self.quantile(unit(rnd));
        d.max(0.0).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean and standard deviation of q(U) by the midpoint rule over 1e6 quantiles.
    fn moments(d: Distribution) -> (f64, f64) {
        let n = 1_000_000;
        let (mut s, mut s2) = (0.0, 0.0);
        for i in 0..n {
            let x = d.quantile((i as f64 + 0.5) / n as f64);
            s += x;
            s2 += x * x;
        }
        let m = s / n as f64;
        (m, (s2 / n as f64 - m * m).sqrt())
    }

    #[test]
    fn standardised_moments() {
        let (m, sd) = moments(Distribution::Uniform);
        assert!(m.abs() < 1e-9 && (sd - 1.0 / 3f64.sqrt()).abs() < 1e-6);
        let (m, sd) = moments(Distribution::Normal);
        assert!(m.abs() < 1e-6 && (sd - 1.0).abs() < 1e-3, "{m} {sd}");
        // Pareto(1, 3) has mean 1.5 and sd √3/2, so (x − 1.5) × 4/3 would have sd 2/√3; netem's
        // table clips its heavy tail at 4, which leaves mean −0.033 and sd 0.821 (in units of sigma).
        let (m, sd) = moments(Distribution::Pareto);
        assert!((m + 0.0329).abs() < 1e-3 && (sd - 0.8209).abs() < 1e-3, "{m} {sd}");
    }

    #[test]
    fn matches_iproute2_table_points() {
        // pareto.c, first entry (i = 65536): (1 − 1.5) × 4/3 × 8192 = −5461.
        assert_eq!((Distribution::Pareto.quantile(0.0) * 8192.0).round(), -5461.0);
        // normal.c: the table's median is 0 and its 84.13 % point about +1 (8192).
        assert!(Distribution::Normal.quantile(0.5).abs() < 1e-9);
        assert!(((Distribution::Normal.quantile(0.841_344_7) * 8192.0) - 8192.0).abs() < 2.0);
        assert_eq!(Distribution::Normal.quantile(1e-15), -CLIP);
    }

    #[test]
    fn delay_never_negative_and_exact_without_jitter() {
        assert_eq!(Distribution::Normal.delay_ns(5_000, 0, 123), 5_000);
        assert_eq!(Distribution::Normal.delay_ns(1_000, 1_000_000, 0), 0);
        assert_eq!(Distribution::Uniform.delay_ns(10_000, 1_000, u32::MAX), 11_000);
    }
}
