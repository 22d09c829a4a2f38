//! Command-line flags and their conversion into a checked run configuration.

use std::time::Duration;

use apiload_core::units::{parse_duration_s, parse_fraction, parse_rate};
use apiload_core::{PatternThresholds, Schedule, Stage};
use clap::{Parser, ValueEnum};

use crate::http::ConnOptions;
use crate::request::{render, Common, Prepared, Template};
use crate::target::{check_allowed, parse_url, Cidr, Target};

/// What to do with a request whose send time comes while the in-flight cap is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Overflow {
    /// Wait for a free slot and send late; latency still counts from the intended time.
    Late,
    /// Skip the request and count it as dropped.
    Drop,
}

/// Open-loop HTTP load for SDN controllers' northbound (REST) APIs.
///
/// Requests leave at the times a rate schedule dictates, whether or not the
/// server keeps up; latency is measured from each request's intended send
/// time, so a stalled server shows up as latency, not as a lower request
/// rate (no coordinated omission). Output: JSON Lines on stdout, one
/// `interval` line per second and one `summary` line (see
/// schemas/apiload.schema.json). Exit codes: 0 ok, 1 a threshold was not
/// met, 2 error.
///
/// Example: 0 → 1,000 requests/s over 5 minutes, then 1,000 requests/s for 1 minute:
///   sdnbench-apiload --url http://127.0.0.1:8080 --request 'GET /stats/switches'
///     --stage ramp:0rps:1000rps:5m --stage const:1000rps:1m
#[derive(Debug, Parser)]
#[command(name = "sdnbench-apiload", version, verbatim_doc_comment)]
pub struct Args {
    /// Base URL: http://IP[:PORT][/PREFIX]. Only loopback unless --allow-target covers it.
    #[arg(long)]
    pub url: String,
    /// A request as 'METHOD /path' (repeatable; equal weights). Default: 'GET /'.
    #[arg(long = "request", value_name = "'METHOD /PATH'")]
    pub requests: Vec<String>,
    /// JSON file with a list of request templates:
    /// [{"name", "method", "path", "headers": {..}, "body": <JSON>, "weight": N}].
    #[arg(long = "requests", value_name = "FILE")]
    pub requests_file: Option<String>,
    /// Extra header for every request, 'Name: value' (repeatable).
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,
    /// HTTP basic authentication, USER:PASSWORD (ONOS: onos:rocks).
    #[arg(long, value_name = "USER:PASS")]
    pub basic_auth: Option<String>,
    /// Constant target rate, e.g. 500rps or 1.5krps (with --duration). Use --stage for profiles.
    #[arg(long)]
    pub rate: Option<String>,
    /// Length of the constant-rate run, e.g. 30s or 5m.
    #[arg(long)]
    pub duration: Option<String>,
    /// A schedule stage (repeatable, run in order): const:RATE:DUR, ramp:FROM:TO:DUR,
    /// step:FROM:TO:STEP:EACH. E.g. ramp:0rps:1000rps:5m.
    #[arg(long = "stage", value_name = "SPEC")]
    pub stages: Vec<String>,
    /// Most requests in flight at once; further send times wait or are dropped (--overflow).
    #[arg(long, default_value_t = 200)]
    pub max_in_flight: u32,
    /// Policy when a send time comes while --max-in-flight requests are outstanding.
    #[arg(long, value_enum, default_value_t = Overflow::Late)]
    pub overflow: Overflow,
    /// A request sent this long after its intended time counts as late.
    #[arg(long, default_value = "10ms")]
    pub late_after: String,
    /// Wake the pacer at most once per this period and send every request due by
    /// then (0 = wake for each request). Saves CPU above ~10k rps; the wait counts
    /// in the latency from the intended time, so it costs up to this much accuracy.
    #[arg(long, default_value = "0ms")]
    pub pacing_quantum: String,
    /// Per-request timeout from the actual send (connect + response).
    #[arg(long, default_value = "5s")]
    pub timeout: String,
    /// Send `Connection: close` and open a new connection per request.
    #[arg(long)]
    pub no_keepalive: bool,
    /// Leave Nagle's algorithm on for our sockets (TCP_NODELAY is set by default).
    #[arg(long)]
    pub nagle: bool,
    /// Re-arm TCP_QUICKACK after each read: our ACKs are never delayed, which
    /// avoids ~40 ms Nagle/delayed-ACK stalls with servers that write a
    /// response in two pieces.
    #[arg(long)]
    pub quickack: bool,
    /// A gap this long between two reads of one response is reported as a stall.
    #[arg(long, default_value = "30ms")]
    pub stall_after: String,
    /// Status codes that count as success: list and ranges, e.g. 200-299,304.
    #[arg(long, default_value = "200-299")]
    pub ok_status: String,
    /// Success also requires the response body to contain this text.
    #[arg(long)]
    pub expect_body: Option<String>,
    /// Allow targets inside this private range (repeatable), e.g. the emulated network 10.0.0.0/8.
    #[arg(long = "allow-target", value_name = "CIDR")]
    pub allow_targets: Vec<String>,
    /// Continuous failure: a run of at least this many consecutive failed requests …
    #[arg(long, default_value_t = 20)]
    pub continuous_run: u64,
    /// … that also spans at least this long (intended time of first to last failure).
    #[arg(long, default_value = "100ms")]
    pub continuous_span: String,
    /// Exit 1 unless sent/target ≥ this (ratio or percentage). 0 disables.
    #[arg(long, default_value = "0.99")]
    pub min_achieved: String,
    /// Exit 1 unless requests sent on time (not late) / target ≥ this. 0 disables.
    #[arg(long, default_value = "0")]
    pub min_on_time: String,
    /// Exit 1 if failed / answered exceeds this (e.g. 1%).
    #[arg(long)]
    pub max_error_rate: Option<String>,
    /// Exit 1 if the run's p99 latency (from intended time) exceeds this, e.g. 200ms.
    #[arg(long)]
    pub max_p99: Option<String>,
    /// Worker threads for the I/O runtime (default: number of CPUs).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Open this many keep-alive connections before the clock starts (like wrk's -c),
    /// so the first second does not also measure connection setup. At most --max-in-flight.
    #[arg(long, default_value_t = 0)]
    pub preconnect: u32,
}

