//! One wireless cell as the emulator's configuration names it: an access point,
//! the links of its stations, where each station is, its radio, and how the
//! cell is modelled (`dcf`: one shared medium; `compat`: Mininet-WiFi's netem
//! parameters per link). Turns into a [`Medium`] or into link impairments.
//! A station stands at `distance_m` or `position`, or moves along `waypoints`
//! ([`motion`](crate::wifi::motion); then the AP needs a position too).
//!
//! ```json
//! {"name": "ap1", "model": "dcf", "slot": "short", "ap": {"tx_power_dbm": 14, "gain_dbi": 5, "position": [0, 0, 0]},
//!  "stations": [{"link": "sta1-ap1", "station_end": "a", "distance_m": 10, "rate": "best"},
//!               {"link": "sta2-ap1", "station_end": "a",
//!                "waypoints": [{"t_s": 0, "position": [10, 0, 0]}, {"t_s": 20, "position": [150, 0, 0]}]}]}
//! ```

use serde::Deserialize;

use crate::config::NETEM_DEFAULT_LIMIT_PKTS;
use crate::wifi::airtime::{Slot, Timing};
use crate::wifi::dcf::{Medium, Params, Path};
use crate::wifi::motion::{distance, Radios, StationPath, Trajectory, Waypoint};
use crate::wifi::phy::{Propagation, RateChoice};

/// The 802.11 amendment; only g (ERP-OFDM, 2.4 GHz) so far.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
pub enum Standard {
    #[default]
    #[serde(rename = "g")]
    G,
}

/// How the cell is emulated.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// One medium shared with DCF contention.
    #[default]
    Dcf,
    /// Mininet-WiFi without wmediumd: netem parameters from the distance alone.
    Compat,
}

/// A transmitter: power, antenna gain and, optionally, where it stands (m).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Radio {
    pub tx_power_dbm: f64,
    pub gain_dbi: f64,
    pub position: Option<[f64; 3]>,
}

/// Mininet-WiFi's defaults: 14 dBm, 5 dBi.
impl Default for Radio {
    fn default() -> Self {
        Radio { tx_power_dbm: 14.0, gain_dbi: 5.0, position: None }
    }
}

/// Which end of its link the station is on.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum End {
    A,
    B,
}

/// One station of the cell: its link to the AP, its place and its radio.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StationSpec {
    pub link: String,
    pub station_end: End,
    /// Distance to the AP, or `position` (with the AP's), or `waypoints` (with the AP's position).
    pub distance_m: Option<f64>,
    pub position: Option<[f64; 3]>,
    pub waypoints: Option<Vec<Waypoint>>,
    #[serde(default = "default_power")]
    pub tx_power_dbm: f64,
    #[serde(default = "default_gain")]
    pub gain_dbi: f64,
    #[serde(default)]
    pub rate: RateChoice,
}

fn default_power() -> f64 {
    Radio::default().tx_power_dbm
}

fn default_gain() -> f64 {
    Radio::default().gain_dbi
}

/// A cell: an AP and the stations that share its medium.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CellSpec {
    pub name: String,
    #[serde(default)]
    pub standard: Standard,
    #[serde(default)]
    pub model: Model,
    #[serde(default)]
    pub slot: Slot,
    #[serde(default)]
    pub propagation: Propagation,
    #[serde(default)]
    pub ap: Radio,
    /// Frames each contender holds (the AP's queue serves all its stations).
    #[serde(default = "default_queue")]
    pub queue_pkts: usize,
    /// Seed of the medium's random numbers; None: derived from the run's.
    pub seed: Option<u64>,
    pub stations: Vec<StationSpec>,
}

fn default_queue() -> usize {
    NETEM_DEFAULT_LIMIT_PKTS as usize
}

impl CellSpec {
    /// Refuses what cannot be emulated, naming the station.
    pub fn validate(&self) -> Result<(), String> {
        if self.stations.is_empty() {
            return Err("no stations".into());
        }
        if self.queue_pkts == 0 {
            return Err("queue_pkts must be at least 1".into());
        }
        for s in &self.stations {
            let d = self.distance_m(s).map_err(|e| format!("station on {}: {e}", s.link))?;
            if !(d.is_finite() && d >= 0.0) {
                return Err(format!("station on {}: distance {d} m is not a distance", s.link));
            }
            self.trajectory(s).map_err(|e| format!("station on {}: {e}", s.link))?;
            if self.model == Model::Dcf {
                s.rate.pick(0.0).map_err(|e| format!("station on {}: {e}", s.link))?;
            }
        }
        Ok(())
    }

    /// Distance from the AP to a station where it starts: given, between the two positions, or to the first waypoint.
    pub fn distance_m(&self, s: &StationSpec) -> Result<f64, String> {
        let given = [s.distance_m.is_some(), s.position.is_some(), s.waypoints.is_some()];
        if given.iter().filter(|&&g| g).count() > 1 {
            return Err("give one of distance_m, position and waypoints, not both".into());
        }
        let start = s.waypoints.as_ref().and_then(|w| w.first()).map(|w| w.position);
        match (s.distance_m, s.position.or(start), self.ap.position) {
            (Some(d), None, _) => Ok(d),
            (None, Some(p), Some(q)) => Ok(distance(p, q)),
            (None, Some(_), None) => Err("a position or waypoints need the AP's position".into()),
            _ => Err("needs distance_m, position or waypoints".into()),
        }
    }

    /// A moving station's checked trajectory and the AP's position; None for a station standing still.
    pub fn trajectory(&self, s: &StationSpec) -> Result<Option<(Trajectory, [f64; 3])>, String> {
        let Some(w) = &s.waypoints else { return Ok(None) };
        let ap = self.ap.position.ok_or("waypoints need the AP's position")?;
        Ok(Some((Trajectory::new(w.clone())?, ap)))
    }

