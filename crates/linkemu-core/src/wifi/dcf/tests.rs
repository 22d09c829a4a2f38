//! The medium in virtual time against the analytic figures: one station's
//! closed form, Bianchi's saturation throughput, the performance anomaly; and
//! the mechanics (immediate access, retries, queue limit, determinism).

use super::*;
use crate::wifi::airtime::{msdu_of_udp, Slot};
use crate::wifi::bianchi;
use crate::wifi::phy::rate;

/// A path at `mbps` both ways with an SNR far above every threshold.
fn clean(mbps: u32) -> Path {
    let r = rate(mbps).unwrap();
    Path { snr_up_db: 60.0, snr_down_db: 60.0, rate_up: r, rate_down: r }
}

fn params(seed: u64) -> Params {
    Params { queue_pkts: 100, shadowing_sigma_db: 0.0, seed }
}

/// Every station always has UDP frames of `payload` bytes to send up; goodput per station, Mbit/s, over `secs`.
fn saturate(paths: Vec<Path>, slot: Slot, payload: usize, secs: u64) -> (Vec<f64>, Medium<()>) {
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
