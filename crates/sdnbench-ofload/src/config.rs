//! Command-line flags. The short flags that cbench has (`-s -M -l -m -w -t
//! -c -p -D`) mean the same here, so a cbench command line runs unchanged.

use clap::Parser;
use std::time::Duration;

/// Emulated OpenFlow switches that load a controller with PACKET_INs.
///
/// Each switch connects over TCP, completes the OpenFlow 1.0 or 1.3
/// handshake and then sends PACKET_INs for new source MACs. In latency mode
/// (the default, as in cbench) each switch has one PACKET_IN outstanding; in
/// throughput mode (-t) it keeps a window of them. Every FLOW_MOD or
/// PACKET_OUT is matched to the PACKET_IN it answers (buffer id, then packet
/// contents, then matched source MAC). Output: JSON Lines on stdout, one
/// "interval" line per loop and one "summary" line. Exit codes: 0 ok, 1 a
/// --min-rate / --max-p99 threshold not met, 2 error.
#[derive(Parser, Debug, Clone)]
#[command(name = "sdnbench-ofload", version, disable_version_flag = true, after_help = EXAMPLES)]
pub struct Config {
    /// Print version (long form only: -V sets the OpenFlow version).
    #[arg(long = "version", action = clap::ArgAction::Version)]
    print_version: (),
    /// Controller host name or address.
    #[arg(short = 'c', long, default_value = "127.0.0.1")]
    pub controller: String,
    /// Controller OpenFlow TCP port.
    #[arg(short = 'p', long, default_value_t = 6653)]
    pub port: u16,
    /// OpenFlow version the switches speak: 1.0 or 1.3.
    #[arg(short = 'V', long = "of-version", default_value = "1.0", value_parser = parse_version)]
    pub version: u8,
    /// Number of emulated switches.
    #[arg(short = 's', long, default_value_t = 16)]
    pub switches: usize,
    /// Unique source MAC addresses (hosts) per switch.
    #[arg(short = 'M', long = "mac-addresses", default_value_t = 100_000)]
    pub macs: u32,
    /// Loops (measurement intervals) per run, warm-up loops included.
    #[arg(short = 'l', long, default_value_t = 16)]
    pub loops: u32,
    /// Length of one loop in milliseconds.
    #[arg(short = 'm', long = "ms-per-test", default_value_t = 1000)]
    pub ms_per_loop: u64,
    /// Leading loops excluded from the summary (warm-up).
    #[arg(short = 'w', long, default_value_t = 1)]
    pub warmup: u32,
    /// Throughput mode: keep a window of PACKET_INs outstanding per switch.
    #[arg(short = 't', long)]
    pub throughput: bool,
    /// Outstanding PACKET_INs per switch in throughput mode; 0 = auto
    /// (1,048,576 / switches, within 64..4096). Like cbench, throughput mode
    /// keeps the controller's input full: batching controllers go faster
    /// with a deep queue, so a small window understates them. The total cap
    /// bounds memory (the tracker keeps 2 x window slots per switch).
    #[arg(short = 'W', long, default_value_t = 0)]
    pub window: u32,
    /// Ports per emulated switch (reported in FEATURES_REPLY / PORT_DESC).
    #[arg(short = 'P', long, default_value_t = 4)]
    pub ports: u32,
    /// Delay after all switches are ready before the first loop, in ms.
    #[arg(short = 'D', long, default_value_t = 0)]
    pub delay: u64,
    /// First datapath id (switch i gets dpid-offset + i).
    #[arg(short = 'o', long, default_value_t = 1)]
    pub dpid_offset: u64,
    /// Do not send a learning packet from the destination MAC first
    /// (cbench's -L, on by default, lets L2 learning controllers install flows).
    #[arg(long)]
    pub no_learn_dst: bool,
    /// Send unbuffered PACKET_INs (buffer id NO_BUFFER, full packet), as
    /// switches without packet buffers do; responses are then matched by content.
    #[arg(long)]
    pub no_buffer: bool,
    /// PACKET_IN reason: no-match (a table miss, as cbench sends) or action
    /// (an explicit output to the controller, as a controller's own
    /// pipeline raises them; Faucet ignores table misses).
    #[arg(long = "packet-in-reason", default_value = "no-match", value_parser = parse_reason)]
    pub packet_in_reason: u8,
    /// PACKET_IN table id (OpenFlow 1.3 only): the table whose flow sent the packet up.
    #[arg(long = "packet-in-table", default_value_t = 0)]
    pub packet_in_table: u8,
    /// PACKET_IN cookie (OpenFlow 1.3 only): the cookie of the flow that sent
    /// the packet up. Faucet answers only its own (default 1524372928).
    #[arg(long = "packet-in-cookie", default_value_t = 0)]
    pub packet_in_cookie: u64,
    /// Tag the generated frames with this 802.1Q VLAN id (1..4094), as a
    /// pipeline that pushes a port's native VLAN before the PACKET_IN would.
    #[arg(long)]
    pub vlan: Option<u16>,
    /// Poll the sockets without ever sleeping, as cbench does. Use it when the
    /// generator has cores of its own (pinned apart from the controller): a
    /// sleeping generator is woken by every send of the controller, and the
    /// controller's core pays for the wake-up. On shared cores it takes CPU
    /// from the controller instead. Load is then reported as the time not
    /// spent polling idle (`cores_busy`).
    #[arg(long)]
    pub busy_poll: bool,
    /// IPv4 protocol number of the generated frames: 255 (cbench's frames, an
    /// unassigned protocol: controllers parse as far as IPv4) or 17 (UDP, for
    /// applications that match on transport ports; Python controllers then
    /// parse one header more per PACKET_IN).
    #[arg(long, default_value_t = crate::packet::IP_PROTOCOL_CBENCH)]
    pub ip_protocol: u8,
    /// A PACKET_IN unanswered after this long is counted as timed out (e.g. 2s, 500ms).
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Give up when not every switch completed its handshake within this time.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub connect_timeout: Duration,
    /// Worker threads of the generator (0 = half the CPUs, at least one; all
    /// of them when the process is confined to fewer CPUs than the machine has).
    #[arg(short = 'T', long, default_value_t = 0)]
    pub threads: usize,
    /// Topology-aware mode: JSON file {"links": [[switch, port, switch, port], ...]}
    /// (0-based switch indexes, ports >= 3). LLDP/BDDP PACKET_OUTs sent out of a
    /// linked port arrive as PACKET_INs on the neighbour, so controllers discover the links.
    #[arg(long)]
    pub topology: Option<std::path::PathBuf>,
    /// With --topology: address each switch's test traffic to the host behind
    /// the farthest switch, and measure multi-hop flow setup (PACKET_IN at the
    /// ingress to FLOW_MOD at the egress switch) for topology-aware controllers.
    #[arg(long, requires = "topology")]
    pub paths: bool,
    /// Connect with TLS (controllers listening with OVS `pssl:` and the like).
    #[arg(long, requires = "tls_ca")]
    pub tls: bool,
    /// PEM file of the CA that signed the controller's certificate.
    #[arg(long)]
    pub tls_ca: Option<std::path::PathBuf>,
    /// PEM certificate the switches present (OVS controllers require one).
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Listen mode: the switches complete the handshake and answer the
    /// controller's requests but raise no PACKET_IN; every FLOW_MOD they
    /// receive is printed as a `flow_mod` record (CLOCK_MONOTONIC time, cookie,
    /// match), for measuring a proactive controller's flow programming.
    #[arg(long, conflicts_with_all = ["throughput", "topology", "min_rate", "max_p99_us"])]
    pub listen_flow_mods: bool,
    /// Listen mode: how long to listen after the handshakes (e.g. 60s, 10m).
    #[arg(long, default_value = "60s", value_parser = parse_duration, requires = "listen_flow_mods")]
    pub listen_for: Duration,
    /// Listen mode: also stop when standard input closes (a supervising
    /// process closes it once it has seen what it waited for).
    #[arg(long, requires = "listen_flow_mods")]
    pub until_eof: bool,
    /// Exit 1 when the mean response rate (responses/s) is below this.
    #[arg(long)]
    pub min_rate: Option<f64>,
    /// Exit 1 when the p99 latency in microseconds is above this.
    #[arg(long)]
    pub max_p99_us: Option<f64>,
}

