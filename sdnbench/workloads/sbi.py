"""Southbound load (the `sbi` workload): run sdnbench-ofload against a controller's OpenFlow port.

sdnbench-ofload emulates N OpenFlow 1.0/1.3 switches, raises PACKET_INs and
matches the controller's FLOW_MOD/PACKET_OUT answers. This module builds its
command line, runs it, reads its JSON Lines (never its human text) and
returns the metrics a campaign tabulates. It knows nothing about campaigns:
give it an endpoint, get an SbiResult.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from dataclasses import dataclass, field

from ..errors import ToolError
from ..metrics import HIGHER, LOWER, Metric, by_name
from ..paths import build_hint, native_tool
from .jsonlines import read_output

TOOL = "sdnbench-ofload"

# sdnbench-ofload numbers its switches from dpid 1 and gives each 4 ports, or in
# topology mode ports 1-2 for hosts plus one per switch link from port 3.
OFLOAD_FIRST_DPID = 1
OFLOAD_DEFAULT_PORTS = 4

#: Metrics an SbiResult carries (sdnbench.metrics); `valid` is a flag, 1.0 or 0.0 once stored.
METRICS: dict[str, Metric] = by_name(
    Metric("responses_per_s_mean", "responses/s",
           "FLOW_MOD + PACKET_OUT answers per second, mean over measured loops", HIGHER, shown=True),
    Metric("latency_p50_us", "us", "median PACKET_IN -> answer latency", LOWER, shown=True),
    Metric("latency_p99_us", "us", "99th percentile latency", LOWER, shown=True),
    Metric("valid", "bool", "false when the generator saturated its cores or switches failed to connect",
           HIGHER, shown=True),
    Metric("responses_per_s_sd", "responses/s", "sample standard deviation over measured loops"),
    Metric("responses_per_s_min", "responses/s", "slowest measured loop", HIGHER),
    Metric("responses_per_s_max", "responses/s", "fastest measured loop", HIGHER),
    Metric("matched_per_s_mean", "requests/s", "PACKET_INs answered per second (first answer only)", HIGHER),
    Metric("latency_p90_us", "us", "90th percentile latency", LOWER),
    Metric("latency_max_us", "us", "largest latency", LOWER),
    Metric("latency_mean_us", "us", "mean latency", LOWER),
    Metric("unmatched", "messages", "answers that tie to no PACKET_IN", LOWER),
    Metric("duplicates", "messages", "further answers to an already answered PACKET_IN", LOWER),
    Metric("timeouts", "requests", "PACKET_INs unanswered within the timeout", LOWER),
    Metric("decode_errors", "messages", "controller messages that could not be decoded", LOWER),
    Metric("switches_connected", "switches", "switches that completed the handshake", HIGHER),
    Metric("generator_cores_used", "cores", "CPU the generator itself used while measuring (busy-polling: "
                                            "the time it was not polling idle)"),
    Metric("path_setup_p50_us", "us", "multi-hop flow setup (PACKET_IN at ingress to FLOW_MOD at egress), "
                                      "median; --paths only", LOWER),
    Metric("path_setup_p99_us", "us", "multi-hop flow setup, 99th percentile; --paths only", LOWER),
    Metric("paths_completed", "flows", "FLOW_MODs that reached the egress switch of their path; --paths only",
           HIGHER),
)


@dataclass
class OfloadOptions:
    """How to load the controller; names mirror sdnbench-ofload's flags."""

    switches: int = 16
    macs_per_switch: int = 1000
    loops: int = 6
    ms_per_loop: int = 1000
    warmup_loops: int = 1
    throughput: bool = True
    window: int | None = None          # outstanding PACKET_INs per switch (throughput mode)
    ports: int | None = None
    threads: int | None = None         # generator worker threads (None: ofload's default, half the usable CPUs)
    busy_poll: bool = False            # never sleep (only when the generator has cores of its own)
    buffered: bool = True              # False: unbuffered PACKET_INs, matched by content
    learn_dst: bool = True
    timeout_ms: int | None = None
    connect_timeout_s: float = 30.0
    topology_file: str | None = None   # topology-aware mode: JSON from topology_links()
    paths: bool = False                # with topology_file: multi-hop flow setup to the farthest switch
    tls_ca: str | None = None          # connect with TLS, trusting this CA (PEM)
    tls_cert: str | None = None        # client certificate (PEM), with tls_key
    tls_key: str | None = None
    packet_in_reason: str | None = None  # "no-match" (ofload's default) or "action"
    packet_in_table: int | None = None   # 1.3 only
    packet_in_cookie: int | None = None  # 1.3 only
    vlan: int | None = None              # tag the frames with this 802.1Q VID
    extra_args: list[str] = field(default_factory=list)


