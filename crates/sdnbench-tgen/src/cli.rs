//! Command-line flags: every quantity takes an explicit unit, checked here, so the
//! engines below only see validated numbers.

use std::net::SocketAddr;

use clap::{Arg, ArgAction, ArgMatches, Command};
use tgen_core::schedule::{Arrivals, OnOff, SizeDist};
use tgen_core::units::{parse_bytes, parse_duration_ns, parse_rate, Rate};
use tgen_core::video::{VideoParams, VIDEO_FIELDS_LEN};
use tgen_core::wire::HEADER_LEN;

use crate::recv::RecvConfig;
use crate::send::UdpSendConfig;
use crate::sys;
use crate::tcp::{TcpRecvConfig, TcpSendConfig};

/// What the user asked the tool to do.
pub enum Action {
    SendUdp(UdpSendConfig),
    RecvUdp(RecvConfig),
    SendTcp(TcpSendConfig),
    RecvTcp(TcpRecvConfig),
}

const ABOUT: &str = "Open-loop traffic generator and receiver for sdnbench.\n\
Probes carry a 64-bit sequence number and CLOCK_REALTIME nanosecond send times; \
hosts sharing one kernel (network namespaces) share that clock, so one-way delay is exact.\n\
Output: JSON Lines {\"type\": \"interval|summary|error\", \"schema\": 1, \"data\": {...}} on stdout.\n\
Exit codes: 0 ok, 1 a threshold (--min-rate-ratio, --max-loss-pct) was not met, 2 error.";

const SEND_EXAMPLES: &str = "Examples:\n  \
sdnbench-tgen send --to 10.0.0.2:5001 --rate 50kpps --payload 64B --duration 10s --min-rate-ratio 0.99\n  \
sdnbench-tgen send --to 10.0.0.2:5001 --rate 100Mbps --payload 1024B --count 100000 --pattern poisson\n  \
sdnbench-tgen send --to 10.0.0.2:5001 --preset g729 --silence-suppression --duration 60s\n  \
sdnbench-tgen send --to 10.0.0.2:5001 --video-bitrate 4Mbps --fps 25 --duration 30s\n  \
sdnbench-tgen send --to 10.0.0.2:5001 --echo --rate 10pps --count 1000       (RTT; recv --echo)\n  \
sdnbench-tgen send --proto tcp --to 10.0.0.2:5001 --size 1GB";

const RECV_EXAMPLES: &str = "Examples:\n  \
sdnbench-tgen recv --bind 10.0.0.2:5001 --interval 100ms --max-loss-pct 0.1\n  \
sdnbench-tgen recv --bind 10.0.0.2:5001 --echo\n  \
sdnbench-tgen recv --proto tcp --bind 10.0.0.2:5001\n\
The receiver prints 'sdnbench-tgen: listening on ...' on stderr once bound; start senders after it.";

fn opt(name: &'static str, value: &'static str, help: &'static str) -> Arg {
    Arg::new(name).long(name).value_name(value).help(help)
}

fn flag(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name).long(name).action(ArgAction::SetTrue).help(help)
}

fn proto() -> Arg {
    opt("proto", "udp|tcp", "Transport").value_parser(["udp", "tcp"]).default_value("udp")
}

