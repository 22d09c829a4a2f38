//! Stations that move: a trajectory of waypoints (straight lines between them,
//! held at the last), and a station's radio path as a function of time, so the
//! medium can evaluate distance, SNR and rate at each attempt's start.
//!
//! Time is in seconds since the medium's motion clock started: when the
//! emulator starts, and again at every mark (SIGUSR1), which is how sdnbench
//! opens a trial's window. Every trial therefore replays the same movement from
//! its first waypoint, whatever ran on the network before it.
//!
//! ```json
//! {"link": "sta1-ap1", "station_end": "a",
//!  "waypoints": [{"t_s": 0, "position": [10, 0, 0]}, {"t_s": 20, "position": [150, 0, 0]}]}
//! ```

use serde::Deserialize;

use crate::wifi::dcf::Path;
use crate::wifi::phy::{best_rate, Propagation, Rate};

/// Where a station is `t_s` seconds after the motion clock started.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Waypoint {
    pub t_s: f64,
    pub position: [f64; 3],
}

/// Waypoints from t 0, strictly later one after another.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    points: Vec<Waypoint>,
}

impl Trajectory {
    /// Checks that the waypoints start at 0 s and move forward in time.
    pub fn new(points: Vec<Waypoint>) -> Result<Trajectory, String> {
        let first = points.first().ok_or("waypoints: none given")?;
        if first.t_s != 0.0 {
            return Err("waypoints: the first is where the station starts, t_s 0".into());
        }
        for (i, w) in points.iter().enumerate() {
            if !(w.t_s.is_finite() && w.position.iter().all(|x| x.is_finite())) {
                return Err(format!("waypoints[{i}]: not a finite time and position"));
            }
            if i > 0 && w.t_s <= points[i - 1].t_s {
                return Err(format!("waypoints[{i}]: t_s {} is not after the waypoint before", w.t_s));
            }
        }
        Ok(Trajectory { points })
    }

    /// The position at `t_s`: the first waypoint before 0, straight lines between waypoints, the last after it.
    pub fn position_at(&self, t_s: f64) -> [f64; 3] {
        let p = &self.points;
        let next = p.partition_point(|w| w.t_s <= t_s);
        if next == 0 {
            return p[0].position;
        }
        if next == p.len() {
            return p[p.len() - 1].position;
        }
        let (a, b) = (p[next - 1], p[next]);
        let f = (t_s - a.t_s) / (b.t_s - a.t_s);
        std::array::from_fn(|i| a.position[i] + f * (b.position[i] - a.position[i]))
    }

    /// The distance to `to` at `t_s`.
    pub fn distance_at(&self, t_s: f64, to: [f64; 3]) -> f64 {
        distance(self.position_at(t_s), to)
    }
}

/// Euclidean distance between two positions, m.
pub fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt()
}

/// What turns a distance into a station's [`Path`]: propagation, both transmitters, both gains, the rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Radios {
    pub propagation: Propagation,
    pub station_tx_dbm: f64,
    pub ap_tx_dbm: f64,
    /// Both antennas' gains together.
    pub gains_dbi: f64,
    /// A fixed rate, or None for the best rate of the mean SNR.
    pub fixed_rate: Option<Rate>,
}

impl Radios {
    /// The path both ways at `distance_m`.
    pub fn path(&self, distance_m: f64) -> Path {
        let up = self.propagation.snr_db(self.station_tx_dbm, self.gains_dbi, distance_m);
        let down = self.propagation.snr_db(self.ap_tx_dbm, self.gains_dbi, distance_m);
        let pick = |snr| self.fixed_rate.unwrap_or_else(|| best_rate(snr));
        Path { snr_up_db: up, snr_down_db: down, rate_up: pick(up), rate_down: pick(down) }
    }
}

/// A station's radio path over time: fixed, or following a trajectory around its AP.
#[derive(Clone, Debug, PartialEq)]
pub enum StationPath {
    Fixed(Path),
    Moving { trajectory: Trajectory, ap: [f64; 3], radios: Radios },
}

impl From<Path> for StationPath {
    fn from(p: Path) -> StationPath {
        StationPath::Fixed(p)
    }
}

impl StationPath {
    /// The path `t_ns` after the motion clock started.
    pub fn at(&self, t_ns: u64) -> Path {
        match self {
            StationPath::Fixed(p) => *p,
            StationPath::Moving { trajectory, ap, radios } => {
                radios.path(trajectory.distance_at(t_ns as f64 / 1e9, *ap))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(points: &[(f64, f64)]) -> Trajectory {
        Trajectory::new(points.iter().map(|&(t_s, x)| Waypoint { t_s, position: [x, 0.0, 0.0] }).collect()).unwrap()
    }

    #[test]
    fn positions_are_piecewise_linear_and_held_at_the_end() {
        let t = line(&[(0.0, 10.0), (10.0, 110.0), (20.0, 110.0), (30.0, 50.0)]);
        let x = |s| t.position_at(s)[0];
        assert_eq!((x(-1.0), x(0.0), x(2.5), x(10.0), x(15.0), x(25.0), x(30.0), x(99.0)),
                   (10.0, 10.0, 35.0, 110.0, 110.0, 80.0, 50.0, 50.0));
        assert_eq!(t.distance_at(0.0, [10.0, 30.0, 40.0]), 50.0);
    }

    #[test]
    fn refuses_waypoints_that_do_not_start_at_zero_or_go_back() {
        let w = |t_s| Waypoint { t_s, position: [0.0; 3] };
        assert!(Trajectory::new(vec![]).is_err());
        assert!(Trajectory::new(vec![w(1.0), w(2.0)]).unwrap_err().contains("t_s 0"));
        assert!(Trajectory::new(vec![w(0.0), w(2.0), w(2.0)]).unwrap_err().contains("waypoints[2]"));
        assert!(Trajectory::new(vec![w(0.0), w(f64::NAN)]).is_err());
    }

    #[test]
    fn a_moving_path_steps_its_best_rate_down_as_the_station_leaves() {
        let radios = Radios { propagation: Propagation::default(), station_tx_dbm: 14.0, ap_tx_dbm: 14.0,
                              gains_dbi: 10.0, fixed_rate: None };
        let p = StationPath::Moving { trajectory: line(&[(0.0, 10.0), (100.0, 110.0)]), ap: [0.0; 3], radios };
        // 1 m per second: 50 m at 40 s, 70 m at 60 s, 100 m at 90 s.
        let rate = |s: u64| p.at(s * 1_000_000_000).rate_up.mbps;
        assert_eq!([rate(40), rate(60), rate(90)], [54, 36, 24]);
        assert_eq!(StationPath::from(radios.path(70.0)).at(0), radios.path(70.0));
    }
}
