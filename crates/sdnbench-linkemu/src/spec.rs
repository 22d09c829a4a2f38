//! The emulator's configuration file: every link of a network, each between two
//! interfaces, with one impairment per direction, and the wireless cells
//! (`media`) whose station links share a medium instead.
//!
//! ```json
//! {"links": [{"name": "s1-s2", "a": "lk1a", "b": "lk1b",
//!             "a_to_b": {"delay_ns": 5000000}, "b_to_a": {"delay_ns": 5000000}},
//!            {"name": "sta1-ap1", "a": "lk2a", "b": "lk2b"}],
//!  "media": [{"name": "ap1", "model": "dcf",
//!             "stations": [{"link": "sta1-ap1", "station_end": "a", "distance_m": 10}]}]}
//! ```
//!
//! A link of a `dcf` cell takes no impairment of its own: the medium delays and
//! loses its frames. A `compat` cell writes Mininet-WiFi's parameters into its
//! links' impairments (those of a moving station's start; [`Spec::compat_motions`]
//! follows it).

use std::collections::HashSet;
use std::path::Path;

use linkemu_core::wifi::cell::{End, Model};
use linkemu_core::wifi::compat::Moving;
use linkemu_core::wifi::{compat, CellSpec};
use linkemu_core::Impairment;
use serde::Deserialize;

/// One link: frames arriving on `a` leave on `b` after `a_to_b`, and back.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    pub a: String,
    pub b: String,
    #[serde(default)]
    pub a_to_b: Impairment,
    #[serde(default)]
    pub b_to_a: Impairment,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub links: Vec<LinkSpec>,
    #[serde(default)]
    pub media: Vec<CellSpec>,
}

impl Spec {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<Spec, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Spec::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses and checks configuration text.
    pub fn parse(text: &str) -> Result<Spec, String> {
        let mut spec: Spec = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if spec.links.is_empty() {
            return Err("no links".into());
        }
        let mut names = HashSet::new();
        let mut ifaces = HashSet::new();
        for l in &spec.links {
            if !names.insert(&l.name) {
                return Err(format!("link {} given twice", l.name));
            }
            for i in [&l.a, &l.b] {
                if i.is_empty() || i.len() >= libc::IFNAMSIZ {
                    return Err(format!("link {}: interface name {i:?} is not a valid name", l.name));
                }
                if !ifaces.insert(i) {
                    return Err(format!("link {}: interface {i} is used twice", l.name));
                }
            }
            l.a_to_b.validate().map_err(|e| format!("link {} a_to_b: {e}", l.name))?;
            l.b_to_a.validate().map_err(|e| format!("link {} b_to_a: {e}", l.name))?;
        }
        spec.place_stations()?;
        Ok(spec)
    }

    /// The index of the link named `name`.
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    /// For each link direction (2 i: a>b, 2 i + 1: b>a), a moving `compat` station's changing parameters,
    /// on a motion clock started at `now_ns`.
    pub fn compat_motions(&self, now_ns: u64) -> Vec<Option<Moving>> {
        let mut out = vec![None; 2 * self.links.len()];
        for c in self.media.iter().filter(|c| c.model == Model::Compat) {
            for s in &c.stations {
                // Checked by parse(): the link exists and the trajectory is valid.
                let (Some(i), Ok(Some((trajectory, ap)))) = (self.link_index(&s.link), c.trajectory(s)) else {
                    continue;
                };
                let l = &self.links[i];
                for (d, seed, from_station) in [(2 * i, l.a_to_b.seed, s.station_end == End::A),
                                                (2 * i + 1, l.b_to_a.seed, s.station_end == End::B)] {
                    out[d] = Some(Moving { trajectory: trajectory.clone(), ap, downlink: !from_station, seed,
                                           origin_ns: now_ns });
                }
            }
        }
        out
    }

