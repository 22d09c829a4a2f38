//! Listen mode (`--listen-flow-mods`): the switches complete the handshake
//! and answer what the controller asks, raise nothing, and report every
//! FLOW_MOD they receive with the CLOCK_MONOTONIC time it was read, its
//! cookie and its match. A caller that writes flows through a proactive
//! controller's REST API reads these records and pairs each write with the
//! FLOW_MOD it caused (flow-programming throughput and latency).

use crate::conn::{Phase, SwitchEnd};
use crate::{emit, Shared};
use openflow::types::{FlowMatch, OFPFW10_DL_DST, OXM_ETH_DST};
use openflow::FlowMod;
use serde_json::{json, Value};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

/// One FLOW_MOD as a switch received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowModSeen {
    /// 0-based switch index (dpid = --dpid-offset + switch).
    pub switch: u32,
    pub dpid: u64,
    /// CLOCK_MONOTONIC nanoseconds when the message was read: the clock
    /// Python's time.monotonic_ns() reads, so the caller's write times compare.
    pub t_ns: u64,
    pub cookie: u64,
    pub table_id: u8,
    /// OFPFC_ADD 0, MODIFY 1, MODIFY_STRICT 2, DELETE 3, DELETE_STRICT 4.
    pub command: u16,
    pub priority: u16,
    /// The Ethernet destination the flow matches on, when it matches one.
    pub eth_dst: Option<[u8; 6]>,
}

/// Where switches send what they saw.
pub type Sink = UnboundedSender<FlowModSeen>;

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the struct we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The Ethernet destination a decoded FLOW_MOD matches on.
fn eth_dst(fm: &FlowMod) -> Option<[u8; 6]> {
    match &fm.matching {
        FlowMatch::V10(m) if m.wildcards & OFPFW10_DL_DST == 0 => Some(m.dl_dst),
        FlowMatch::V10(_) => None,
        FlowMatch::V13(o) => o.get(OXM_ETH_DST).and_then(|v| v.try_into().ok()),
    }
}

fn mac_text(m: &[u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

impl FlowModSeen {
    /// The record of `fm`, read by switch `switch` (dpid `dpid`) at `t_ns`.
    pub fn new(switch: u32, dpid: u64, t_ns: u64, fm: &FlowMod) -> FlowModSeen {
        FlowModSeen { switch, dpid, t_ns, cookie: fm.cookie, table_id: fm.table_id, command: fm.command, priority: fm.priority, eth_dst: eth_dst(fm) }
    }

    /// The `flow_mod` record's data (cookie in decimal: JSON numbers hold it exactly only below 2^53, so also in hex).
    pub fn to_json(&self) -> Value {
        json!({"switch": self.switch, "dpid": self.dpid, "t_ns": self.t_ns, "cookie": self.cookie,
               "cookie_hex": format!("{:#x}", self.cookie), "table_id": self.table_id, "command": self.command,
               "priority": self.priority, "eth_dst": self.eth_dst.as_ref().map(mac_text)})
    }
}

/// Listen mode: one FLOW_MOD (`msg`, whole) of switch `switch`, timed as it
/// is read, to the coordinator.
pub fn report(msg: &[u8], switch: u32, dpid: u64, sink: &Sink) -> Result<(), openflow::DecodeError> {
    let t_ns = monotonic_ns();
    if let openflow::Body::FlowMod(fm) = openflow::Message::decode(msg)?.body {
        let _ = sink.send(FlowModSeen::new(switch, dpid, t_ns, &fm));
    }
    Ok(())
}

/// FLOW_MODs seen, by command.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Tally {
    pub add: u64,
    pub modify: u64,
    pub delete: u64,
}

impl Tally {
    pub fn count(&mut self, seen: &FlowModSeen) {
        match seen.command {
            0 => self.add += 1,
            1 | 2 => self.modify += 1,
            _ => self.delete += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.add + self.modify + self.delete
    }
}

/// Resolves when standard input reaches its end (never, unless `enabled`).
async fn stdin_closed(enabled: bool) {
    if !enabled {
        return std::future::pending().await;
    }
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = tx.send(());
    });
    let _ = rx.await;
}