/// The clap command tree (also printed by --help).
pub fn command() -> Command {
    let send = Command::new("send")
        .about("Send probe flows (UDP, open loop) or a TCP bulk transfer")
        .after_help(SEND_EXAMPLES)
        .arg(proto())
        .arg(opt("to", "IP:PORT", "Receiver address").required(true))
        .arg(opt("bind", "IP:PORT", "Local address to send from [default: 0.0.0.0:0]"))
        .arg(opt("rate", "RATE", "Send rate while on: packets/s (50kpps, 1Mpps) or L2 frame bit/s (100Mbps) [default: 1kpps]"))
        .arg(opt("payload", "SIZE", "UDP payload per packet incl. the 32 B probe header (64B, 1024B) [default: 64B]"))
        .arg(opt("payload-dist", "DIST", "Payload size distribution: uniform:MIN-MAX or exp:MEAN:MIN-MAX (bytes)"))
        .arg(opt("pattern", "constant|poisson", "Inter-departure times (constant when not given)").value_parser(["constant", "poisson"]))
        .arg(opt("on", "DURATION", "On/off bursts: length of an on period (500ms)"))
        .arg(opt("off", "DURATION", "On/off bursts: length of an off period (500ms)"))
        .arg(flag("exponential-onoff", "Draw on/off lengths from exponential distributions with those means"))
        .arg(opt("preset", "g711|g729", "VoIP preset: G.711 = 172 B (12 B RTP + 160 B) at 50 pps; G.729 = 32 B (12 + 20) at 50 pps").value_parser(["g711", "g729"]))
        .arg(flag("silence-suppression", "With --preset: exponential talk spurts 1.004 s / pauses 1.587 s (ITU-T P.59)"))
        .arg(opt("video-bitrate", "RATE", "Video stream instead of probes: encoded bit rate (4Mbps); frames leave as bursts of --payload-sized packets (default 1200B)"))
        .arg(opt("fps", "FRAMES", "Video: frames per second [default: 25]"))
        .arg(opt("gop", "FRAMES", "Video: frames per group of pictures, one I-frame each [default: 12]"))
        .arg(opt("i-ratio", "RATIO", "Video: I-frame size / P-frame size [default: 4]"))
        .arg(opt("frame-noise", "SIGMA", "Video: log-normal sigma of frame sizes, 0 = constant [default: 0.2]"))
        .arg(opt("duration", "DURATION", "Run length (10s, 500ms); UDP slots after it are not scheduled"))
        .arg(opt("count", "PACKETS", "Send exactly this many packets per flow (UDP)"))
        .arg(opt("size", "SIZE", "TCP: bytes to transfer (1GB = 10^9 B, 1GiB = 2^30 B)"))
        .arg(opt("write-size", "SIZE", "TCP: bytes per write() [default: 128KiB]"))
        .arg(opt("flows", "N", "Parallel UDP flows from this process, one socket each [default: 1]"))
        .arg(opt("flow-id", "ID", "Flow id of the first flow; further flows count up [default: 0]"))
        .arg(opt("batch", "PACKETS", "Most packets per sendmmsg call [default: 32]"))
        .arg(opt("late-threshold", "DURATION", "A packet sent later than this after its intended time counts as late [default: 100us]"))
        .arg(opt("grace", "DURATION", "With --duration: extra time to send overdue slots before they count as missed [default: 1s]"))
        .arg(flag("gso", "Send each batch of equal-size packets with one UDP GSO sendmsg (Linux >= 4.18; falls back to sendmmsg). Use where the sending interface has gso and tx-udp-segmentation off, so each datagram leaves as its own packet"))
        .arg(flag("echo", "Round-trip mode: the receiver (recv --echo) reflects every probe; report RTT"))
        .arg(opt("linger", "DURATION", "Echo mode: wait this long for replies after the last send [default: 1s]"))
        .arg(opt("min-rate-ratio", "RATIO", "Exit 1 if achieved/scheduled send rate of any flow is below this (0.99)"))
        .arg(opt("max-loss-pct", "PERCENT", "Echo mode: exit 1 if round-trip loss exceeds this percentage"))
        .arg(opt("seed", "N", "Seed for Poisson gaps, size draws and on/off lengths [default: 1]"));
    let recv = Command::new("recv")
        .about("Receive probe flows and report per-flow delay, jitter, loss, order and throughput")
        .after_help(RECV_EXAMPLES)
        .arg(proto())
        .arg(opt("bind", "IP:PORT", "Address to listen on").required(true))
        .arg(opt("duration", "DURATION", "Stop after this long at most (30s)"))
        .arg(opt("idle-timeout", "DURATION", "Stop when no packet arrived for this long after the first [default: 5s]"))
        .arg(opt("expect-flows", "N", "Stop once N flows sent their end marker [default: every flow seen]"))
        .arg(opt("linger", "DURATION", "Keep receiving this long after the last end marker (late, reordered packets) [default: 200ms]"))
        .arg(opt("interval", "DURATION", "Period of the per-flow interval series; 0s turns it off [default: 100ms]"))
        .arg(flag("echo", "Reflect echo requests back to their sender (round-trip mode)"))
        .arg(opt("max-loss-pct", "PERCENT", "Exit 1 if any flow lost more than this percentage"))
        .arg(flag("clock-synced", "Sender runs on another kernel whose clock is synchronised (PTP): report one-way delay anyway"))
        .arg(opt("batch", "PACKETS", "Most datagrams per recvmmsg call [default: 64]"))
        .arg(opt("playout-buffer", "DURATION", "Video flows: content buffered before playback starts [default: 1s]"))
        .arg(opt("max-seq", "N", "Refuse sequence numbers at or above this (bounds the duplicate bitmap) [default: 2^32]"))
        .arg(opt("max-samples", "N", "Delays kept per flow for percentiles; reservoir-sampled beyond [default: 20000000]"));
    Command::new("sdnbench-tgen").about(ABOUT).version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true).subcommand(send).subcommand(recv)
}