    /// Checks every cell and ties each station to its link; `compat` cells set their links' impairments.
    fn place_stations(&mut self) -> Result<(), String> {
        let mut cells = HashSet::new();
        let mut placed = HashSet::new();
        for c in &self.media {
            if !cells.insert(&c.name) {
                return Err(format!("medium {} given twice", c.name));
            }
            c.validate().map_err(|e| format!("medium {}: {e}", c.name))?;
            for s in &c.stations {
                let i = self.link_index(&s.link)
                    .ok_or_else(|| format!("medium {}: no link {}", c.name, s.link))?;
                if !placed.insert(i) {
                    return Err(format!("medium {}: link {} has a station already", c.name, s.link));
                }
                let l = &mut self.links[i];
                if !(l.a_to_b.is_transparent() && l.b_to_a.is_transparent()) {
                    return Err(format!("link {} is on medium {}: it takes no impairment of its own", l.name, c.name));
                }
                if c.model == Model::Compat {
                    let (up, down) = compat::impairments(c.distance_m(s)?);
                    let (ab, ba) = match s.station_end {
                        End::A => (up, down),
                        End::B => (down, up),
                    };
                    l.a_to_b = Impairment { seed: l.a_to_b.seed, ..ab };
                    l.b_to_a = Impairment { seed: l.b_to_a.seed, ..ba };
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks() {
        let s = Spec::parse(r#"{"links": [{"name": "l", "a": "x0", "b": "x1", "a_to_b": {"delay_ns": 5}}]}"#).unwrap();
        assert_eq!(s.links[0].a_to_b.delay_ns, 5);
        assert!(s.links[0].b_to_a.is_transparent());
        let twice = r#"{"links": [{"name": "l", "a": "x0", "b": "x0"}]}"#;
        assert!(Spec::parse(twice).unwrap_err().contains("used twice"));
        let bad = r#"{"links": [{"name": "l", "a": "x0", "b": "x1", "b_to_a": {"loss": {"model": "bernoulli", "loss_pct": 150}}}]}"#;
        assert!(Spec::parse(bad).unwrap_err().contains("b_to_a"));
        assert!(Spec::parse(r#"{"links": []}"#).is_err());
    }

    const TWO_STATIONS: &str = r#"{"links": [{"name": "sta1-ap1", "a": "x0", "b": "x1"},
                                            {"name": "ap1-sta2", "a": "x2", "b": "x3"}],
        "media": [{"name": "ap1", "model": "MODEL", "stations": [
            {"link": "sta1-ap1", "station_end": "a", "distance_m": 100},
            {"link": "ap1-sta2", "station_end": "b", "distance_m": 10, "rate": 6}]}]}"#;

    #[test]
    fn reads_media_and_keeps_configurations_without_them() {
        let s = Spec::parse(&TWO_STATIONS.replace("MODEL", "dcf")).unwrap();
        assert_eq!(s.media[0].stations.len(), 2);
        assert!(s.links.iter().all(|l| l.a_to_b.is_transparent() && l.b_to_a.is_transparent()));
        let plain = Spec::parse(r#"{"links": [{"name": "l", "a": "x0", "b": "x1"}]}"#).unwrap();
        assert!(plain.media.is_empty());
    }

    #[test]
    fn compat_cells_write_mininet_wifis_parameters_into_their_links() {
        let s = Spec::parse(&TWO_STATIONS.replace("MODEL", "compat")).unwrap();
        // Station 1 on end a at 100 m: uplink a>b 4.0668 Mbit/s, 5 ms, 0.2 %; the downlink adds the AP's 1 ms.
        assert_eq!((s.links[0].a_to_b.rate_bps, s.links[0].a_to_b.delay_ns), (4_066_800, 5_000_000));
        assert_eq!(s.links[0].b_to_a.delay_ns, 6_000_000);
        // Station 2 on end b at 10 m: its uplink is b>a.
        assert_eq!((s.links[1].b_to_a.rate_bps, s.links[1].b_to_a.delay_ns), (9_958_200, 500_000));
        assert_eq!(s.links[1].a_to_b.delay_ns, 1_500_000);
    }

    #[test]
    fn a_moving_compat_station_starts_with_its_first_waypoint_and_follows_the_rest() {
        let moving = TWO_STATIONS.replace("MODEL", "compat").replace(r#""name": "ap1","#, r#""name": "ap1", "ap": {"position": [0, 0, 0]},"#)
            .replace(r#""distance_m": 10,"#, r#""waypoints": [{"t_s": 0, "position": [10, 0, 0]}, {"t_s": 1, "position": [100, 0, 0]}],"#);
        let s = Spec::parse(&moving).unwrap();
        assert_eq!(s.links[1].b_to_a.rate_bps, 9_958_200);
        let m = s.compat_motions(5);
        assert!(m[..2].iter().all(Option::is_none));
        // Station 2 is on end b: b>a is its uplink, a>b the AP's downlink.
        let (down, up) = (m[2].as_ref().unwrap(), m[3].as_ref().unwrap());
        assert!(down.downlink && !up.downlink);
        assert_eq!(up.impairment_at(5), s.links[1].b_to_a);
        assert_eq!(down.impairment_at(5), s.links[1].a_to_b);
        assert_eq!(up.impairment_at(2_000_000_000).rate_bps, 4_066_800);
    }

    #[test]
    fn refuses_media_it_cannot_tie_to_links() {
        let t = TWO_STATIONS.replace("MODEL", "dcf");
        let err = |text: &str| Spec::parse(text).unwrap_err();
        assert!(err(&t.replace(r#""link": "ap1-sta2""#, r#""link": "nope""#)).contains("no link nope"));
        assert!(err(&t.replace(r#""link": "ap1-sta2""#, r#""link": "sta1-ap1""#)).contains("has a station already"));
        let impaired = t.replace(r#""b": "x1"}"#, r#""b": "x1", "a_to_b": {"delay_ns": 5}}"#);
        assert!(err(&impaired).contains("no impairment of its own"));
        assert!(err(&t.replace(r#""rate": 6"#, r#""rate": 7"#)).contains("medium ap1"));
        assert!(err(&t.replace(r#""model": "dcf""#, r#""model": "mesh""#)).contains("mesh"));
    }
}