@dataclass
class SbiResult:
    """Metrics of one sdnbench-ofload run plus everything it printed."""

    metrics: dict[str, float | int | bool | None]
    summary: dict
    intervals: list[dict]
    argv: list[str]
    returncode: int
    raw: str
    stderr: str


def ofload_argv(binary: str, host: str, port: int, of_version: str, opts: OfloadOptions) -> list[str]:
    """The sdnbench-ofload command line for one run."""
    if of_version not in ("1.0", "1.3"):
        raise ValueError(f"OpenFlow version {of_version!r}: use '1.0' or '1.3'")
    argv = [binary, "-c", host, "-p", str(port), "-V", of_version, "-s", str(opts.switches),
            "-M", str(opts.macs_per_switch), "-l", str(opts.loops), "-m", str(opts.ms_per_loop),
            "-w", str(opts.warmup_loops), "--connect-timeout", f"{opts.connect_timeout_s}s"]
    if opts.throughput:
        argv.append("-t")
        if opts.window:
            argv += ["-W", str(opts.window)]
    if opts.ports:
        argv += ["-P", str(opts.ports)]
    if opts.threads:
        argv += ["-T", str(opts.threads)]
    if opts.busy_poll:
        argv.append("--busy-poll")
    if not opts.buffered:
        argv.append("--no-buffer")
    if not opts.learn_dst:
        argv.append("--no-learn-dst")
    if opts.timeout_ms:
        argv += ["--timeout", f"{opts.timeout_ms}ms"]
    if opts.topology_file:
        argv += ["--topology", str(opts.topology_file)]
        if opts.paths:
            argv.append("--paths")
    for flag, value in (("--packet-in-reason", opts.packet_in_reason), ("--packet-in-table", opts.packet_in_table),
                        ("--packet-in-cookie", opts.packet_in_cookie), ("--vlan", opts.vlan)):
        if value is not None:
            argv += [flag, str(value)]
    if opts.tls_ca:
        argv += ["--tls", "--tls-ca", str(opts.tls_ca)]
        if opts.tls_cert and opts.tls_key:
            argv += ["--tls-cert", str(opts.tls_cert), "--tls-key", str(opts.tls_key)]
    return argv + list(opts.extra_args)


def apply_profile(opts: OfloadOptions, profile) -> OfloadOptions:
    """opts adapted to a controller's SouthboundProfile (see ControllerAdapter.southbound_profile):
    its PACKET_IN reason, table, cookie and VLAN; at least its hosts per switch; its
    throughput window unless opts sets one."""
    changes = {"macs_per_switch": max(opts.macs_per_switch, profile.min_macs_per_switch)}
    if profile.packet_in_reason != "no-match":
        changes["packet_in_reason"] = profile.packet_in_reason
    if profile.packet_in_table:
        changes["packet_in_table"] = profile.packet_in_table
    if profile.packet_in_cookie:
        changes["packet_in_cookie"] = profile.packet_in_cookie
    if profile.vlan is not None:
        changes["vlan"] = profile.vlan
    if opts.throughput and not opts.window and profile.throughput_window:
        changes["window"] = profile.throughput_window
    return dataclasses.replace(opts, **changes)


def topology_links(graph) -> dict:
    """The --topology file content for a TopologyGraph: switch-switch links, ports numbered from 3 per switch.

    Switch i of the graph (in graph.switches order) is emulated switch i
    (dpid = --dpid-offset + i); ports 1 and 2 carry the emulated test hosts.
    """
    index = {sw.name: i for i, sw in enumerate(graph.switches)}
    next_port = {name: 3 for name in index}
    links = []
    for link in graph.links:
        if link.a in index and link.b in index:
            pa, pb = next_port[link.a], next_port[link.b]
            next_port[link.a], next_port[link.b] = pa + 1, pb + 1
            links.append([index[link.a], pa, index[link.b], pb])
    return {"links": links}


def parse_output(stdout: str) -> tuple[list[dict], dict | None, list[str]]:
    """Split JSON Lines into (interval data, summary data, error messages)."""
    out = read_output(stdout, TOOL)
    return out.intervals, (out.summaries[-1] if out.summaries else None), out.errors


