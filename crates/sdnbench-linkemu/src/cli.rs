//! Command-line flags.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};
use tgen_core::units::parse_duration_ns;

/// Everything a run needs, parsed.
#[derive(Clone, Debug)]
pub struct Options {
    pub config: PathBuf,
    pub interval_ns: u64,
    pub rt_priority: i32,
    /// None: 25 µs under SCHED_FIFO, 200 µs otherwise (wake-up accuracy measured on 2-vCPU VMs).
    pub spin_ns: Option<u64>,
    pub cpu: Option<usize>,
    pub netns_private: bool,
    pub wait_ns: u64,
    pub ring_frames: usize,
    pub max_late_p99_ns: Option<u64>,
    pub seed: Option<u64>,
    pub check: bool,
}

pub fn command() -> Command {
    Command::new("sdnbench-linkemu")
        .about("Emulates links between pairs of interfaces: netem's delay, jitter, loss, duplication, \
                corruption, reordering, rate and queue limit per direction, in user space")
        .arg(Arg::new("config").long("config").required(true).value_name("FILE")
            .help("JSON file: {\"links\": [{\"name\", \"a\", \"b\", \"a_to_b\", \"b_to_a\"}]} (docs/linkemu.md)"))
        .arg(Arg::new("interval").long("interval").default_value("1s").value_name("DUR")
            .help("period of interval records (0s: none)"))
        .arg(Arg::new("rt-priority").long("rt-priority").default_value("10").value_name("N")
            .help("SCHED_FIFO priority where permitted (0: stay SCHED_OTHER)"))
        .arg(Arg::new("spin").long("spin").value_name("DUR")
            .help("wake up this early and spin to the release time (default 25us with SCHED_FIFO, 200us without)"))
        .arg(Arg::new("cpu").long("cpu").value_name("N").help("pin the emulator to this CPU"))
        .arg(Arg::new("netns-private").long("netns-private").action(ArgAction::SetTrue)
            .help("move into a new network namespace first and wait there for the interfaces \
                   (the caller moves them in with `ip link set IF netns PID`); they vanish with the emulator"))
        .arg(Arg::new("wait").long("wait").default_value("10s").value_name("DUR")
            .help("how long to wait for the interfaces to appear"))
        .arg(Arg::new("ring-frames").long("ring-frames").default_value("1024").value_name("N")
            .help("receive ring slots per interface (2 KiB each)"))
        .arg(Arg::new("max-late-p99").long("max-late-p99").value_name("DUR")
            .help("exit 1 when any direction's 99th percentile release lateness exceeds this"))
        .arg(Arg::new("check").long("check").action(ArgAction::SetTrue)
            .help("only read and check the configuration, then exit (0: valid)"))
        .arg(Arg::new("seed").long("seed").value_name("N")
            .help("seed of every direction without its own (default: from the clock)"))
}

fn number<T: std::str::FromStr>(m: &ArgMatches, name: &str) -> Result<Option<T>, String> {
    m.get_one::<String>(name).map(|s| s.parse::<T>().map_err(|_| format!("--{name}: not a number: {s}"))).transpose()
}

fn duration(m: &ArgMatches, name: &str) -> Result<Option<u64>, String> {
    m.get_one::<String>(name).map(|s| parse_duration_ns(s).map_err(|e| format!("--{name}: {e}"))).transpose()
}

pub fn options(m: &ArgMatches) -> Result<Options, String> {
    let ring_frames: usize = number(m, "ring-frames")?.unwrap_or(1024);
    if ring_frames < 2 || !ring_frames.is_multiple_of(2) {
        return Err("--ring-frames must be an even number of at least 2".into());
    }
    Ok(Options {
        config: PathBuf::from(m.get_one::<String>("config").unwrap()),
        interval_ns: duration(m, "interval")?.unwrap_or(1_000_000_000),
        rt_priority: number(m, "rt-priority")?.unwrap_or(10),
        spin_ns: duration(m, "spin")?,
        cpu: number(m, "cpu")?,
        netns_private: m.get_flag("netns-private"),
        wait_ns: duration(m, "wait")?.unwrap_or(10_000_000_000),
        ring_frames,
        max_late_p99_ns: duration(m, "max-late-p99")?,
        seed: number(m, "seed")?,
        check: m.get_flag("check"),
    })
}
