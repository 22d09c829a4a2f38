//! Loss generators with netem's state machines, and the closed-form mean loss
//! and mean loss-burst length each one should produce (what the calibration and
//! the property tests compare against).
//!
//! Gilbert-Elliott follows tc-netem(8)'s documented meaning: `p` good→bad, `r`
//! bad→good, `1-h` loss probability in the bad state, `1-k` in the good one; a
//! packet's fate depends on the state it meets, then the chain moves. The
//! four-state model is the GI model of Salvo et al. as netem names it: 1 = gap,
//! received; 2 = burst, received; 3 = burst, lost; 4 = isolated loss in a gap;
//! a packet is lost when the chain moves into 3 or 4.

use crate::config::LossSpec;
use crate::random::{Correlated, Threshold};

/// The running state of one direction's loss generator.
#[derive(Clone, Debug)]
pub enum Loss {
    None,
    Bernoulli { p: Threshold, corr: Correlated },
    GilbertElliott { p: Threshold, r: Threshold, bad_loss: Threshold, good_loss: Threshold, bad: bool },
    FourState { p13: u64, p14: u64, p23: u64, p31: u64, p32: u64, state: u8 },
}

fn t(pct: f64) -> Threshold {
    Threshold::from_pct(pct)
}

/// A probability on the 2³² scale used to split one draw into ranges.
fn scale(pct: f64) -> u64 {
    ((pct / 100.0).clamp(0.0, 1.0) * 4_294_967_296.0).round() as u64
}

impl Loss {
    /// The generator for a spec; `first` seeds a correlation's memory as netem does.
    pub fn new(spec: &LossSpec, first: u32) -> Loss {
        match *spec {
            LossSpec::None => Loss::None,
            LossSpec::Bernoulli { loss_pct, correlation_pct } => {
                Loss::Bernoulli { p: t(loss_pct), corr: Correlated::new(correlation_pct, first) }
            }
            LossSpec::GilbertElliott { p_pct, r_pct, bad_loss_pct, good_loss_pct } => Loss::GilbertElliott {
                p: t(p_pct), r: t(r_pct), bad_loss: t(bad_loss_pct), good_loss: t(good_loss_pct), bad: false,
            },
            LossSpec::FourState { p13_pct, p31_pct, p32_pct, p23_pct, p14_pct } => Loss::FourState {
                p13: scale(p13_pct), p14: scale(p14_pct), p23: scale(p23_pct), p31: scale(p31_pct),
                p32: scale(p32_pct), state: 1,
            },
        }
    }

    /// Whether the next packet is lost; `draw` yields fresh uniform u32s.
    pub fn lose(&mut self, draw: &mut impl FnMut() -> u32) -> bool {
        match self {
            Loss::None => false,
            Loss::Bernoulli { p, corr } => p.hit(corr.next(draw())),
            Loss::GilbertElliott { p, r, bad_loss, good_loss, bad } => {
                let lost = if *bad { bad_loss.hit(draw()) } else { good_loss.hit(draw()) };
                let leave = if *bad { r.hit(draw()) } else { p.hit(draw()) };
                if leave {
                    *bad = !*bad;
                }
                lost
            }
            Loss::FourState { p13, p14, p23, p31, p32, state } => {
                let x = draw() as u64;
                *state = match *state {
                    1 if x < *p13 => 3,
                    1 if x < *p13 + *p14 => 4,
                    1 => 1,
                    2 if x < *p23 => 3,
                    2 => 2,
                    3 if x < *p31 => 1,
                    3 if x < *p31 + *p32 => 2,
                    3 => 3,
                    _ => 1,
                };
                *state >= 3
            }
        }
    }
}