fn get<'a>(m: &'a ArgMatches, name: &str) -> Option<&'a str> {
    m.get_one::<String>(name).map(String::as_str)
}

fn num<T: std::str::FromStr>(m: &ArgMatches, name: &str, default: T) -> Result<T, String> {
    get(m, name).map_or(Ok(default), |s| s.parse().map_err(|_| format!("--{name}: '{s}' is not a valid number")))
}

fn dur(m: &ArgMatches, name: &str) -> Result<Option<u64>, String> {
    get(m, name).map(|s| parse_duration_ns(s).map_err(|e| format!("--{name}: {e}"))).transpose()
}

fn addr(m: &ArgMatches, name: &str, default: &str) -> Result<SocketAddr, String> {
    let s = get(m, name).unwrap_or(default);
    s.parse().map_err(|_| format!("--{name}: '{s}' is not IP:PORT"))
}

fn size_dist(m: &ArgMatches, payload: u64) -> Result<SizeDist, String> {
    let Some(spec) = get(m, "payload-dist") else { return Ok(SizeDist::Constant(payload as usize)) };
    let bad = || format!("--payload-dist: '{spec}': use uniform:MIN-MAX or exp:MEAN:MIN-MAX");
    let range = |r: &str| -> Result<(usize, usize), String> {
        let (a, b) = r.split_once('-').ok_or_else(bad)?;
        Ok((parse_bytes(a)? as usize, parse_bytes(b)? as usize))
    };
    let d = match spec.split_once(':') {
        Some(("uniform", r)) => {
            let (a, b) = range(r)?;
            SizeDist::Uniform(a, b)
        }
        Some(("exp", rest)) => {
            let (mean, r) = rest.split_once(':').ok_or_else(bad)?;
            let (min, max) = range(r)?;
            SizeDist::Exponential { mean: parse_bytes(mean)? as f64, min, max }
        }
        _ => return Err(bad()),
    };
    if d.min() > d.max() {
        return Err(bad());
    }
    Ok(d)
}