const EXAMPLES: &str = "Examples:
  # cbench's classic throughput run, unchanged flags (port 6653 unless -p):
  sdnbench-ofload -c 127.0.0.1 -p 6633 -s 16 -M 1000 -l 10 -m 1000 -w 1 -t
  # OpenFlow 1.3 latency distribution, 1 outstanding PACKET_IN per switch, 500 ms loops:
  sdnbench-ofload -p 6653 -V 1.3 -s 8 -l 20 -m 500
  # fail (exit 1) below 10k responses/s or when p99 exceeds 5 ms:
  sdnbench-ofload -t --min-rate 10000 --max-p99-us 5000
  # Faucet (ports natively in VLAN 100): PACKET_INs as its pipeline raises them,
  # enough hosts that none is presented twice (Faucet answers a host once):
  sdnbench-ofload -V 1.3 -s 4 -M 1000000 --packet-in-reason action \\
    --packet-in-table 1 --packet-in-cookie 1524372928 --vlan 100
  # a proactive controller: 16 switches that only connect and report every FLOW_MOD
  # until stdin closes (at most 10 minutes):
  sdnbench-ofload -V 1.3 -s 16 --listen-flow-mods --listen-for 10m --until-eof";

/// Accepts 1.0 / 1.3 (also 10, 13, OpenFlow10, OpenFlow13).
pub fn parse_version(s: &str) -> Result<u8, String> {
    match s.trim().to_ascii_lowercase().trim_start_matches("openflow") {
        "1.0" | "10" | "1" => Ok(openflow::OFP10),
        "1.3" | "13" | "4" => Ok(openflow::OFP13),
        other => Err(format!("unsupported OpenFlow version {other:?}: use 1.0 or 1.3")),
    }
}

