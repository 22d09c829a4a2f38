//! The pipeline against netem's formulas: exact where netem is deterministic,
//! statistical (several standard errors) where it is random.

use proptest::prelude::*;

use super::*;
use crate::config::LossSpec;

fn cfg() -> Impairment {
    Impairment { seed: Some(7), ..Impairment::default() }
}

/// Offers `n` frames of `len` bytes every `gap_ns`, releasing due frames first; the verdicts.
fn drive(c: &Impairment, n: usize, len: usize, gap_ns: u64) -> Vec<Verdict> {
    let mut ne = Netem::new(c, 1);
    let mut held: Vec<u64> = Vec::new();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let now = i as u64 * gap_ns;
        held.retain(|&at| {
            let due = at <= now;
            if due {
                ne.released(len);
            }
            !due
        });
        let v = ne.offer(now, len);
        held.extend(v.releases().map(|r| r.at_ns));
        out.push(v);
    }
    out
}

fn delays(vs: &[Verdict], gap_ns: u64) -> Vec<f64> {
    vs.iter().enumerate().filter_map(|(i, v)| v.copies[0].map(|r| (r.at_ns - i as u64 * gap_ns) as f64)).collect()
}

fn mean_sd(x: &[f64]) -> (f64, f64) {
    let m = x.iter().sum::<f64>() / x.len() as f64;
    (m, (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64).sqrt())
}

#[test]
fn fixed_delay_is_exact() {
    let c = Impairment { delay_ns: 5_000_000, ..cfg() };
    let vs = drive(&c, 100, 100, 1_000_000);
    assert!(delays(&vs, 1_000_000).iter().all(|&d| d == 5_000_000.0));
}

#[test]
fn a_retuned_direction_applies_the_change_to_the_next_frame_only() {
    let mut ne = Netem::new(&Impairment { delay_ns: 5_000_000, limit_pkts: 2, ..cfg() }, 1);
    assert_eq!(ne.offer(0, 100).copies[0].unwrap().at_ns, 5_000_000);
    // 8 Mbit/s: 100 bytes take 100 µs, after the frame still held (the queue tail) as with `tc qdisc change`.
    ne.retune(&Impairment { delay_ns: 1_000_000, rate_bps: 8_000_000, limit_pkts: 2, ..cfg() });
    assert_eq!(ne.offer(10, 100).copies[0].unwrap().at_ns, 5_100_000);
    assert_eq!(ne.offer(20, 100).dropped, Some(Drop::Limit));
    ne.retune(&Impairment { loss: LossSpec::Bernoulli { loss_pct: 100.0, correlation_pct: 0.0 }, ..cfg() });
    assert_eq!(ne.offer(30, 100).dropped, Some(Drop::Loss));
    assert_eq!(ne.held_pkts(), 2);
}

#[test]
fn limit_drops_tail_once_full() {
    let c = Impairment { delay_ns: 1_000_000_000, limit_pkts: 5, ..cfg() };
    let vs = drive(&c, 8, 100, 1);
    let drops: Vec<_> = vs.iter().map(|v| v.dropped).collect();
    assert_eq!(drops[..5], [None; 5]);
    assert_eq!(drops[5..], [Some(Drop::Limit); 3]);
    let c = Impairment { delay_ns: 1_000_000_000, limit_bytes: 250, ..cfg() };
    assert_eq!(drive(&c, 3, 100, 1)[2].dropped, Some(Drop::Limit));
}

#[test]
fn reorder_gap_sends_every_gth_frame_at_once() {
    let c = Impairment { delay_ns: 10_000_000, reorder_pct: 100.0, reorder_gap: 5, ..cfg() };
    let vs = drive(&c, 50, 100, 1_000);
    let immediate: Vec<usize> = vs.iter().enumerate()
        .filter(|(_, v)| v.copies[0].unwrap().reordered).map(|(i, _)| i).collect();
    assert_eq!(immediate, (4..50).step_by(5).collect::<Vec<_>>());
}

#[test]
fn jitter_reorders_unless_kept_in_order() {
    let c = Impairment { delay_ns: 10_000_000, jitter_ns: 5_000_000, ..cfg() };
    let at = |vs: Vec<Verdict>| vs.iter().map(|v| v.copies[0].unwrap().at_ns).collect::<Vec<_>>();
    let free = at(drive(&c, 1000, 100, 100_000));
    assert!(free.windows(2).any(|w| w[1] < w[0]));
    let kept = at(drive(&Impairment { keep_order: true, ..c }, 1000, 100, 100_000));
    assert!(kept.windows(2).all(|w| w[1] >= w[0]));
}

