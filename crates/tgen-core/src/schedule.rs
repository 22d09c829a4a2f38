//! Open-loop send schedules: they yield *intended* send offsets, independent of
//! how fast the sender really is, so lateness is measured instead of hidden.

/// A small, seedable PRNG (SplitMix64): reproducible runs without a crate dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Exponentially distributed with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -(1.0 - self.unit()).ln() * mean
    }
}

/// How inter-departure gaps are drawn while a flow is "on".
#[derive(Clone, Debug, PartialEq)]
pub enum Arrivals {
    /// Fixed gap of 1/rate: offsets are computed as i/rate, so no drift accumulates.
    Constant,
    /// Exponential gaps with mean 1/rate (Poisson arrivals).
    Poisson,
}

/// On/off modulation (bursts, VoIP silence suppression): periods in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct OnOff {
    pub on_ns: f64,
    pub off_ns: f64,
    /// Draw period lengths from exponential distributions with these means
    /// (ITU-T P.59 talk-spurt model) instead of using them as fixed lengths.
    pub exponential: bool,
}

/// An endless iterator of intended send offsets (ns from the flow start).
pub struct Schedule {
    arrivals: Arrivals,
    gap_ns: f64,
    onoff: Option<OnOff>,
    rng: Rng,
    index: u64,
    active_ns: f64,
    on_end: f64,
    paused_ns: f64,
}

impl Schedule {
    /// A schedule at `rate_pps` packets per second while on.
    pub fn new(arrivals: Arrivals, rate_pps: f64, onoff: Option<OnOff>, seed: u64) -> Schedule {
        let mut rng = Rng::new(seed);
        let on_end = match &onoff {
            Some(o) => period(&mut rng, o.on_ns, o.exponential),
            None => f64::INFINITY,
        };
        Schedule { arrivals, gap_ns: 1e9 / rate_pps, onoff, rng, index: 0, active_ns: 0.0, on_end, paused_ns: 0.0 }
    }

    /// Mean packets per second over a long run (on/off duty cycle included).
    pub fn mean_rate_pps(&self) -> f64 {
        let base = 1e9 / self.gap_ns;
        match &self.onoff {
            Some(o) => base * o.on_ns / (o.on_ns + o.off_ns),
            None => base,
        }
    }
}

fn period(rng: &mut Rng, mean: f64, exponential: bool) -> f64 {
    if exponential {
        rng.exp(mean)
    } else {
        mean
    }
}

impl Iterator for Schedule {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        // Time advances on the "active" clock; off periods are inserted as pauses.
        let active = match self.arrivals {
            Arrivals::Constant => self.index as f64 * self.gap_ns,
            Arrivals::Poisson => {
                if self.index > 0 {
                    self.active_ns += self.rng.exp(self.gap_ns);
                }
                self.active_ns
            }
        };
        self.index += 1;
        if let Some(o) = self.onoff.clone() {
            while active >= self.on_end {
                self.paused_ns += period(&mut self.rng, o.off_ns, o.exponential);
                self.on_end += period(&mut self.rng, o.on_ns, o.exponential).max(1.0);
            }
        }
        Some((active + self.paused_ns).round() as u64)
    }
}

/// Payload sizes per packet, in bytes (UDP payload, probe header included).
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    Constant(usize),
    /// Uniform over [min, max] inclusive.
    Uniform(usize, usize),
    /// Exponential with the given mean, clamped to [min, max].
    Exponential { mean: f64, min: usize, max: usize },
}

impl SizeDist {
    /// Draws one payload size.
    pub fn draw(&self, rng: &mut Rng) -> usize {
        match *self {
            SizeDist::Constant(n) => n,
            SizeDist::Uniform(a, b) => a + (rng.next_u64() % (b - a + 1) as u64) as usize,
            SizeDist::Exponential { mean, min, max } => (rng.exp(mean).round() as usize).clamp(min, max),
        }
    }

    /// The largest size this distribution can draw (buffer sizing).
    pub fn max(&self) -> usize {
        match *self {
            SizeDist::Constant(n) => n,
            SizeDist::Uniform(_, b) => b,
            SizeDist::Exponential { max, .. } => max,
        }
    }

    /// The smallest size this distribution can draw (validation against the header).
    pub fn min(&self) -> usize {
        match *self {
            SizeDist::Constant(n) => n,
            SizeDist::Uniform(a, _) => a,
            SizeDist::Exponential { min, .. } => min,
        }
    }

    /// Mean payload size (to turn a bit rate into a packet rate).
    pub fn mean(&self) -> f64 {
        match *self {
            SizeDist::Constant(n) => n as f64,
            SizeDist::Uniform(a, b) => (a + b) as f64 / 2.0,
            SizeDist::Exponential { mean, .. } => mean,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_has_no_drift() {
        let s: Vec<u64> = Schedule::new(Arrivals::Constant, 3.0, None, 1).take(4).collect();
        assert_eq!(s, vec![0, 333_333_333, 666_666_667, 1_000_000_000]);
        let last = Schedule::new(Arrivals::Constant, 1e6, None, 1).nth(10_000_000).unwrap();
        assert_eq!(last, 10_000_000_000);
    }

    #[test]
    fn poisson_mean_rate() {
        let n = 200_000;
        let last = Schedule::new(Arrivals::Poisson, 1000.0, None, 42).nth(n).unwrap();
        let rate = n as f64 / (last as f64 / 1e9);
        assert!((rate - 1000.0).abs() < 10.0, "rate {rate}");
    }

    #[test]
    fn fixed_onoff_gaps() {
        // 10 pps, on 1 s, off 2 s: packets at 0..0.9 s, then 3.0..3.9 s.
        let o = OnOff { on_ns: 1e9, off_ns: 2e9, exponential: false };
        let s: Vec<u64> = Schedule::new(Arrivals::Constant, 10.0, Some(o), 1).take(12).collect();
        assert_eq!(s[9], 900_000_000);
        assert_eq!(s[10], 3_000_000_000);
        assert_eq!(s[11], 3_100_000_000);
    }

    #[test]
    fn sizes_stay_in_range() {
        let mut rng = Rng::new(5);
        let d = SizeDist::Uniform(64, 70);
        let v: Vec<usize> = (0..1000).map(|_| d.draw(&mut rng)).collect();
        assert!(v.iter().all(|&x| (64..=70).contains(&x)));
        assert!(v.contains(&64) && v.contains(&70));
    }
}