/// Accepts no-match / action (also the numbers 0 / 1).
pub fn parse_reason(s: &str) -> Result<u8, String> {
    match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "no-match" | "nomatch" | "0" => Ok(crate::packet::REASON_NO_MATCH),
        "action" | "1" => Ok(crate::packet::REASON_ACTION),
        other => Err(format!("PACKET_IN reason {other:?}: use no-match or action")),
    }
}

/// Parses a duration with an explicit unit: `250us`, `500ms`, `2s`, `1m`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().map_err(|_| format!("{s:?}: expected a number with a unit, e.g. 500ms or 2s"))?;
    let secs = match unit.trim() {
        "us" => v / 1e6,
        "ms" => v / 1e3,
        "s" => v,
        "m" | "min" => v * 60.0,
        _ => return Err(format!("{s:?}: unit must be us, ms, s or m")),
    };
    Ok(Duration::from_secs_f64(secs))
}

impl Config {
    /// Rejects combinations that cannot produce a meaningful run.
    pub fn validate(&self) -> Result<(), String> {
        if self.switches == 0 || self.switches > 65_535 {
            return Err(format!("--switches {}: must be 1..65535", self.switches));
        }
        if self.macs == 0 || self.macs > 0xff_fffe {
            return Err(format!("--mac-addresses {}: must be 1..16777214", self.macs));
        }
        if self.warmup >= self.loops {
            return Err(format!("--warmup {} must be below --loops {}", self.warmup, self.loops));
        }
        if self.ms_per_loop < 10 {
            return Err("--ms-per-test must be at least 10 ms".into());
        }
        if self.version == openflow::OFP10 && (self.packet_in_table != 0 || self.packet_in_cookie != 0) {
            return Err("--packet-in-table and --packet-in-cookie need -V 1.3 (OpenFlow 1.0 PACKET_INs have neither)".into());
        }
        if let Some(vid) = self.vlan.filter(|v| !(1..=4094).contains(v)) {
            return Err(format!("--vlan {vid}: must be 1..4094"));
        }
        Ok(())
    }

