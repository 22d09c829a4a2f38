//! Open-loop schedules: stages of target request rates and the intended send
//! time of every request.
//!
//! The schedule is a rate function r(t) built from stages. Its integral
//! N(t) = ∫₀ᵗ r is the number of requests due by time t; request k (0-based)
//! is intended at the t where N(t) = k. Intended times depend only on the
//! schedule, never on how fast the server answers: that is what makes the
//! load open-loop and lets latency be measured from the intended time
//! (no coordinated omission).

use crate::units::{parse_duration_s, parse_rate};

/// One part of a load profile, in requests per second and seconds.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// The same rate for `secs` seconds.
    Constant { rps: f64, secs: f64 },
    /// A rate changing linearly from `from` to `to` over `secs` seconds.
    Ramp { from: f64, to: f64, secs: f64 },
}

impl Stage {
    /// Parses `const:RATE:DUR`, `ramp:FROM:TO:DUR` or `step:FROM:TO:STEP:EACH`.
    ///
    /// A step stage expands into constant stages FROM, FROM+STEP, … up to TO,
    /// each held for EACH; that is why this returns a list.
    pub fn parse(spec: &str) -> Result<Vec<Stage>, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        let bad = |what: &str| format!("stage '{spec}': {what}");
        match parts.as_slice() {
            ["const" | "constant" | "hold", rate, dur] => Ok(vec![Stage::Constant {
                rps: parse_rate(rate).map_err(|e| bad(&e))?,
                secs: parse_duration_s(dur).map_err(|e| bad(&e))?,
            }]),
            ["ramp", from, to, dur] => Ok(vec![Stage::Ramp {
                from: parse_rate(from).map_err(|e| bad(&e))?,
                to: parse_rate(to).map_err(|e| bad(&e))?,
                secs: parse_duration_s(dur).map_err(|e| bad(&e))?,
            }]),
            ["step", from, to, step, each] => {
                let (from, to) = (parse_rate(from).map_err(|e| bad(&e))?, parse_rate(to).map_err(|e| bad(&e))?);
                let step = parse_rate(step).map_err(|e| bad(&e))?;
                let each = parse_duration_s(each).map_err(|e| bad(&e))?;
                Self::steps(from, to, step, each).map_err(|e| bad(&e))
            }
            _ => Err(bad("expected const:RATE:DUR, ramp:FROM:TO:DUR or step:FROM:TO:STEP:EACH (e.g. ramp:0rps:1000rps:5m)")),
        }
    }

    /// Constant stages from `from` to `to` (inclusive) in increments of `step`.
    pub fn steps(from: f64, to: f64, step: f64, each: f64) -> Result<Vec<Stage>, String> {
        if step <= 0.0 {
            return Err("step must be positive".into());
        }
        let dir = if to >= from { 1.0 } else { -1.0 };
        let count = ((to - from).abs() / step + 1e-9).floor() as usize + 1;
        if count > 10_000 {
            return Err(format!("{count} steps is too many"));
        }
        Ok((0..count)
            .map(|i| Stage::Constant {
                rps: from + dir * step * i as f64,
                secs: each,
            })
            .collect())
    }

    fn secs(&self) -> f64 {
        match *self {
            Stage::Constant { secs, .. } | Stage::Ramp { secs, .. } => secs,
        }
    }

    fn rates(&self) -> (f64, f64) {
        match *self {
            Stage::Constant { rps, .. } => (rps, rps),
            Stage::Ramp { from, to, .. } => (from, to),
        }
    }
}

/// A stage placed on the time axis, with the requests due before it.
#[derive(Debug, Clone)]
struct Segment {
    start_s: f64,
    secs: f64,
    from: f64,
    to: f64,
    due_before: f64,
    due: f64,
}

impl Segment {
    /// Requests due `t` seconds into this segment: from·t + (to−from)·t²/(2·secs).
    fn due_at(&self, t: f64) -> f64 {
        let t = t.clamp(0.0, self.secs);
        self.from * t + (self.to - self.from) * t * t / (2.0 * self.secs)
    }