/// The listen-mode coordinator, once the handshakes are over: print a
/// `connected` record, then every FLOW_MOD as a `flow_mod` record until
/// --listen-for has passed or (with --until-eof) stdin closes, then the summary.
pub async fn listen(shared: Arc<Shared>, mut rx: UnboundedReceiver<FlowModSeen>, tasks: Vec<tokio::task::JoinHandle<SwitchEnd>>, phase_tx: tokio::sync::watch::Sender<Phase>, connect_s: f64) -> Result<i32, String> {
    let cfg = &shared.cfg;
    let n = cfg.switches;
    let ready = shared.ready.load(Relaxed);
    let _ = phase_tx.send(Phase::Run);
    emit("connected", json!({"switches": n, "switches_connected": ready, "connect_s": connect_s, "t_ns": monotonic_ns()}));
    let t0 = Instant::now();
    let deadline = tokio::time::sleep(cfg.listen_for);
    tokio::pin!(deadline);
    let eof = stdin_closed(cfg.until_eof);
    tokio::pin!(eof);
    let mut tally = Tally::default();
    let mut out = std::io::stdout();
    loop {
        tokio::select! {
            Some(seen) = rx.recv() => {
                tally.count(&seen);
                sdnbench_jsonl::emit_to(&mut out, "flow_mod", seen.to_json());
            }
            _ = &mut deadline => break,
            _ = &mut eof => break,
        }
    }
    let _ = phase_tx.send(Phase::Stop);
    let listen_s = t0.elapsed().as_secs_f64();
    let (mut errors, mut controller_errors, mut first_decode_error) = (Vec::new(), 0, None);
    for t in tasks {
        if let Ok(Ok(end)) = tokio::time::timeout(Duration::from_secs(5), t).await {
            first_decode_error = first_decode_error.or(end.first_decode_error);
            controller_errors += end.controller_errors;
            errors.extend(end.error);
        }
    }
    // Records a switch sent before it stopped.
    while let Ok(seen) = rx.try_recv() {
        tally.count(&seen);
        sdnbench_jsonl::emit_to(&mut out, "flow_mod", seen.to_json());
    }
    let mut invalid = Vec::new();
    if ready < n {
        invalid.push(format!("only {ready} of {n} switches completed the handshake"));
    }
    if !errors.is_empty() {
        invalid.push(format!("{} switches lost their controller connection while listening", errors.len()));
    }
    emit("summary", json!({
        "tool": "sdnbench-ofload", "tool_version": env!("CARGO_PKG_VERSION"), "mode": "listen-flow-mods",
        "controller": format!("{}:{}", cfg.controller, cfg.port),
        "openflow_version": if cfg.version == openflow::OFP10 { "1.0" } else { "1.3" },
        "transport": if cfg.tls { "tls" } else { "tcp" },
        "switches": n, "switches_connected": ready, "connect_s": connect_s, "listen_s": listen_s,
        "flow_mods": {"total": tally.total(), "add": tally.add, "modify": tally.modify, "delete": tally.delete},
        "decode_errors": shared.counters.snapshot().decode_errors, "controller_errors": controller_errors,
        "first_decode_error": first_decode_error,
        "switch_errors": errors.iter().take(5).collect::<Vec<_>>(), "switch_error_count": errors.len(),
        "valid": invalid.is_empty(), "invalid_reasons": invalid,
    }));
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::{Match10, Message, Oxm};

    fn flow_mod13(cookie: u64, command: u16, fields: Vec<u8>) -> FlowMod {
        FlowMod { matching: FlowMatch::V13(Oxm { match_type: 1, fields }), cookie, cookie_mask: 0, table_id: 0, command, idle_timeout: 0, hard_timeout: 0, priority: 200, buffer_id: 0xffff_ffff, out_port: 0xffff_ffff, out_group: 0xffff_ffff, flags: 0, instructions: vec![] }
    }

    /// OXM ETH_DST (class 0x8000, field 3, no mask, 6 bytes).
    fn oxm_eth_dst(mac: [u8; 6]) -> Vec<u8> {
        let mut f = vec![0x80, 0x00, OXM_ETH_DST << 1, 6];
        f.extend_from_slice(&mac);
        f
    }

    #[test]
    fn a_13_flow_mod_is_recorded_with_cookie_and_eth_dst() {
        let mac = [0x02, 0xfb, 0, 0, 1, 7];
        let fm = flow_mod13(0x5db1_0000_0001_0007, 0, oxm_eth_dst(mac));
        // Through the wire: what the switch decodes is what it records.
        let raw = Message::new(openflow::OFP13, 9, openflow::Body::FlowMod(fm)).encode();
        let openflow::Body::FlowMod(fm) = Message::decode(&raw).unwrap().body else { panic!() };
        let seen = FlowModSeen::new(3, 4, 123, &fm);
        assert_eq!(seen, FlowModSeen { switch: 3, dpid: 4, t_ns: 123, cookie: 0x5db1_0000_0001_0007, table_id: 0, command: 0, priority: 200, eth_dst: Some(mac) });
        let j = seen.to_json();
        assert_eq!(j["eth_dst"], "02:fb:00:00:01:07");
        assert_eq!(j["cookie_hex"], "0x5db1000000010007");
        assert_eq!(j["cookie"].as_u64(), Some(0x5db1_0000_0001_0007));
    }

    #[test]
    fn a_flow_mod_without_eth_dst_has_none() {
        let seen = FlowModSeen::new(0, 1, 0, &flow_mod13(1, 3, vec![]));
        assert_eq!(seen.eth_dst, None);
        assert!(seen.to_json()["eth_dst"].is_null());
        let mut m = Match10 { wildcards: 0x3fffff, ..Default::default() };
        let fm10 = |m: Match10| FlowMod { matching: FlowMatch::V10(m), ..flow_mod13(1, 0, vec![]) };
        assert_eq!(eth_dst(&fm10(m.clone())), None, "wildcarded dl_dst");
        m.wildcards &= !OFPFW10_DL_DST;
        m.dl_dst = [2, 0, 0, 0, 0, 9];
        assert_eq!(eth_dst(&fm10(m)), Some([2, 0, 0, 0, 0, 9]));
    }

    #[test]
    fn report_sends_decoded_flow_mods_and_returns_decode_errors() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let raw = Message::new(openflow::OFP13, 1, openflow::Body::FlowMod(flow_mod13(5, 0, vec![]))).encode();
        report(&raw, 2, 3, &tx).unwrap();
        let seen = rx.try_recv().unwrap();
        assert_eq!((seen.switch, seen.dpid, seen.cookie), (2, 3, 5));
        assert!(seen.t_ns > 0);
        assert!(report(&raw[..raw.len() - 1], 2, 3, &tx).is_err(), "a truncated FLOW_MOD is a decode error");
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn tally_counts_by_command() {
        let mut t = Tally::default();
        for c in [0, 0, 1, 2, 3, 4] {
            t.count(&FlowModSeen::new(0, 1, 0, &flow_mod13(1, c, vec![])));
        }
        assert_eq!(t, Tally { add: 2, modify: 2, delete: 2 });
        assert_eq!(t.total(), 6);
    }

    #[test]
    fn monotonic_clock_advances() {
        let a = monotonic_ns();
        std::thread::sleep(Duration::from_millis(2));
        assert!(monotonic_ns() >= a + 2_000_000);
    }
}
