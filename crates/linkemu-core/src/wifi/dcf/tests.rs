//! The medium in virtual time against the analytic figures: one station's
//! closed form, Bianchi's saturation throughput, the performance anomaly; and
//! the mechanics (immediate access, retries, queue limit, determinism); a
//! station moving away from its AP.

use super::*;
use crate::wifi::airtime::{msdu_of_udp, Slot};
use crate::wifi::bianchi;
use crate::wifi::motion::{Radios, StationPath, Trajectory, Waypoint};
use crate::wifi::phy::{rate, Propagation};

/// A path at `mbps` both ways with an SNR far above every threshold.
fn clean(mbps: u32) -> Path {
    let r = rate(mbps).unwrap();
    Path { snr_up_db: 60.0, snr_down_db: 60.0, rate_up: r, rate_down: r }
}

fn params(seed: u64) -> Params {
    Params { queue_pkts: 100, shadowing_sigma_db: 0.0, seed }
}

/// Every station always has UDP frames of `payload` bytes to send up; goodput per station, Mbit/s, over `secs`.
fn saturate<P: Into<StationPath>>(paths: Vec<P>, slot: Slot, payload: usize, secs: u64) -> (Vec<f64>, Medium<()>) {
    let n = paths.len();
    let mut m = Medium::new(Timing::g(slot), paths, params(42), 0);
    let end = secs * 1_000_000_000;
    let mut bytes = vec![0u64; n];
    let mut now = 0;
    loop {
        for s in 0..n {
            while m.queue_len(s, Dir::Up) < 4 {
                m.enqueue(s, Dir::Up, msdu_of_udp(payload), (), now).unwrap();
            }
        }
        let Some(t) = m.next_event_ns() else { break };
        if t > end {
            break;
        }
        now = t;
        for o in m.advance(t) {
            if o.delivered && o.at_ns <= end {
                bytes[o.station] += payload as u64;
            }
        }
    }
    (bytes.iter().map(|&b| b as f64 * 8.0 / (secs as f64 * 1e6)).collect(), m)
}

fn assert_within(what: &str, got: f64, want: f64, tolerance: f64) {
    let err = got / want - 1.0;
    println!("{what}: {got:.3} Mbit/s vs {want:.3} ({:+.1} %)", err * 100.0);
    assert!(err.abs() <= tolerance, "{what}: {got:.3} Mbit/s, expected {want:.3} ± {:.0} %", tolerance * 100.0);
}

#[test]
fn one_saturated_station_gives_the_published_udp_goodput() {
    for (slot, payload, published) in
        [(Slot::Short, 1024, 24.9), (Slot::Short, 128, 5.2), (Slot::Long, 1024, 18.9), (Slot::Long, 128, 3.4)]
    {
        let (s, m) = saturate(vec![clean(54)], slot, payload, 10);
        assert_within(&format!("1 station, {slot:?} slots, {payload} B"), s[0], published, 0.10);
        // And the closed form DIFS + CWmin/2 slots + DATA + SIFS + ACK, tighter.
        let t = Timing::g(slot);
        let cycle = t.difs_ns as f64 + 7.5 * t.slot_ns as f64 + (t.data_ns(msdu_of_udp(payload), 54)
            + t.ack_exchange_ns(54)) as f64;
        assert_within("  closed form", s[0], payload as f64 * 8.0 / cycle * 1e3, 0.02);
        let c = m.counters(0, Dir::Up);
        assert_eq!((c.collisions, c.retries, c.rate_mbps), (0, 0, 54));
    }
}