    /// What turns a station's distance into its path.
    pub fn radios(&self, s: &StationSpec) -> Result<Radios, String> {
        let fixed_rate = match s.rate {
            RateChoice::Best => None,
            fixed => Some(fixed.pick(0.0)?),
        };
        Ok(Radios { propagation: self.propagation, station_tx_dbm: s.tx_power_dbm, ap_tx_dbm: self.ap.tx_power_dbm,
                    gains_dbi: s.gain_dbi + self.ap.gain_dbi, fixed_rate })
    }

    /// A station's radio path both ways where it starts: mean SNR from both antennas' gains, and its rate.
    pub fn path(&self, s: &StationSpec) -> Result<Path, String> {
        Ok(self.radios(s)?.path(self.distance_m(s)?))
    }

    /// A station's radio path over time: fixed, or following its waypoints.
    pub fn station_path(&self, s: &StationSpec) -> Result<StationPath, String> {
        Ok(match self.trajectory(s)? {
            Some((trajectory, ap)) => StationPath::Moving { trajectory, ap, radios: self.radios(s)? },
            None => StationPath::Fixed(self.path(s)?),
        })
    }

    /// The shared medium of a `dcf` cell at `now_ns`; `fallback_seed` when the cell has none.
    pub fn medium<T>(&self, fallback_seed: u64, now_ns: u64) -> Result<Medium<T>, String> {
        let paths = self.stations.iter().map(|s| self.station_path(s)).collect::<Result<Vec<_>, _>>()?;
        let params = Params {
            queue_pkts: self.queue_pkts,
            shadowing_sigma_db: self.propagation.shadowing_sigma_db,
            seed: self.seed.unwrap_or(fallback_seed),
        };
        Ok(Medium::new(Timing::g(self.slot), paths, params, now_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(stations: &str) -> Result<CellSpec, String> {
        let text = format!(r#"{{"name": "ap1", "ap": {{"position": [0, 0, 0]}}, "stations": [{stations}]}}"#);
        let c: CellSpec = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        c.validate()?;
        Ok(c)
    }

    #[test]
    fn reads_a_cell_with_defaults() {
        let c = cell(r#"{"link": "l1", "station_end": "a", "distance_m": 70},
                        {"link": "l2", "station_end": "b", "position": [30, 40, 0], "rate": 12, "tx_power_dbm": 20}"#)
            .unwrap();
        assert_eq!((c.model, c.slot, c.queue_pkts), (Model::Dcf, Slot::Short, 1000));
        let p = c.path(&c.stations[0]).unwrap();
        assert_eq!((p.rate_up.mbps, p.rate_down.mbps), (36, 36));
        assert_eq!(c.distance_m(&c.stations[1]).unwrap(), 50.0);
        let p = c.path(&c.stations[1]).unwrap();
        assert_eq!(p.rate_up.mbps, 12);
        assert!((p.snr_up_db - p.snr_down_db - 6.0).abs() < 1e-9);
        let m: Medium<()> = c.medium(1, 0).unwrap();
        assert_eq!(m.stations(), 2);
    }

    #[test]
    fn refuses_what_it_cannot_place_or_send() {
        let both = cell(r#"{"link": "l", "station_end": "a", "distance_m": 5, "position": [1, 0, 0]}"#);
        assert!(both.unwrap_err().contains("not both"));
        assert!(cell(r#"{"link": "l", "station_end": "a"}"#).unwrap_err().contains("distance_m, position or waypoints"));
        let rate = cell(r#"{"link": "l", "station_end": "a", "distance_m": 5, "rate": 11}"#);
        assert!(rate.unwrap_err().contains("11 Mbit/s"));
        assert!(cell(r#"{"link": "l", "station_end": "c", "distance_m": 5}"#).is_err());
        assert!(cell(r#"{"link": "l", "station_end": "a", "distance_m": 5, "speed": 1}"#).is_err());
    }

    #[test]
    fn reads_a_moving_station_and_refuses_waypoints_it_cannot_follow() {
        let c = cell(r#"{"link": "l1", "station_end": "a", "distance_m": 70},
                        {"link": "l2", "station_end": "a",
                         "waypoints": [{"t_s": 0, "position": [30, 40, 0]}, {"t_s": 10, "position": [100, 0, 0]}]}"#)
            .unwrap();
        assert_eq!(c.distance_m(&c.stations[1]).unwrap(), 50.0);
        assert!(matches!(c.station_path(&c.stations[0]).unwrap(), StationPath::Fixed(_)));
        let moving = c.station_path(&c.stations[1]).unwrap();
        assert_eq!(moving.at(0), c.path(&c.stations[1]).unwrap());
        assert_eq!(moving.at(10_000_000_000).rate_up.mbps, 24);
        let w = |t: &str| format!(r#"{{"link": "l", "station_end": "a", "waypoints": [{t}]}}"#);
        assert!(cell(&w(r#"{"t_s": 1, "position": [1, 0, 0]}"#)).unwrap_err().contains("t_s 0"));
        let both = r#"{"link": "l", "station_end": "a", "position": [1, 0, 0], "waypoints": [{"t_s": 0, "position": [1, 0, 0]}]}"#;
        assert!(cell(both).unwrap_err().contains("not both"));
        let no_ap = r#"{"name": "ap1", "stations": [{"link": "l", "station_end": "a", "waypoints": [{"t_s": 0, "position": [1, 0, 0]}]}]}"#;
        let c: CellSpec = serde_json::from_str(no_ap).unwrap();
        assert!(c.validate().unwrap_err().contains("AP's position"));
    }
}