#[test]
fn duplicates_and_corruption_at_their_rates() {
    let n = 200_000;
    let c = Impairment { duplicate_pct: 5.0, corrupt_pct: 2.0, ..cfg() };
    let vs = drive(&c, n, 100, 1_000);
    let dups = vs.iter().filter(|v| v.copies[1].is_some()).count() as f64 / n as f64;
    let bad = vs.iter().flat_map(|v| v.releases()).filter(|r| r.corrupt.is_some()).count() as f64;
    let copies = vs.iter().flat_map(|v| v.releases()).count() as f64;
    assert!((dups - 0.05).abs() < 5.0 * (0.05f64 * 0.95 / n as f64).sqrt(), "{dups}");
    assert!((bad / copies - 0.02).abs() < 0.002, "{}", bad / copies);
    assert!(vs.iter().flat_map(|v| v.releases()).all(|r| r.corrupt.is_none_or(|(b, bit)| b < 100 && bit < 8)));
}

#[test]
fn a_loss_cancels_the_duplicate_first() {
    let c = Impairment { duplicate_pct: 100.0, loss: LossSpec::Bernoulli { loss_pct: 100.0, correlation_pct: 0.0 },
                         ..cfg() };
    let v = drive(&c, 1, 100, 1)[0];
    // Two copies minus one loss: the frame goes on alone, no copy is made (netem counts copies).
    assert!(v.copies[0].is_some() && v.copies[1].is_none());
    assert_eq!(v.duplicate_dropped, None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// t_i = max(a_i + delay, t_{i-1} while held) + (len + overhead) × 8 / rate, exactly.
    #[test]
    fn rate_follows_netem_recurrence(rate_kbps in 100u64..100_000, len in 60usize..1500, overhead in 0i64..40,
                                     gap_ns in 1_000u64..2_000_000, delay_ns in 0u64..5_000_000) {
        let c = Impairment { rate_bps: rate_kbps * 1000, overhead_bytes: overhead, delay_ns, ..cfg() };
        let vs = drive(&c, 300, len, gap_ns);
        let tx = ((len as i64 + overhead) as u128 * 8 * 1_000_000_000 / (rate_kbps as u128 * 1000)) as u64;
        let mut last: Option<u64> = None;
        for (i, v) in vs.iter().enumerate() {
            let now = i as u64 * gap_ns;
            let held = last.filter(|&l| l > now);
            let want = held.map_or(now + delay_ns, |l| l.max(now + delay_ns)) + tx;
            prop_assert_eq!(v.copies[0].unwrap().at_ns, want);
            last = Some(want);
        }
    }

    /// Uniform: mean mu, sd sigma/√3; normal: sd sigma (clipped at 4 sigma); within 4 standard errors.
    #[test]
    fn delay_moments_match_the_distribution(mu_us in 1_000u64..50_000, frac in 0.01f64..0.2, normal in any::<bool>(),
                                            seed in any::<u64>()) {
        let sigma = (mu_us as f64 * 1000.0 * frac) as u64;
        let dist = if normal { Distribution::Normal } else { Distribution::Uniform };
        let c = Impairment { delay_ns: mu_us * 1000, jitter_ns: sigma, delay_distribution: dist,
                             seed: Some(seed), limit_pkts: u64::MAX, ..Impairment::default() };
        let n = 20_000;
        let (m, sd) = mean_sd(&delays(&drive(&c, n, 100, 1), 1));
        let want_sd = if normal { sigma as f64 } else { sigma as f64 / 3f64.sqrt() };
        prop_assert!((m - mu_us as f64 * 1000.0).abs() < 4.0 * want_sd / (n as f64).sqrt() + 1.0, "mean {}", m);
        prop_assert!((sd / want_sd - 1.0).abs() < 4.0 / (2.0 * n as f64).sqrt() + 0.01, "sd {} want {}", sd, want_sd);
    }

    /// Bernoulli loss inside 4.5 binomial standard deviations of p.
    #[test]
    fn bernoulli_loss_rate(pct in 0.5f64..50.0, seed in any::<u64>()) {
        let c = Impairment { loss: LossSpec::Bernoulli { loss_pct: pct, correlation_pct: 0.0 }, seed: Some(seed),
                             ..Impairment::default() };
        let n = 50_000;
        let lost = drive(&c, n, 100, 1).iter().filter(|v| v.dropped == Some(Drop::Loss)).count() as f64;
        let p = pct / 100.0;
        prop_assert!((lost / n as f64 - p).abs() < 4.5 * (p * (1.0 - p) / n as f64).sqrt());
    }
}