#[test]
fn saturated_stations_match_bianchi() {
    let t = Timing::g(Slot::Short);
    let (data, ack) = (t.data_ns(msdu_of_udp(1024), 54), t.ack_exchange_ns(54));
    for n in [2usize, 5, 10] {
        let (s, m) = saturate(vec![clean(54); n], Slot::Short, 1024, 20);
        let total: f64 = s.iter().sum();
        assert_within(&format!("{n} stations"), total, bianchi::saturation_mbps(&t, n, 1024, data, ack), 0.10);
        // Fair shares: every station within 10 % of the mean.
        for &x in &s {
            assert!((x / (total / n as f64) - 1.0).abs() < 0.10, "unfair shares {s:?}");
        }
        let collided: u64 = (0..n).map(|i| m.counters(i, Dir::Up).collisions).sum();
        assert!(collided > 0);
    }
}

#[test]
fn a_slow_station_drags_a_fast_one_down() {
    let t = Timing::g(Slot::Short);
    let msdu = msdu_of_udp(1024);
    let (s, m) = saturate(vec![clean(54), clean(6)], Slot::Short, 1024, 20);
    // Heusse et al.: each gets about L / Σ_j T_j, T_j = DIFS + CWmin/2 slots + DATA_j + SIFS + ACK_j.
    let per_frame = |mbps| t.difs_ns as f64 + 7.5 * t.slot_ns as f64 + (t.data_ns(msdu, mbps) + t.ack_exchange_ns(mbps)) as f64;
    let anomaly = 8192.0 / (per_frame(54) + per_frame(6)) * 1e3;
    let exact = bianchi::per_station_mbps(&t, 1024, &[t.data_ns(msdu, 54), t.data_ns(msdu, 6)],
                                          &[t.ack_exchange_ns(54), t.ack_exchange_ns(6)]);
    for (i, name) in [(0, "54 Mbit/s station"), (1, "6 Mbit/s station")] {
        assert_within(&format!("{name} vs L/ΣT"), s[i], anomaly, 0.10);
        assert_within(&format!("{name} vs Bianchi"), s[i], exact[i], 0.10);
    }
    // The fast station is far below what it gets alone, and the slow one holds most of the airtime.
    assert!(s[0] < 24.9 / 4.0);
    let (fast, slow) = (m.counters(0, Dir::Up).airtime_ns, m.counters(1, Dir::Up).airtime_ns);
    assert!(slow > 4 * fast, "airtime {fast} vs {slow}");
}

#[test]
fn an_idle_medium_sends_at_the_next_slot_boundary() {
    let t = Timing::g(Slot::Short);
    let mut m = Medium::new(t, vec![clean(54)], params(1), 0);
    m.enqueue(0, Dir::Up, 100, 7u32, 1_000).unwrap();
    assert_eq!(m.next_event_ns(), Some(9_000));
    let out: Vec<_> = m.advance(9_000).collect();
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].at_ns, out[0].retries, out[0].delivered, out[0].item), (9_000 + t.data_ns(100, 54), 0, true, 7));
    // Right after, the medium is busy: the next frame waits DIFS and a backoff.
    m.enqueue(0, Dir::Up, 100, 8, 10_000).unwrap();
    let next = m.next_event_ns().unwrap();
    let free = 9_000 + t.data_ns(100, 54) + t.ack_exchange_ns(54) + t.difs_ns;
    assert!(next >= free && next <= free + 15 * t.slot_ns, "{next} vs {free}");
}

#[test]
fn downlink_frames_share_the_access_points_queue() {
    let t = Timing::g(Slot::Short);
    let mut m = Medium::new(t, vec![clean(54), clean(6)], params(3), 0);
    for i in 0..4u32 {
        m.enqueue((i % 2) as usize, Dir::Down, 500, i, 0).unwrap();
    }
    // The first went on air at once (the medium was idle), the others wait in the AP's one queue.
    assert_eq!((m.queue_len(0, Dir::Down), m.queue_len(1, Dir::Down), m.queue_len(1, Dir::Up)), (3, 3, 0));
    let mut order: Vec<_> = m.advance(0).map(|o| (o.item, o.station, o.dir)).collect();
    while let Some(t) = m.next_event_ns() {
        order.extend(m.advance(t).map(|o| (o.item, o.station, o.dir)));
    }
    assert_eq!(order, vec![(0, 0, Dir::Down), (1, 1, Dir::Down), (2, 0, Dir::Down), (3, 1, Dir::Down)]);
    assert_eq!(m.counters(1, Dir::Down).rate_mbps, 6);
    assert_eq!(m.counters(1, Dir::Down).airtime_ns, 2 * (t.data_ns(500, 6) + t.ack_exchange_ns(6)));
}