def metrics_from_summary(s: dict) -> dict[str, float | int | bool | None]:
    """Flatten an ofload summary into the METRICS names."""
    rate, matched = s.get("responses_per_s") or {}, s.get("matched_per_s") or {}
    lat, totals = s.get("latency_us") or {}, s.get("totals") or {}
    gen = s.get("generator_cpu") or {}  # cores_busy when busy-polling: the time not spent polling idle
    return {
        "responses_per_s_mean": rate.get("mean"), "responses_per_s_sd": rate.get("sd"),
        "responses_per_s_min": rate.get("min"), "responses_per_s_max": rate.get("max"),
        "matched_per_s_mean": matched.get("mean"),
        "latency_p50_us": lat.get("p50"), "latency_p90_us": lat.get("p90"), "latency_p99_us": lat.get("p99"),
        "latency_max_us": lat.get("max"), "latency_mean_us": lat.get("mean"),
        "unmatched": totals.get("unmatched"), "duplicates": totals.get("duplicates"),
        "timeouts": totals.get("timeouts"), "decode_errors": (s.get("totals_all_phases") or totals).get("decode_errors"),
        "switches_connected": s.get("switches_connected"),
        "generator_cores_used": gen.get("cores_busy", gen.get("cores_used")),
        "path_setup_p50_us": ((s.get("paths") or {}).get("setup_us") or {}).get("p50"),
        "path_setup_p99_us": ((s.get("paths") or {}).get("setup_us") or {}).get("p99"),
        "paths_completed": (s.get("paths") or {}).get("completed"),
        "valid": bool(s.get("valid")),
    }


def run_ofload(host: str, port: int, of_version: str = "1.0", opts: OfloadOptions | None = None,
               cpus: list[int] | None = None) -> SbiResult:
    """Run sdnbench-ofload against host:port and return its metrics; ToolError when it cannot run."""
    opts = opts or OfloadOptions()
    binary = native_tool(TOOL)
    if binary is None:
        raise ToolError(f"{TOOL} is not built: {build_hint(TOOL)}")
    argv = ofload_argv(str(binary), host, port, of_version, opts)
    budget_s = opts.connect_timeout_s + opts.loops * opts.ms_per_loop / 1000 + 30
    preexec = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=budget_s, preexec_fn=preexec)
    except subprocess.TimeoutExpired as e:
        raise ToolError(f"{TOOL} did not finish within {budget_s:.0f} s: {' '.join(argv)}") from e
    intervals, summary, errors = parse_output(proc.stdout)
    if proc.returncode == 2 or summary is None:
        why = "; ".join(errors) or proc.stderr.strip()[-300:] or f"exit code {proc.returncode}"
        raise ToolError(f"{TOOL} against {host}:{port} (OpenFlow {of_version}) failed: {why}")
    return SbiResult(metrics_from_summary(summary), summary, intervals, argv, proc.returncode, proc.stdout, proc.stderr)


def mean_ci95(values: list[float]) -> dict[str, float | int | None]:
    """Mean, sample sd and the 95% confidence half-width of repeated measurements (analysis.stats)."""
    from ..analysis.stats import summarize

    s = summarize(values)
    if s is None:
        return {"n": 0, "mean": None, "sd": None, "ci95": None}
    if s.n == 1:
        return {"n": 1, "mean": s.mean, "sd": None, "ci95": None}
    return {"n": s.n, "mean": s.mean, "sd": s.sd, "ci95": s.ci95}


def aggregate(results: list[SbiResult]) -> dict[str, dict]:
    """Per metric, mean / sd / 95% CI across repetitions (each repetition is one ofload run)."""
    numeric = [k for k, m in METRICS.items() if m.unit != "bool"]
    table = {k: mean_ci95([r.metrics.get(k) for r in results]) for k in numeric}
    table["valid"] = {"n": len(results), "all": all(r.metrics.get("valid") for r in results)}
    return table


def run_repeated(host: str, port: int, of_version: str, opts: OfloadOptions | None = None,
                 repetitions: int = 3, cpus: list[int] | None = None) -> tuple[list[SbiResult], dict[str, dict]]:
    """Run ofload `repetitions` times against one controller; return the runs and their aggregate."""
    runs = [run_ofload(host, port, of_version, opts, cpus) for _ in range(repetitions)]
    return runs, aggregate(runs)
