//! The impairment of one link direction, as sdnbench writes it in the emulator's
//! configuration file. Names follow tc-netem(8) with units in the key names
//! (`delay_ns`, `loss_pct`, `rate_bps`); every field is optional.

use serde::Deserialize;

use crate::dist::Distribution;

/// netem's default queue limit, in packets (`limit 1000`).
pub const NETEM_DEFAULT_LIMIT_PKTS: u64 = 1000;

/// How packets are lost: netem's `loss random | gemodel | state`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    /// No loss.
    #[default]
    None,
    /// Independent loss with probability `loss_pct` (netem `loss random P [CORR]`).
    Bernoulli {
        loss_pct: f64,
        #[serde(default)]
        correlation_pct: f64,
    },
    /// Two-state Gilbert-Elliott (netem `loss gemodel p r 1-h 1-k`): `p_pct` good→bad,
    /// `r_pct` bad→good, `bad_loss_pct` (1-h) loss in the bad state, `good_loss_pct`
    /// (1-k) loss in the good state.
    GilbertElliott {
        p_pct: f64,
        #[serde(default = "hundred")]
        r_pct: f64,
        #[serde(default = "hundred")]
        bad_loss_pct: f64,
        #[serde(default)]
        good_loss_pct: f64,
    },
    /// Four-state Markov model (netem `loss state p13 p31 p32 p23 p14`).
    FourState {
        p13_pct: f64,
        #[serde(default = "hundred")]
        p31_pct: f64,
        #[serde(default)]
        p32_pct: f64,
        #[serde(default = "hundred")]
        p23_pct: f64,
        #[serde(default)]
        p14_pct: f64,
    },
}

fn hundred() -> f64 {
    100.0
}

/// One direction of one link.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Impairment {
    /// Mean added delay (netem's `delay TIME`).
    pub delay_ns: u64,
    /// Spread of the delay (netem's `delay TIME JITTER`): half-width for uniform,
    /// standard deviation for normal; the scale of the table for pareto/paretonormal.
    pub jitter_ns: u64,
    pub delay_distribution: Distribution,
    /// Correlation of successive delays (netem's third `delay` argument).
    pub delay_correlation_pct: f64,
    /// Keep packets in order although jitter would reorder them: a packet never
    /// leaves before the one ahead of it (t = max(t, t_last)). netem reorders.
    pub keep_order: bool,
    /// netem's `reorder P [CORR] gap G`: packets sent at once, ahead of delayed ones.
    pub reorder_pct: f64,
    pub reorder_correlation_pct: f64,
    pub reorder_gap: u32,
    pub loss: LossSpec,
    pub duplicate_pct: f64,
    pub duplicate_correlation_pct: f64,
    pub corrupt_pct: f64,
    pub corrupt_correlation_pct: f64,
    /// Serialisation rate of the link in bit/s (netem's `rate`); 0 = none.
    pub rate_bps: u64,
    /// Bytes added to every frame's length for the rate (netem's packet overhead; may be negative).
    pub overhead_bytes: i64,
    /// Packets held in this direction at most (netem's `limit`).
    pub limit_pkts: u64,
    /// Bytes held in this direction at most; 0 = no byte limit.
    pub limit_bytes: u64,
    /// Seed of this direction's random numbers (reproducible runs); None = from the clock.
    pub seed: Option<u64>,
}

impl Default for Impairment {
    fn default() -> Self {
        Impairment {
            delay_ns: 0,
            jitter_ns: 0,
            delay_distribution: Distribution::Uniform,
            delay_correlation_pct: 0.0,
            keep_order: false,
            reorder_pct: 0.0,
            reorder_correlation_pct: 0.0,
            reorder_gap: 0,
            loss: LossSpec::None,
            duplicate_pct: 0.0,
            duplicate_correlation_pct: 0.0,
            corrupt_pct: 0.0,
            corrupt_correlation_pct: 0.0,
            rate_bps: 0,
            overhead_bytes: 0,
            limit_pkts: NETEM_DEFAULT_LIMIT_PKTS,
            limit_bytes: 0,
            seed: None,
        }
    }
}

fn check_pct(name: &str, v: f64) -> Result<(), String> {
    if (0.0..=100.0).contains(&v) {
        Ok(())
    } else {
        Err(format!("{name} must be within 0..100, got {v}"))
    }
}