/// Everything a run needs, checked.
pub struct Config {
    pub url: String,
    pub target: Target,
    pub prepared: Vec<Prepared>,
    pub weights: Vec<u32>,
    pub schedule: Schedule,
    pub max_in_flight: u32,
    pub overflow: Overflow,
    pub late_after: Duration,
    pub pacing_quantum: Duration,
    pub timeout: Duration,
    pub keep_alive: bool,
    pub conn: ConnOptions,
    pub ok_status: Vec<(u16, u16)>,
    pub expect_body: Option<Vec<u8>>,
    pub pattern: PatternThresholds,
    pub min_achieved: f64,
    pub min_on_time: f64,
    pub max_error_rate: Option<f64>,
    pub max_p99_ms: Option<f64>,
    pub threads: usize,
    pub preconnect: u32,
}

fn dur(s: &str) -> Result<Duration, String> {
    Ok(Duration::from_secs_f64(parse_duration_s(s)?))
}

/// Parses `200-299,304` into inclusive ranges.
pub fn parse_status_ranges(s: &str) -> Result<Vec<(u16, u16)>, String> {
    s.split(',')
        .map(|part| {
            let part = part.trim();
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let a: u16 = a
                .trim()
                .parse()
                .map_err(|_| format!("--ok-status '{s}': bad code '{a}'"))?;
            let b: u16 = b
                .trim()
                .parse()
                .map_err(|_| format!("--ok-status '{s}': bad code '{b}'"))?;
            if !(100..=599).contains(&a) || !(100..=599).contains(&b) || a > b {
                return Err(format!(
                    "--ok-status '{s}': codes must be 100-599, low-high"
                ));
            }
            Ok((a, b))
        })
        .collect()
}