    /// Time into the segment at which `m` requests are due (inverse of `due_at`).
    ///
    /// Solves a·t² + b·t − m = 0 with a = (to−from)/(2·secs), b = from, in the
    /// form 2m / (b + √(b² + 4am)), which stays exact when a = 0 (constant
    /// rate) and does not cancel catastrophically when a is tiny.
    fn time_of(&self, m: f64) -> f64 {
        if m <= 0.0 {
            return 0.0;
        }
        let a = (self.to - self.from) / (2.0 * self.secs);
        let b = self.from;
        let disc = (b * b + 4.0 * a * m).max(0.0);
        let denom = b + disc.sqrt();
        if denom <= 0.0 {
            return self.secs;
        }
        (2.0 * m / denom).min(self.secs)
    }
}

/// A whole load profile: stages one after another.
#[derive(Debug, Clone)]
pub struct Schedule {
    segments: Vec<Segment>,
    duration_s: f64,
    total_due: f64,
}

impl Schedule {
    /// Places stages one after another; refuses empty or zero-length profiles.
    pub fn new(stages: &[Stage]) -> Result<Self, String> {
        let mut segments = Vec::new();
        let (mut start_s, mut due_before) = (0.0, 0.0);
        for st in stages {
            let secs = st.secs();
            let (from, to) = st.rates();
            if !(secs.is_finite() && from.is_finite() && to.is_finite()) || from < 0.0 || to < 0.0 {
                return Err(format!("invalid stage {st:?}"));
            }
            if secs <= 0.0 {
                continue;
            }
            let mut seg = Segment {
                start_s,
                secs,
                from,
                to,
                due_before,
                due: 0.0,
            };
            seg.due = seg.due_at(secs);
            start_s += secs;
            due_before += seg.due;
            segments.push(seg);
        }
        if segments.is_empty() {
            return Err("the schedule has no stage with a positive duration".into());
        }
        Ok(Schedule {
            segments,
            duration_s: start_s,
            total_due: due_before,
        })
    }

    /// Total length of the schedule in seconds.
    pub fn duration_s(&self) -> f64 {
        self.duration_s
    }

    /// Number of requests the schedule sends: every k with N(k's time) = k < N(end).
    pub fn total_requests(&self) -> u64 {
        // The epsilon keeps 1000 rps × 3 s at 3000 even when the float sum is 3000.0000000001.
        (self.total_due - 1e-6).ceil().max(0.0) as u64
    }

    /// Requests due by time `t` (the integral of the rate).
    pub fn due_at(&self, t: f64) -> f64 {
        let mut due = 0.0;
        for seg in &self.segments {
            if t <= seg.start_s {
                break;
            }
            due = seg.due_before + seg.due_at(t - seg.start_s);
        }
        due
    }

    /// Target rate at time `t` in requests per second (0 outside the schedule).
    pub fn rate_at(&self, t: f64) -> f64 {
        self.segments
            .iter()
            .find(|s| t >= s.start_s && t < s.start_s + s.secs)
            .map(|s| s.from + (s.to - s.from) * (t - s.start_s) / s.secs)
            .unwrap_or(0.0)
    }

    /// Intended send time of request `k`, in seconds from the start.
    pub fn intended_s(&self, k: u64) -> f64 {
        let kf = k as f64;
        let idx = self
            .segments
            .partition_point(|s| s.due_before + s.due <= kf);
        let seg = &self.segments[idx.min(self.segments.len() - 1)];
        seg.start_s + seg.time_of(kf - seg.due_before)
    }

