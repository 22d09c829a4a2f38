//! Topology-aware mode: the emulated switches are wired into a graph, and an
//! LLDP/BDDP PACKET_OUT the controller sends out of a linked port arrives as
//! a PACKET_IN on the neighbour's port, so link discovery sees the graph.

use openflow::fast::{output_ports, PORT_ALL, PORT_FLOOD};
use std::collections::HashMap;
use std::path::Path;

/// A discovery frame travelling to switch `to`, arriving on `port`.
pub struct Relay {
    pub port: u32,
    pub frame: Vec<u8>,
}

/// For every switch: local port -> (neighbour switch index, neighbour port).
#[derive(Debug, Default)]
pub struct Topology {
    pub neighbours: Vec<HashMap<u32, (u32, u32)>>,
}

impl Topology {
    /// Reads `{"links": [[a, a_port, b, b_port], ...]}` (0-based switch indexes).
    pub fn load(path: &Path, switches: usize) -> Result<Topology, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("--topology {}: {e}", path.display()))?;
        Topology::parse(&text, switches).map_err(|e| format!("--topology {}: {e}", path.display()))
    }

    pub fn parse(text: &str, switches: usize) -> Result<Topology, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let links = v.get("links").and_then(|l| l.as_array()).ok_or("expected an object with a \"links\" array")?;
        let mut t = Topology { neighbours: vec![HashMap::new(); switches] };
        for (i, l) in links.iter().enumerate() {
            let n: Vec<u64> = l.as_array().map(|a| a.iter().filter_map(|x| x.as_u64()).collect()).unwrap_or_default();
            let [a, ap, b, bp] = n[..] else {
                return Err(format!("links[{i}]: expected [switch, port, switch, port] of non-negative integers"));
            };
            if a as usize >= switches || b as usize >= switches {
                return Err(format!("links[{i}]: switch index beyond --switches {switches}"));
            }
            if ap < 3 || bp < 3 || ap > 0xff00 || bp > 0xff00 {
                return Err(format!("links[{i}]: ports must be 3..65280 (1 and 2 carry the test hosts)"));
            }
            for (s, p, peer) in [(a, ap, (b as u32, bp as u32)), (b, bp, (a as u32, ap as u32))] {
                if t.neighbours[s as usize].insert(p as u32, peer).is_some() {
                    return Err(format!("links[{i}]: switch {s} port {p} is used by two links"));
                }
            }
        }
        Ok(t)
    }

    /// Highest port number any link uses (switches need at least that many ports).
    pub fn max_port(&self) -> u32 {
        self.neighbours.iter().flat_map(|m| m.keys().copied()).max().unwrap_or(0)
    }

    /// Where a PACKET_OUT from `switch` with these actions lands: (neighbour, port) pairs.
    pub fn destinations(&self, switch: u32, version: u8, in_port: u32, actions: &[u8]) -> Vec<(u32, u32)> {
        let Some(links) = self.neighbours.get(switch as usize) else { return vec![] };
        let mut out = Vec::new();
        for p in output_ports(version, actions) {
            if p == PORT_FLOOD || p == PORT_ALL {
                out.extend(links.iter().filter(|(lp, _)| **lp != in_port).map(|(_, d)| *d));
            } else if let Some(d) = links.get(&p) {
                out.push(*d);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::OFP13;

    #[test]
    fn links_are_symmetric_and_flood_skips_the_input_port() {
        let t = Topology::parse(r#"{"links": [[0, 3, 1, 3], [1, 4, 2, 3]]}"#, 3).unwrap();
        assert_eq!(t.neighbours[1].get(&3), Some(&(0, 3)));
        assert_eq!(t.max_port(), 4);
        let out4 = [0, 0, 0, 16, 0, 0, 0, 4, 0xff, 0xe5, 0, 0, 0, 0, 0, 0];
        assert_eq!(t.destinations(1, OFP13, 0xffff_fffd, &out4), vec![(2, 3)]);
        let flood = [0, 0, 0, 16, 0xff, 0xff, 0xff, 0xfb, 0xff, 0xe5, 0, 0, 0, 0, 0, 0];
        assert_eq!(t.destinations(1, OFP13, 3, &flood), vec![(2, 3)]);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        assert!(Topology::parse(r#"{"links": [[0, 3, 5, 3]]}"#, 2).unwrap_err().contains("beyond"));
        assert!(Topology::parse(r#"{"links": [[0, 1, 1, 3]]}"#, 2).unwrap_err().contains("ports"));
        assert!(Topology::parse(r#"{"links": [[0, 3, 1, 3], [0, 3, 1, 4]]}"#, 2).unwrap_err().contains("two links"));
    }
}
