//! The media as the engine drives them, in virtual time: which link direction
//! meets which medium, and frames leaving at the end of their airtime.

use super::*;
use linkemu_core::wifi::airtime::{Slot, Timing};
use linkemu_core::wifi::bianchi;

const CELL: &str = r#"{"links": [{"name": "sta1-ap1", "a": "x0", "b": "x1"},
                                 {"name": "s1-s2", "a": "x2", "b": "x3", "a_to_b": {"delay_ns": 5}},
                                 {"name": "ap1-sta2", "a": "x4", "b": "x5"}],
    "media": [{"name": "ap1", "model": "MODEL", "seed": 3, "stations": [
        {"link": "sta1-ap1", "station_end": "a", "distance_m": 10},
        {"link": "ap1-sta2", "station_end": "b", "distance_m": 10}]}]}"#;

fn air(model: &str) -> (Air<usize>, Vec<Option<AirLink>>) {
    let spec = Spec::parse(&CELL.replace("MODEL", model)).unwrap();
    Air::new(&spec, 1, 0).unwrap()
}

/// An Ethernet frame carrying 1,024 bytes of UDP over IPv4.
const UDP_1024: usize = 14 + 20 + 8 + 1024;

#[test]
fn station_directions_meet_the_medium_and_others_do_not() {
    let (a, at) = air("dcf");
    assert_eq!(a.name(0), "ap1");
    let dirs: Vec<Option<(usize, Dir)>> = at.iter().map(|l| l.as_ref().map(|l| (l.at.station, l.at.dir))).collect();
    // sta1 on end a: a>b is its uplink; sta2 on end b: b>a is.
    assert_eq!(dirs, vec![Some((0, Dir::Up)), Some((0, Dir::Down)), None, None, Some((1, Dir::Down)), Some((1, Dir::Up))]);
    let (compat, at) = air("compat");
    assert!(compat.is_empty() && at.iter().all(Option::is_none));
}

#[test]
fn a_frame_on_an_idle_medium_leaves_at_the_end_of_its_airtime() {
    let (mut a, at) = air("dcf");
    let up = at[0].as_ref().unwrap().at;
    a.offer(up, UDP_1024, 7, 100_000).unwrap();
    let t = a.next_deadline().unwrap();
    assert_eq!(t, 108_000, "the next 9 µs slot boundary");
    let mut out = Vec::new();
    a.advance(t, |d, o| out.push((d, o.item, o.at_ns, o.delivered)));
    // 1,066 B Ethernet = 1,060 B MSDU = 1,088 B MPDU: 190 µs at 54 Mbit/s.
    assert_eq!(out, vec![(0, 7, 108_000 + 190_000, true)]);
    let c = a.counters(up);
    assert_eq!((c.delivered_pkts, c.rate_mbps, c.airtime_ns), (1, 54, 190_000 + 10_000 + 34_000));
}

#[test]
fn two_saturated_uplinks_share_the_medium_as_bianchi_says() {
    let (mut a, at) = air("dcf");
    let ups = [at[0].as_ref().unwrap().at, at[5].as_ref().unwrap().at];
    let end = 10_000_000_000u64;
    let mut delivered = [0u64; 6];
    let mut now = 0;
    let mut queued = [0usize; 2];
    loop {
        for (i, &u) in ups.iter().enumerate() {
            while queued[i] < 4 {
                a.offer(u, UDP_1024, i, now).unwrap();
                queued[i] += 1;
            }
        }
        let t = a.next_deadline().unwrap();
        if t > end {
            break;
        }
        now = t;
        a.advance(t, |d, o| {
            queued[o.item] -= 1;
            if o.delivered && o.at_ns <= end {
                delivered[d] += 1;
            }
        });
    }
    let mbps = |n: u64| n as f64 * 8192.0 / 1e10 * 1e3;
    let total = mbps(delivered[0] + delivered[5]);
    let tm = Timing::g(Slot::Short);
    let want = bianchi::saturation_mbps(&tm, 2, 1024, tm.data_ns(1060, 54), tm.ack_exchange_ns(54));
    println!("2 stations through the engine's media: {total:.2} Mbit/s vs Bianchi {want:.2}");
    assert!((total / want - 1.0).abs() < 0.05, "{total} vs {want}");
    assert!(mbps(delivered[0]) > 0.45 * total && mbps(delivered[5]) > 0.45 * total);
    assert_eq!(delivered.iter().sum::<u64>(), delivered[0] + delivered[5]);
}

#[test]
fn a_moving_station_leaves_its_best_rate_and_a_mark_brings_it_back() {
    // 10 m to 150 m in 1 s; one frame at 0.9 s (136 m: 18 Mbit/s), then again after the motion clock restarts.
    let moving = CELL.replace("MODEL", "dcf").replace(r#""seed": 3,"#, r#""seed": 3, "ap": {"position": [0, 0, 0]},"#)
        .replacen(r#""distance_m": 10"#, r#""waypoints": [{"t_s": 0, "position": [10, 0, 0]}, {"t_s": 1, "position": [150, 0, 0]}]"#, 1);
    let spec = Spec::parse(&moving).unwrap();
    let (mut a, at) = Air::<usize>::new(&spec, 1, 0).unwrap();
    let up = at[0].as_ref().unwrap().at;
    let send = |a: &mut Air<usize>, t: u64| {
        a.offer(up, UDP_1024, 0, t).unwrap();
        let due = a.next_deadline().unwrap();
        a.advance(due, |_, _| {});
        a.counters(up).rate_mbps
    };
    assert_eq!(send(&mut a, 900_000_000), 18);
    a.restart_motion(2_000_000_000);
    assert_eq!(send(&mut a, 2_000_000_000), 54);
}