    /// All intended send times in order.
    pub fn intended_times(&self) -> impl Iterator<Item = f64> + '_ {
        (0..self.total_requests()).map(move |k| self.intended_s(k))
    }

    /// How many requests are intended in each whole second [i, i+1).
    pub fn per_second_targets(&self) -> Vec<u64> {
        let mut out = vec![0u64; self.duration_s.ceil() as usize];
        for t in self.intended_times() {
            let i = (t.floor() as usize).min(out.len().saturating_sub(1));
            out[i] += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn constant_rate_times_are_evenly_spaced() {
        let s = Schedule::new(&[Stage::Constant {
            rps: 10.0,
            secs: 2.0,
        }])
        .unwrap();
        assert_eq!(s.total_requests(), 20);
        assert!(close(s.intended_s(0), 0.0));
        assert!(close(s.intended_s(1), 0.1));
        assert!(close(s.intended_s(19), 1.9));
        assert_eq!(s.per_second_targets(), vec![10, 10]);
    }

    #[test]
    fn linear_ramp_follows_the_integral() {
        // 0 → 1000 rps over 10 s: N(t) = 50 t², 5000 requests in all.
        let s = Schedule::new(&[Stage::Ramp {
            from: 0.0,
            to: 1000.0,
            secs: 10.0,
        }])
        .unwrap();
        assert_eq!(s.total_requests(), 5000);
        // Request k is due when 50 t² = k  →  t = sqrt(k / 50).
        for k in [1u64, 50, 200, 1250, 4999] {
            assert!(close(s.intended_s(k), (k as f64 / 50.0).sqrt()), "k={k}");
        }
        // Second i holds 50((i+1)² − i²) = 50(2i+1) requests.
        let per = s.per_second_targets();
        for (i, n) in per.iter().enumerate() {
            assert_eq!(*n, 50 * (2 * i as u64 + 1), "second {i}");
        }
        assert!(close(s.rate_at(5.0), 500.0));
    }

    #[test]
    fn ramp_then_hold_continues_where_the_ramp_ended() {
        let s = Schedule::new(&[
            Stage::Ramp {
                from: 0.0,
                to: 100.0,
                secs: 2.0,
            },
            Stage::Constant {
                rps: 100.0,
                secs: 1.0,
            },
        ])
        .unwrap();
        // Ramp: 100 requests; hold: 100 more, 10 ms apart, starting at 2 s.
        assert_eq!(s.total_requests(), 200);
        assert!(close(s.intended_s(100), 2.0));
        assert!(close(s.intended_s(150), 2.5));
        let times: Vec<f64> = s.intended_times().collect();
        assert!(
            times.windows(2).all(|w| w[1] >= w[0]),
            "times must not go backwards"
        );
    }

    #[test]
    fn ramp_down_and_fractional_totals() {
        let s = Schedule::new(&[Stage::Ramp {
            from: 30.0,
            to: 10.0,
            secs: 1.0,
        }])
        .unwrap();
        // N(1) = 30 − 10 = 20; N(t) = 30t − 10t² → k=11 at t = (30 − sqrt(900 − 440)) / 20.
        assert_eq!(s.total_requests(), 20);
        assert!(close(
            s.intended_s(11),
            (30.0 - (900.0f64 - 440.0).sqrt()) / 20.0
        ));
        let odd = Schedule::new(&[Stage::Constant {
            rps: 2.5,
            secs: 1.0,
        }])
        .unwrap();
        assert_eq!(odd.total_requests(), 3); // k = 0, 1, 2 are due before N = 2.5
    }

    #[test]
    fn steps_expand_into_holds() {
        let st = Stage::parse("step:100rps:300rps:100rps:2s").unwrap();
        assert_eq!(st.len(), 3);
        let s = Schedule::new(&st).unwrap();
        assert_eq!(s.total_requests(), 200 + 400 + 600);
        assert_eq!(s.per_second_targets(), vec![100, 100, 200, 200, 300, 300]);
    }

    #[test]
    fn parse_rejects_missing_units_and_unknown_kinds() {
        assert!(Stage::parse("ramp:0:1000rps:5m").is_err());
        assert!(Stage::parse("sine:1rps:2rps").is_err());
        assert_eq!(
            Stage::parse("ramp:0rps:1krps:5m").unwrap(),
            vec![Stage::Ramp {
                from: 0.0,
                to: 1000.0,
                secs: 300.0
            }]
        );
        assert!(Schedule::new(&[]).is_err());
    }

    #[test]
    fn pauses_send_nothing() {
        let s = Schedule::new(&[
            Stage::Constant {
                rps: 10.0,
                secs: 1.0,
            },
            Stage::Constant {
                rps: 0.0,
                secs: 1.0,
            },
            Stage::Constant {
                rps: 10.0,
                secs: 1.0,
            },
        ])
        .unwrap();
        assert_eq!(s.per_second_targets(), vec![10, 0, 10]);
        assert!(close(s.intended_s(10), 2.0));
    }
}