#[test]
fn a_hopeless_link_drops_after_the_retry_limit_and_a_full_queue_refuses() {
    let r = rate(54).unwrap();
    let path = Path { snr_up_db: 0.0, snr_down_db: 0.0, rate_up: r, rate_down: r };
    let mut m = Medium::new(Timing::g(Slot::Short), vec![path], Params { queue_pkts: 2, ..params(5) }, 0);
    m.enqueue(0, Dir::Up, 1000, 1u8, 0).unwrap();
    m.enqueue(0, Dir::Up, 1000, 2, 0).unwrap();
    assert_eq!(m.enqueue(0, Dir::Up, 1000, 3, 0), Err(3));
    let mut out = Vec::new();
    while let Some(t) = m.next_event_ns() {
        out.extend(m.advance(t).map(|o| (o.item, o.delivered, o.retries)));
    }
    assert_eq!(out, vec![(1, false, 6), (2, false, 6)]);
    let c = m.counters(0, Dir::Up);
    assert_eq!((c.attempts, c.retries, c.frame_errors, c.retry_drops, c.queue_drops), (14, 12, 14, 2, 1));
}

#[test]
fn frame_errors_follow_the_snr_and_runs_repeat() {
    let r = rate(54).unwrap();
    // At the threshold a 1,060-byte MPDU fails 10 % of its attempts.
    let path = Path { snr_up_db: r.snr_db, snr_down_db: r.snr_db, rate_up: r, rate_down: r };
    let run = |seed| {
        let mut m = Medium::new(Timing::g(Slot::Short), vec![path], params(seed), 0);
        let mut now = 0;
        for _ in 0..20_000 {
            m.enqueue(0, Dir::Up, 1060 - MAC_OVERHEAD, (), now).unwrap();
            while let Some(t) = m.next_event_ns() {
                now = t;
                m.advance(t).for_each(drop);
            }
        }
        *m.counters(0, Dir::Up)
    };
    let c = run(9);
    let fer = c.frame_errors as f64 / c.attempts as f64;
    println!("frame error rate at the 54 Mbit/s threshold: {fer:.4}");
    assert!((fer - 0.1).abs() < 0.01, "{fer}");
    assert_eq!(c.delivered_pkts + c.retry_drops, 20_000);
    assert_eq!(run(9), c);
    assert_ne!(run(10), c);
}

/// Mininet-WiFi's radios (14 dBm, 5 dBi each end) choosing the best rate.
fn default_radios() -> Radios {
    Radios { propagation: Propagation::default(), station_tx_dbm: 14.0, ap_tx_dbm: 14.0, gains_dbi: 10.0,
             fixed_rate: None }
}

/// A station going from `from_m` to `to_m` along the x axis in `secs`, the AP at the origin.
fn walking(from_m: f64, to_m: f64, secs: f64) -> StationPath {
    let w = |t_s, x| Waypoint { t_s, position: [x, 0.0, 0.0] };
    StationPath::Moving { trajectory: Trajectory::new(vec![w(0.0, from_m), w(secs, to_m)]).unwrap(), ap: [0.0; 3],
                          radios: default_radios() }
}