/// Long-run loss probability and mean length of a run of consecutive losses
/// (lost packets / loss bursts), or None where no closed form applies (correlated
/// Bernoulli loss, or a model that never loses).
pub fn expected(spec: &LossSpec) -> Option<(f64, f64)> {
    let f = |pct: f64| (pct / 100.0).clamp(0.0, 1.0);
    match *spec {
        LossSpec::None => None,
        LossSpec::Bernoulli { loss_pct, correlation_pct } => {
            let p = f(loss_pct);
            (correlation_pct == 0.0 && p > 0.0 && p < 1.0).then(|| (p, 1.0 / (1.0 - p)))
        }
        LossSpec::GilbertElliott { p_pct, r_pct, bad_loss_pct, good_loss_pct } => {
            let (p, r, lb, lg) = (f(p_pct), f(r_pct), f(bad_loss_pct), f(good_loss_pct));
            if p + r == 0.0 {
                return None;
            }
            let (pg, pb) = (r / (p + r), p / (p + r));
            let loss = pg * lg + pb * lb;
            // A burst starts where a received packet is followed by a lost one.
            let starts = pg * (1.0 - lg) * ((1.0 - p) * lg + p * lb) + pb * (1.0 - lb) * (r * lg + (1.0 - r) * lb);
            (starts > 0.0).then(|| (loss, loss / starts))
        }
        LossSpec::FourState { p13_pct, p31_pct, p32_pct, p23_pct, p14_pct } => {
            let (p13, p31, p32, p23, p14) = (f(p13_pct), f(p31_pct), f(p32_pct), f(p23_pct), f(p14_pct));
            if p31 == 0.0 || (p32 > 0.0 && p23 == 0.0) {
                return None;   // an absorbing state: no stationary mix of gaps and bursts
            }
            // Balance: π3·p31 = π1·p13, π2·p23 = π3·p32, π4 = π1·p14.
            let pi3 = p13 / p31;
            let pi2 = if p32 > 0.0 { pi3 * p32 / p23 } else { 0.0 };
            let pi4 = p14;
            let total = 1.0 + pi2 + pi3 + pi4;
            let loss = (pi3 + pi4) / total;
            let starts = ((p13 + p14) + pi2 * p23) / total;
            (starts > 0.0).then(|| (loss, loss / starts))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(spec: &LossSpec, n: usize, seed: u64) -> (f64, f64) {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut model = Loss::new(spec, rng.u32(..));
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = model.lose(&mut || rng.u32(..));
            lost += l as u64;
            bursts += (l && !prev) as u64;
            prev = l;
        }
        (lost as f64 / n as f64, lost as f64 / bursts.max(1) as f64)
    }

    #[test]
    fn gilbert_elliott_matches_the_formula() {
        let spec = LossSpec::GilbertElliott { p_pct: 1.0, r_pct: 25.0, bad_loss_pct: 100.0, good_loss_pct: 0.0 };
        let (loss, burst) = expected(&spec).unwrap();
        assert!((loss - 0.01 / 0.26).abs() < 1e-12);
        assert!((burst - 4.0).abs() < 1e-9, "simple Gilbert: mean burst 1/r, got {burst}");
        let (l, b) = run(&spec, 2_000_000, 1);
        assert!((l - loss).abs() / loss < 0.03 && (b - burst).abs() / burst < 0.03, "{l} {b}");
    }

    #[test]
    fn four_state_matches_the_formula() {
        let spec = LossSpec::FourState { p13_pct: 2.0, p31_pct: 40.0, p32_pct: 20.0, p23_pct: 30.0, p14_pct: 1.0 };
        let (loss, burst) = expected(&spec).unwrap();
        let (l, b) = run(&spec, 2_000_000, 2);
        assert!((l - loss).abs() / loss < 0.03 && (b - burst).abs() / burst < 0.03, "{l} vs {loss}, {b} vs {burst}");
    }

    #[test]
    fn bernoulli_mean_and_runs() {
        let spec = LossSpec::Bernoulli { loss_pct: 10.0, correlation_pct: 0.0 };
        let (loss, burst) = expected(&spec).unwrap();
        assert!((loss - 0.1).abs() < 1e-12 && (burst - 1.0 / 0.9).abs() < 1e-12);
        let (l, b) = run(&spec, 1_000_000, 3);
        assert!((l - 0.1).abs() < 0.002 && (b - burst).abs() < 0.02);
        assert!(!Loss::new(&LossSpec::None, 0).lose(&mut || 0));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]

        /// Simulated mean loss and mean burst length within 10 % of the closed forms.
        #[test]
        fn markov_models_match_their_formulas(p in 0.5f64..5.0, r in 10.0f64..80.0, bad in 50.0f64..100.0,
                                              good in 0.0f64..0.5, p14 in 0.0f64..1.0, four in proptest::bool::ANY,
                                              seed in proptest::num::u64::ANY) {
            let spec = if four {
                LossSpec::FourState { p13_pct: p, p31_pct: r, p32_pct: (100.0 - r) * (100.0 - bad) / 100.0, p23_pct: r,
                                     p14_pct: p14 }
            } else {
                LossSpec::GilbertElliott { p_pct: p, r_pct: r, bad_loss_pct: bad, good_loss_pct: good }
            };
            let (loss, burst) = expected(&spec).unwrap();
            let (l, b) = run(&spec, 400_000, seed);
            proptest::prop_assert!((l - loss).abs() / loss < 0.1, "loss {} vs {}", l, loss);
            proptest::prop_assert!((b - burst).abs() / burst < 0.1, "burst {} vs {}", b, burst);
        }
    }
}
