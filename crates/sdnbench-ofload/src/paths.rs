//! Multi-hop flow setup (topology mode with --paths): each switch's hosts
//! send to the destination host behind the switch farthest away, so a
//! topology-aware controller installs flows along a path. A FLOW_MOD for a
//! host of switch *i* arriving at *i*'s partner (the egress) completes that
//! path; one arriving elsewhere is a transit install. The egress switch finds
//! the request's send time in a shared table indexed by (switch, host),
//! written with one relaxed store per PACKET_IN. Counted over the measured
//! (non-warm-up) loops.

use crate::latency::{Latencies, BATCH};
use crate::topology::Topology;
use serde_json::json;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Largest switches x hosts table (8 bytes each): 128 MB.
const MAX_SLOTS: usize = 1 << 24;

pub struct Paths {
    /// For each switch, the switch its test traffic is addressed to.
    pub partner: Vec<u32>,
    hops: Vec<u32>,
    macs: u32,
    sent_at: Vec<AtomicU64>,
    pub latencies: Latencies,
    pub completed: AtomicU64,
    pub transit: AtomicU64,
}

/// Hop counts from `from` to every switch (u32::MAX when unreachable).
fn bfs(t: &Topology, from: usize) -> Vec<u32> {
    let mut dist = vec![u32::MAX; t.neighbours.len()];
    dist[from] = 0;
    let mut queue = VecDeque::from([from]);
    while let Some(s) = queue.pop_front() {
        for &(peer, _) in t.neighbours[s].values() {
            if dist[peer as usize] == u32::MAX {
                dist[peer as usize] = dist[s] + 1;
                queue.push_back(peer as usize);
            }
        }
    }
    dist
}

impl Paths {
    /// Partners are the farthest reachable switch (lowest index on ties).
    pub fn new(t: &Topology, macs: u32) -> Result<Paths, String> {
        let n = t.neighbours.len();
        if n * macs as usize > MAX_SLOTS {
            return Err(format!("--paths: switches x --mac-addresses must stay below {MAX_SLOTS}"));
        }
        let (mut partner, mut hops) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 0..n {
            let dist = bfs(t, i);
            let (j, d) = dist.iter().enumerate().filter(|(_, d)| **d != u32::MAX).max_by_key(|(j, d)| (**d, std::cmp::Reverse(*j))).map(|(j, d)| (j, *d)).unwrap_or((i, 0));
            if d == 0 {
                return Err(format!("--paths: switch {i} has no links"));
            }
            partner.push(j as u32);
            hops.push(d);
        }
        let sent_at = (0..n * macs as usize).map(|_| AtomicU64::new(0)).collect();
        Ok(Paths { partner, hops, macs, sent_at, latencies: Latencies::default(), completed: 0.into(), transit: 0.into() })
    }

    /// Notes when `switch` sent a PACKET_IN from `host`.
    pub fn sent(&self, switch: u32, host: u32, now_ns: u64) {
        self.sent_at[(switch * self.macs + host) as usize].store(now_ns, Relaxed);
    }

    /// A FLOW_MOD for (src_switch, host) arrived at `at`; returns true when
    /// it completed a path (and pushes its setup latency into `samples`).
    pub fn flow_mod(&self, at: u32, src_switch: u32, host: u32, now_ns: u64, samples: &mut Vec<u64>) -> bool {
        let Some(&egress) = self.partner.get(src_switch as usize) else { return false };
        if host >= self.macs {
            return false; // not a test host: the learning packet's answer
        }
        if at != egress {
            self.transit.fetch_add(1, Relaxed);
            return false;
        }
        self.completed.fetch_add(1, Relaxed);
        let sent = self.sent_at[(src_switch * self.macs + host) as usize].load(Relaxed);
        if sent > 0 && now_ns > sent {
            samples.push(now_ns - sent);
            if samples.len() >= BATCH {
                self.latencies.record(samples);
            }
        }
        true
    }

    pub fn summary(&self) -> serde_json::Value {
        let h = self.latencies.merged();
        let mean_hops = self.hops.iter().map(|h| *h as f64).sum::<f64>() / self.hops.len().max(1) as f64;
        let us = |q: f64| h.value_at_quantile(q) as f64 / 1e3;
        json!({
            "mean_hops": mean_hops, "completed": self.completed.load(Relaxed), "transit_flow_mods": self.transit.load(Relaxed),
            "setup_us": (!h.is_empty()).then(|| json!({"count": h.len(), "mean": h.mean() / 1e3, "p50": us(0.5),
                                                       "p90": us(0.9), "p99": us(0.99), "max": h.max() as f64 / 1e3})),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partners_are_the_farthest_switch_and_egress_completes() {
        let t = Topology::parse(r#"{"links": [[0, 3, 1, 3], [1, 4, 2, 3]]}"#, 3).unwrap();
        let p = Paths::new(&t, 10).unwrap();
        assert_eq!(p.partner, vec![2, 0, 0]);
        assert_eq!(p.hops, vec![2, 1, 2]);
        let mut samples = Vec::new();
        p.sent(0, 4, 1_000);
        assert!(!p.flow_mod(1, 0, 4, 1_500, &mut samples), "switch 1 is transit for 0 -> 2");
        assert!(p.flow_mod(2, 0, 4, 2_000, &mut samples));
        assert_eq!(samples, vec![1_000]);
        assert_eq!((p.completed.load(Relaxed), p.transit.load(Relaxed)), (1, 1));
    }

    #[test]
    fn unlinked_switches_are_refused() {
        let t = Topology::parse(r#"{"links": [[0, 3, 1, 3]]}"#, 3).unwrap();
        assert!(Paths::new(&t, 10).err().unwrap().contains("switch 2 has no links"));
    }
}