#[test]
fn a_station_walking_away_steps_its_rate_down_where_the_table_says() {
    // 10 m to 150 m in 28 s (5 m/s), saturated with 1,024-byte UDP frames up.
    let mut m: Medium<()> = Medium::new(Timing::g(Slot::Short), vec![walking(10.0, 150.0, 28.0)], params(42), 0);
    let (mut per_s, mut steps, mut last) = (vec![0u64; 28], Vec::new(), 0);
    loop {
        while m.queue_len(0, Dir::Up) < 4 {
            m.enqueue(0, Dir::Up, msdu_of_udp(1024), (), m.now).unwrap();
        }
        let t = m.next_event_ns().unwrap();
        if t >= 28_000_000_000 {
            break;
        }
        let delivered = m.advance(t).filter(|o| o.delivered).count() as u64;
        per_s[(t / 1_000_000_000) as usize] += delivered * 1024 * 8;
        let r = m.counters(0, Dir::Up).rate_mbps;
        if r != last {
            steps.push((r, 10.0 + 5.0 * t as f64 / 1e9));
            last = r;
        }
    }
    // A rate is left where the mean SNR 74.9 − 30 log10(d) dB falls below its threshold.
    let beyond = |mbps| 10f64.powf((74.9 - rate(mbps).unwrap().snr_db) / 30.0);
    let want: Vec<(u32, f64)> = [(48, beyond(54)), (36, beyond(48)), (24, beyond(36)), (18, beyond(24))].into();
    assert_eq!(steps[0].0, 54);
    assert_eq!(steps.len(), 5, "{steps:?}");
    for ((r, d), (wr, wd)) in steps[1..].iter().zip(&want) {
        println!("{r} Mbit/s from {d:.2} m (table: {wd:.2} m)");
        assert_eq!(r, wr);
        assert!((d - wd).abs() < 0.01, "{r} Mbit/s at {d} m, expected {wd} m");
    }
    // Goodput per second falls at every step: 24.9 Mbit/s near the AP, the 18 Mbit/s closed form at the end.
    let mbps: Vec<f64> = per_s.iter().map(|&b| b as f64 / 1e6).collect();
    println!("goodput per second: {mbps:.1?}");
    assert_within("first second", mbps[0], 24.86, 0.02);
    let t = Timing::g(Slot::Short);
    let at_18 = 8192.0 / (t.difs_ns as f64 + 7.5 * t.slot_ns as f64 + (t.data_ns(msdu_of_udp(1024), 18)
        + t.ack_exchange_ns(18)) as f64) * 1e3;
    // The last second (145–150 m) also loses frames to errors just above the 18 Mbit/s threshold.
    assert!(mbps[27] < at_18 && mbps[27] > 0.8 * at_18, "{} vs {at_18}", mbps[27]);
    assert!(mbps.windows(2).all(|w| w[1] < w[0] * 1.02), "goodput rises: {mbps:?}");
    assert!(mbps[20..].iter().sum::<f64>() < 0.65 * mbps[..8].iter().sum::<f64>());
    assert_eq!(last, 18, "18 Mbit/s holds to {:.1} m", beyond(18));
}

#[test]
fn restarting_the_motion_clock_brings_the_station_back_and_standing_still_changes_nothing() {
    let mut m: Medium<()> = Medium::new(Timing::g(Slot::Short), vec![walking(10.0, 150.0, 28.0)], params(1), 0);
    assert_eq!(m.path(0, 20_000_000_000).rate_up.mbps, 24);
    m.restart_motion(20_000_000_000);
    assert_eq!(m.path(0, 20_000_000_000).rate_up.mbps, 54);
    assert_eq!(m.path(0, 40_000_000_000).rate_up.mbps, 24);
    // A station whose waypoints stay at 70 m meets exactly the frames of one fixed at 70 m.
    let (fixed, a) = saturate(vec![default_radios().path(70.0)], Slot::Short, 1024, 3);
    let (still, b) = saturate(vec![walking(70.0, 70.0, 1.0)], Slot::Short, 1024, 3);
    assert_eq!(fixed, still);
    assert_eq!(a.counters(0, Dir::Up), b.counters(0, Dir::Up));
}