impl Args {
    /// Checks every flag and builds the run configuration; refuses disallowed targets.
    pub fn into_config(self) -> Result<Config, String> {
        let target = parse_url(&self.url)?;
        let allowed = self
            .allow_targets
            .iter()
            .map(|c| Cidr::parse(c))
            .collect::<Result<Vec<_>, _>>()?;
        check_allowed(target.addr.ip(), &allowed)?;

        let mut stages = Vec::new();
        match (&self.rate, &self.duration) {
            (Some(r), Some(d)) => stages.push(Stage::Constant {
                rps: parse_rate(r)?,
                secs: parse_duration_s(d)?,
            }),
            (None, None) => {}
            _ => return Err("--rate and --duration go together (or use --stage)".into()),
        }
        for s in &self.stages {
            stages.extend(Stage::parse(s)?);
        }
        if stages.is_empty() {
            return Err("no schedule: give --rate and --duration, or one or more --stage".into());
        }
        let schedule = Schedule::new(&stages)?;

        let mut templates: Vec<Template> = self
            .requests
            .iter()
            .map(|r| Template::from_shorthand(r))
            .collect::<Result<_, _>>()?;
        if let Some(path) = &self.requests_file {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("--requests {path}: {e}"))?;
            templates.extend(Template::from_json(&text)?);
        }
        if templates.is_empty() {
            templates.push(Template::from_shorthand("GET /")?);
        }
        let headers = self
            .headers
            .iter()
            .map(|h| {
                h.split_once(':')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .ok_or_else(|| format!("--header '{h}': expected 'Name: value'"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let keep_alive = !self.no_keepalive;
        let common = Common {
            headers,
            basic_auth: self.basic_auth.clone(),
            keep_alive,
        };
        let prepared = templates
            .iter()
            .map(|t| render(t, &target, &common))
            .collect::<Result<Vec<_>, _>>()?;
        let weights = templates.iter().map(|t| t.weight).collect();

        if self.max_in_flight == 0 {
            return Err("--max-in-flight must be at least 1".into());
        }
        let threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        });
        Ok(Config {
            url: self.url.clone(),
            target,
            prepared,
            weights,
            schedule,
            max_in_flight: self.max_in_flight,
            overflow: self.overflow,
            late_after: dur(&self.late_after)?,
            pacing_quantum: dur(&self.pacing_quantum)?,
            timeout: dur(&self.timeout)?,
            keep_alive,
            conn: ConnOptions {
                nodelay: !self.nagle,
                quickack: self.quickack,
                stall_after: dur(&self.stall_after)?,
            },
            ok_status: parse_status_ranges(&self.ok_status)?,
            expect_body: self.expect_body.map(String::into_bytes),
            pattern: PatternThresholds {
                min_run: self.continuous_run.max(1),
                min_span_s: parse_duration_s(&self.continuous_span)?,
            },
            min_achieved: parse_fraction(&self.min_achieved)?,
            min_on_time: parse_fraction(&self.min_on_time)?,
            max_error_rate: self
                .max_error_rate
                .as_deref()
                .map(parse_fraction)
                .transpose()?,
            max_p99_ms: self
                .max_p99
                .as_deref()
                .map(|s| parse_duration_s(s).map(|v| v * 1000.0))
                .transpose()?,
            threads: threads.max(1),
            preconnect: if keep_alive {
                self.preconnect.min(self.max_in_flight)
            } else {
                0
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> Args {
        let mut v = vec!["sdnbench-apiload"];
        v.extend_from_slice(extra);
        Args::try_parse_from(v).unwrap()
    }

    #[test]
    fn status_ranges() {
        assert_eq!(
            parse_status_ranges("200-299,304").unwrap(),
            vec![(200, 299), (304, 304)]
        );
        assert!(parse_status_ranges("299-200").is_err());
        assert!(parse_status_ranges("abc").is_err());
    }

    #[test]
    fn refuses_before_anything_is_sent() {
        let e = args(&[
            "--url",
            "http://10.0.0.1:8080",
            "--rate",
            "10rps",
            "--duration",
            "1s",
        ])
        .into_config()
        .err()
        .unwrap();
        assert!(e.contains("refusing"), "{e}");
        let ok = args(&[
            "--url",
            "http://10.0.0.1:8080",
            "--rate",
            "10rps",
            "--duration",
            "1s",
            "--allow-target",
            "10.0.0.0/8",
        ]);
        assert!(ok.into_config().is_ok());
    }

    #[test]
    fn schedule_flags_combine() {
        let c = args(&[
            "--url",
            "http://127.0.0.1:1",
            "--stage",
            "ramp:0rps:100rps:2s",
            "--stage",
            "const:100rps:1s",
        ])
        .into_config()
        .ok()
        .unwrap();
        assert_eq!(c.schedule.total_requests(), 200);
        assert!(args(&["--url", "http://127.0.0.1:1", "--rate", "10rps"])
            .into_config()
            .is_err());
        assert!(args(&["--url", "http://127.0.0.1:1"])
            .into_config()
            .is_err());
    }
}