fn udp_send(m: &ArgMatches) -> Result<UdpSendConfig, String> {
    let dst = addr(m, "to", "")?;
    let preset = get(m, "preset").map(str::to_string);
    let (mut payload, mut rate) = (64u64, Rate::Pps(1000.0));
    let mut onoff = None;
    if let Some(p) = &preset {
        payload = if p == "g711" { 172 } else { 32 };
        rate = Rate::Pps(50.0);
        if m.get_flag("silence-suppression") {
            onoff = Some(OnOff { on_ns: 1.004e9, off_ns: 1.587e9, exponential: true });
        }
    }
    if let Some(s) = get(m, "payload") {
        payload = parse_bytes(s).map_err(|e| format!("--payload: {e}"))?;
    }
    if let Some(s) = get(m, "rate") {
        rate = parse_rate(s).map_err(|e| format!("--rate: {e}"))?;
    }
    let sizes = size_dist(m, payload)?;
    if sizes.min() < HEADER_LEN || sizes.max() > 65_507 {
        return Err(format!("--payload: must be {HEADER_LEN}..65507 bytes (the probe header is {HEADER_LEN} B)"));
    }
    let rate_pps = match rate {
        Rate::Pps(p) => p,
        Rate::Bps(b) => b / ((sizes.mean() + sys::udp_l2_overhead(&dst) as f64) * 8.0),
    };
    if rate_pps.is_nan() || rate_pps <= 0.0 {
        return Err("--rate: must be above zero".into());
    }
    match (dur(m, "on")?, dur(m, "off")?) {
        (Some(on), Some(off)) => onoff = Some(OnOff { on_ns: on as f64, off_ns: off as f64, exponential: m.get_flag("exponential-onoff") }),
        (None, None) => {}
        _ => return Err("--on and --off go together".into()),
    }
    let duration_ns = dur(m, "duration")?;
    let count = get(m, "count").map(|_| num(m, "count", 0u64)).transpose()?;
    if duration_ns.is_none() && count.is_none() {
        return Err("give --duration (10s) or --count (packets)".into());
    }
    let arrivals = if get(m, "pattern") == Some("poisson") { Arrivals::Poisson } else { Arrivals::Constant };
    let video = video_params(m, get(m, "payload").map_or(1200, |_| payload as usize))?;
    if video.is_some() && m.get_flag("echo") {
        return Err("--video-bitrate and --echo do not combine (video probes carry frame fields where echo replies carry a timestamp)".into());
    }
    let bind_default = if dst.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
    Ok(UdpSendConfig {
        dst, bind: addr(m, "bind", bind_default)?, flows: num(m, "flows", 1u32)?.max(1), flow_id_base: num(m, "flow-id", 0u32)?,
        rate_pps, arrivals, onoff, sizes, duration_ns, count, batch: num(m, "batch", 32usize)?.clamp(1, 1024),
        late_threshold_ns: dur(m, "late-threshold")?.unwrap_or(100_000), grace_ns: dur(m, "grace")?.unwrap_or(1_000_000_000),
        echo: m.get_flag("echo"), linger_ns: dur(m, "linger")?.unwrap_or(1_000_000_000),
        min_rate_ratio: get(m, "min-rate-ratio").map(|_| num(m, "min-rate-ratio", 0.0)).transpose()?,
        max_loss_pct: get(m, "max-loss-pct").map(|_| num(m, "max-loss-pct", 0.0)).transpose()?,
        seed: num(m, "seed", 1u64)?, preset, gso: m.get_flag("gso"), video,
    })
}

fn video_params(m: &ArgMatches, max_payload: usize) -> Result<Option<VideoParams>, String> {
    let Some(s) = get(m, "video-bitrate") else { return Ok(None) };
    let bitrate_bps = match parse_rate(s).map_err(|e| format!("--video-bitrate: {e}"))? {
        Rate::Bps(b) if b > 0.0 => b,
        _ => return Err("--video-bitrate: give a bit rate above zero (4Mbps)".into()),
    };
    if max_payload < HEADER_LEN + VIDEO_FIELDS_LEN {
        return Err(format!("--payload: video packets need at least {} bytes", HEADER_LEN + VIDEO_FIELDS_LEN));
    }
    let p = VideoParams { bitrate_bps, fps: num(m, "fps", 25.0)?, gop: num(m, "gop", 12u32)?.max(1),
                          i_ratio: num(m, "i-ratio", 4.0)?, max_payload, noise: num(m, "frame-noise", 0.2)? };
    if !(p.fps > 0.0 && p.i_ratio > 0.0 && p.noise >= 0.0) {
        return Err("--fps and --i-ratio must be above zero, --frame-noise at least zero".into());
    }
    Ok(Some(p))
}

