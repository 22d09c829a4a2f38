//! netem's random numbers: 32-bit uniforms, optionally correlated with the
//! previous one (`get_crandom` in sch_netem.c), and probabilities as 32-bit
//! thresholds so a percentage means exactly what it means to netem.

/// A probability as netem stores it: p × (2³² − 1), compared against a u32 draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Threshold(pub u32);

impl Threshold {
    /// From a percentage (0..=100).
    pub fn from_pct(pct: f64) -> Threshold {
        Threshold(((pct / 100.0).clamp(0.0, 1.0) * u32::MAX as f64).round() as u32)
    }

    /// True with this probability for a uniform draw: netem's `p && p >= rnd`.
    pub fn hit(self, rnd: u32) -> bool {
        self.0 != 0 && self.0 >= rnd
    }

    /// The probability as a fraction.
    pub fn fraction(self) -> f64 {
        self.0 as f64 / u32::MAX as f64
    }
}

/// A stream of uniforms where each leans on the last by `rho` (netem's crndstate):
/// `answer = (fresh × (2³² − rho') + last × rho') >> 32` with rho' = rho + 1.
#[derive(Clone, Debug)]
pub struct Correlated {
    rho: u32,
    last: u32,
}

impl Correlated {
    /// Correlation as a percentage (0 = independent draws).
    pub fn new(correlation_pct: f64, first: u32) -> Correlated {
        Correlated { rho: Threshold::from_pct(correlation_pct).0, last: first }
    }

    /// The next value, given a fresh uniform u32.
    pub fn next(&mut self, fresh: u32) -> u32 {
        if self.rho == 0 {
            return fresh;
        }
        let rho = self.rho as u64 + 1;
        let answer = ((fresh as u64 * ((1u64 << 32) - rho)) as u128 + self.last as u128 * rho as u128) >> 32;
        self.last = answer as u32;
        self.last
    }
}

/// A u32 as a fraction in [0, 1).
pub fn unit(x: u32) -> f64 {
    x as f64 / 4_294_967_296.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_match_netem_percent_scale() {
        assert_eq!(Threshold::from_pct(100.0).0, u32::MAX);
        assert_eq!(Threshold::from_pct(0.0).0, 0);
        assert!(!Threshold::from_pct(0.0).hit(0));
        assert!(Threshold::from_pct(100.0).hit(u32::MAX));
        assert!((Threshold::from_pct(1.0).fraction() - 0.01).abs() < 1e-9);
    }

    #[test]
    fn no_correlation_passes_draws_through() {
        let mut c = Correlated::new(0.0, 7);
        assert_eq!(c.next(12345), 12345);
    }

    #[test]
    fn full_correlation_sticks_to_the_last_value() {
        let mut c = Correlated::new(100.0, 1_000_000);
        for fresh in [0, u32::MAX, 42] {
            assert_eq!(c.next(fresh), 1_000_000);
        }
    }

    #[test]
    fn correlation_is_a_weighted_mean() {
        let mut c = Correlated::new(50.0, 0);
        let v = c.next(u32::MAX);
        assert!((unit(v) - 0.5).abs() < 1e-6, "{v}");
    }
}