impl Impairment {
    /// Refuses values netem would refuse, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("delay_correlation_pct", self.delay_correlation_pct),
            ("reorder_pct", self.reorder_pct),
            ("reorder_correlation_pct", self.reorder_correlation_pct),
            ("duplicate_pct", self.duplicate_pct),
            ("duplicate_correlation_pct", self.duplicate_correlation_pct),
            ("corrupt_pct", self.corrupt_pct),
            ("corrupt_correlation_pct", self.corrupt_correlation_pct),
        ] {
            check_pct(name, v)?;
        }
        match &self.loss {
            LossSpec::None => {}
            LossSpec::Bernoulli { loss_pct, correlation_pct } => {
                check_pct("loss.loss_pct", *loss_pct)?;
                check_pct("loss.correlation_pct", *correlation_pct)?;
            }
            LossSpec::GilbertElliott { p_pct, r_pct, bad_loss_pct, good_loss_pct } => {
                for (n, v) in [("p_pct", p_pct), ("r_pct", r_pct), ("bad_loss_pct", bad_loss_pct),
                               ("good_loss_pct", good_loss_pct)] {
                    check_pct(&format!("loss.{n}"), *v)?;
                }
            }
            LossSpec::FourState { p13_pct, p31_pct, p32_pct, p23_pct, p14_pct } => {
                for (n, v) in [("p13_pct", p13_pct), ("p31_pct", p31_pct), ("p32_pct", p32_pct),
                               ("p23_pct", p23_pct), ("p14_pct", p14_pct)] {
                    check_pct(&format!("loss.{n}"), *v)?;
                }
                if p13_pct + p14_pct > 100.0 {
                    return Err("loss.p13_pct + loss.p14_pct must not exceed 100".into());
                }
                if p31_pct + p32_pct > 100.0 {
                    return Err("loss.p31_pct + loss.p32_pct must not exceed 100".into());
                }
            }
        }
        if self.reorder_pct > 0.0 && self.delay_ns == 0 {
            // tc refuses it too: without a delay there is nothing to overtake.
            return Err("reorder_pct needs a delay_ns".into());
        }
        if self.keep_order && self.reorder_pct > 0.0 {
            return Err("keep_order and reorder_pct contradict each other".into());
        }
        if self.limit_pkts == 0 {
            return Err("limit_pkts must be at least 1".into());
        }
        Ok(())
    }

    /// netem's reorder gap: 1 when reordering is asked without a gap (as tc sets it).
    pub fn effective_gap(&self) -> u32 {
        if self.reorder_pct > 0.0 { self.reorder_gap.max(1) } else { 0 }
    }

    /// True when this direction changes nothing but still has to pass frames on.
    pub fn is_transparent(&self) -> bool {
        let d = Impairment { seed: self.seed, ..Impairment::default() };
        *self == d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_netem_like_keys_and_defaults() {
        let j = r#"{"delay_ns": 5000000, "jitter_ns": 100000, "delay_distribution": "normal",
                    "loss": {"model": "gilbert_elliott", "p_pct": 1, "r_pct": 25}}"#;
        let c: Impairment = serde_json::from_str(j).unwrap();
        assert_eq!(c.delay_ns, 5_000_000);
        assert_eq!(c.delay_distribution, Distribution::Normal);
        assert_eq!(c.loss, LossSpec::GilbertElliott { p_pct: 1.0, r_pct: 25.0, bad_loss_pct: 100.0,
                                                      good_loss_pct: 0.0 });
        assert_eq!(c.limit_pkts, NETEM_DEFAULT_LIMIT_PKTS);
        c.validate().unwrap();
    }

    #[test]
    fn refuses_unknown_keys_and_bad_values() {
        assert!(serde_json::from_str::<Impairment>(r#"{"delay": 5}"#).is_err());
        let c = Impairment { duplicate_pct: 120.0, ..Impairment::default() };
        assert!(c.validate().unwrap_err().contains("duplicate_pct"));
        let c = Impairment { reorder_pct: 10.0, ..Impairment::default() };
        assert!(c.validate().unwrap_err().contains("needs a delay"));
    }

    #[test]
    fn gap_defaults_to_one_with_reordering() {
        let c = Impairment { reorder_pct: 10.0, delay_ns: 1, ..Impairment::default() };
        assert_eq!(c.effective_gap(), 1);
        assert_eq!(Impairment::default().effective_gap(), 0);
        assert!(Impairment { seed: Some(3), ..Impairment::default() }.is_transparent());
    }
}