fn udp_recv(m: &ArgMatches) -> Result<RecvConfig, String> {
    Ok(RecvConfig {
        bind: addr(m, "bind", "")?, duration_ns: dur(m, "duration")?,
        idle_timeout_ns: dur(m, "idle-timeout")?.unwrap_or(5_000_000_000),
        expect_flows: get(m, "expect-flows").map(|_| num(m, "expect-flows", 1u32)).transpose()?,
        fin_linger_ns: dur(m, "linger")?.unwrap_or(200_000_000), interval_ns: dur(m, "interval")?.unwrap_or(100_000_000),
        echo: m.get_flag("echo"), max_loss_pct: get(m, "max-loss-pct").map(|_| num(m, "max-loss-pct", 0.0)).transpose()?,
        clock_synced: m.get_flag("clock-synced"), batch: num(m, "batch", 64usize)?.clamp(1, 1024),
        seq_limit: num(m, "max-seq", 1u64 << 32)?, sample_cap: num(m, "max-samples", 20_000_000usize)?,
        playout_buffer_ns: dur(m, "playout-buffer")?.unwrap_or(1_000_000_000),
    })
}

fn tcp_send(m: &ArgMatches) -> Result<TcpSendConfig, String> {
    let volume = get(m, "size").map(|s| parse_bytes(s).map_err(|e| format!("--size: {e}"))).transpose()?;
    let duration_ns = dur(m, "duration")?;
    if volume.is_none() == duration_ns.is_none() {
        return Err("TCP: give exactly one of --size (1GB) or --duration (10s)".into());
    }
    let write = get(m, "write-size").map_or(Ok(128 * 1024), parse_bytes).map_err(|e| format!("--write-size: {e}"))?;
    Ok(TcpSendConfig { dst: addr(m, "to", "")?, volume, duration_ns, write_size: write.clamp(1, 64 << 20) as usize })
}

fn tcp_recv(m: &ArgMatches) -> Result<TcpRecvConfig, String> {
    Ok(TcpRecvConfig { bind: addr(m, "bind", "")?, connections: num(m, "expect-flows", 1u32)?,
                       duration_ns: dur(m, "duration")? })
}

/// Turns parsed flags into an action, or a one-line error naming the flag.
pub fn action(m: &ArgMatches) -> Result<Action, String> {
    match m.subcommand() {
        Some(("send", s)) if get(s, "proto") == Some("tcp") => tcp_send(s).map(Action::SendTcp),
        Some(("send", s)) => udp_send(s).map(Action::SendUdp),
        Some(("recv", s)) if get(s, "proto") == Some("tcp") => tcp_recv(s).map(Action::RecvTcp),
        Some(("recv", s)) => udp_recv(s).map(Action::RecvUdp),
        _ => Err("unknown subcommand".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Action, String> {
        let m = command().try_get_matches_from(std::iter::once("sdnbench-tgen").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        action(&m)
    }

    #[test]
    fn bit_rate_counts_l2_frames() {
        // 1024 B payload + 42 B of UDP/IPv4/Ethernet headers = 8528 bit per frame.
        let Ok(Action::SendUdp(c)) = parse(&["send", "--to", "10.0.0.2:9", "--rate", "8.528Mbps", "--payload", "1024B", "--count", "1"])
        else { panic!("not a UDP sender") };
        assert!((c.rate_pps - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn presets_and_refusals() {
        let Ok(Action::SendUdp(c)) = parse(&["send", "--to", "10.0.0.2:9", "--preset", "g729", "--duration", "1s"])
        else { panic!("not a UDP sender") };
        assert_eq!((c.rate_pps, c.sizes.max()), (50.0, 32));
        for bad in [&["send", "--to", "10.0.0.2:9", "--count", "1", "--on", "1s"][..],
                    &["send", "--to", "10.0.0.2:9"],
                    &["send", "--to", "10.0.0.2:9", "--count", "1", "--payload", "31B"],
                    &["send", "--to", "10.0.0.2:9", "--count", "1", "--video-bitrate", "1kpps"],
                    &["send", "--proto", "tcp", "--to", "10.0.0.2:9", "--size", "1GB", "--duration", "1s"]] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