    /// How the switches' PACKET_INs look (reason, table, cookie, VLAN tag).
    pub fn packet_in_profile(&self) -> crate::packet::Profile {
        crate::packet::Profile { reason: self.packet_in_reason, table_id: self.packet_in_table, cookie: self.packet_in_cookie, vlan: self.vlan, ip_protocol: self.ip_protocol }
    }

    /// Every how many matched answers one latency is recorded: each in
    /// latency mode; in throughput mode one in 16, since at millions of
    /// answers a second recording each would cost the generator more than
    /// generating a request (systematic sampling of a steady stream).
    pub fn latency_sample_every(&self) -> u32 {
        if self.throughput { 16 } else { 1 }
    }

    /// Outstanding PACKET_INs per switch: 1 in latency mode.
    pub fn effective_window(&self) -> u32 {
        match (self.throughput, self.window) {
            (false, _) => 1,
            (true, 0) => (1_048_576 / self.switches as u32).clamp(64, 4096),
            (true, w) => w,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_units() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("2").is_err());
    }

    #[test]
    fn cbench_command_line_parses() {
        let c = Config::try_parse_from(["x", "-c", "localhost", "-p", "6633", "-m", "10000", "-l", "5", "-s", "16", "-M", "1000", "-t", "-w", "1"]).unwrap();
        assert_eq!((c.switches, c.macs, c.loops, c.ms_per_loop, c.warmup, c.throughput), (16, 1000, 5, 10000, 1, true));
        assert_eq!(c.version, openflow::OFP10);
        c.validate().unwrap();
        assert_eq!(c.packet_in_profile(), crate::packet::Profile::default(), "cbench's PACKET_INs unless asked");
    }

    #[test]
    fn listen_mode_flags() {
        let c = Config::try_parse_from(["x", "-V", "1.3", "--listen-flow-mods", "--listen-for", "90s", "--until-eof"]).unwrap();
        c.validate().unwrap();
        assert!(c.listen_flow_mods && c.until_eof);
        assert_eq!(c.listen_for, Duration::from_secs(90));
        assert!(Config::try_parse_from(["x", "--until-eof"]).is_err(), "listen flags need listen mode");
        assert!(Config::try_parse_from(["x", "--listen-flow-mods", "-t"]).is_err(), "no PACKET_INs to keep a window of");
    }

    #[test]
    fn packet_in_profile_flags() {
        let c = Config::try_parse_from(["x", "-V", "1.3", "--packet-in-reason", "action", "--packet-in-table", "1", "--packet-in-cookie", "1524372928", "--vlan", "100"]).unwrap();
        c.validate().unwrap();
        assert_eq!(c.packet_in_profile(), crate::packet::Profile { reason: 1, table_id: 1, cookie: 1_524_372_928, vlan: Some(100), ip_protocol: 255 });
        assert!(Config::try_parse_from(["x", "--packet-in-reason", "later"]).is_err());
        let bad = |args: &[&str]| Config::try_parse_from(["x"].iter().chain(args)).unwrap().validate().is_err();
        assert!(bad(&["--packet-in-cookie", "5"]), "cookies are 1.3 only");
        assert!(bad(&["-V", "1.3", "--vlan", "4095"]));
        assert!(!bad(&["--packet-in-reason", "action", "--vlan", "7"]), "reason and VLAN exist in 1.0");
    }
}
