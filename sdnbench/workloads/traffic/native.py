"""The native traffic engine: sdnbench-tgen receivers on destination hosts, senders on sources.

Each flow gets its own receiver process (one port) so results never mix; the
receiver prints a "listening" line on stderr before any sender starts, and
ends by itself once the sender's end marker arrived. ICMP flows are measured
with UDP echo probes (request/response, like ping) so they carry nanosecond
timestamps and sequence numbers.
"""

from __future__ import annotations

import math
import signal
import subprocess
import threading
import time
from pathlib import Path

from sdnbench.controllers.base import Availability
from sdnbench.errors import ConfigError, ToolError
from sdnbench.paths import build_hint, native_tool
from sdnbench.procs import OwnedProcess, finish_by, spawn_in, stop_processes
from sdnbench.workloads.jsonlines import read_records
from sdnbench.workloads.traffic.base import METRICS, FlowResult, FlowSpec, HostHandle, TrafficEngine

TOOL = "sdnbench-tgen"
#: FlowSpec.options keys this engine understands, and the flag each becomes.
OPTION_FLAGS = {
    "pattern": "--pattern", "on": "--on", "off": "--off", "preset": "--preset",
    "payload_dist": "--payload-dist", "min_rate_ratio": "--min-rate-ratio",
    "write_size": "--write-size", "batch": "--batch", "seed": "--seed", "flows": "--flows",
    "video_bitrate": "--video-bitrate", "fps": "--fps", "gop": "--gop", "i_ratio": "--i-ratio",
    "frame_noise": "--frame-noise", "late_threshold": "--late-threshold",
}
BOOL_OPTIONS = {"silence_suppression": "--silence-suppression", "exponential_onoff": "--exponential-onoff",
                "gso": "--gso"}
#: Options for the receiving side only.
RECV_OPTION_FLAGS = {"playout_buffer": "--playout-buffer", "interval": "--interval"}
FIRST_PORT = 5201


def _fmt(x: float) -> str:
    """A number for a flag value without a trailing .0."""
    return f"{x:g}" if float(x) != int(x) else str(int(x))


def sender_argv(tool: str, flow: FlowSpec, dst_ip: str, port: int) -> list[str]:
    """The sdnbench-tgen send command line for one flow."""
    known = set(OPTION_FLAGS) | set(BOOL_OPTIONS) | set(RECV_OPTION_FLAGS)
    unknown = set(flow.options) - known
    if unknown:
        raise ConfigError(f"unknown option(s) {sorted(unknown)} for the native engine; known: {sorted(known)}",
                          key=f"flows.{flow.flow_id}")
    proto = "tcp" if flow.proto == "tcp" else "udp"
    argv = [tool, "send", "--proto", proto, "--to", f"{dst_ip}:{port}"]
    if proto == "tcp":
        if flow.volume_bytes:
            argv += ["--size", f"{flow.volume_bytes}B"]
        else:
            argv += ["--duration", f"{_fmt(flow.duration_s or 10)}s"]
        if flow.size_bytes:
            argv += ["--write-size", f"{flow.size_bytes}B"]
    else:
        if flow.size_bytes:
            argv += ["--payload", f"{flow.size_bytes}B"]
        if flow.rate_pps:
            argv += ["--rate", f"{_fmt(flow.rate_pps)}pps"]
        elif flow.rate_bps:
            argv += ["--rate", f"{_fmt(flow.rate_bps)}bps"]
        if flow.count:
            argv += ["--count", str(flow.count)]
        if flow.duration_s or not flow.count:
            argv += ["--duration", f"{_fmt(flow.duration_s or 10)}s"]
        if flow.meter == "rtt" or flow.proto == "icmp":
            argv += ["--echo"]
    for key, value in flow.options.items():
        if key in OPTION_FLAGS and not (proto == "tcp" and key != "write_size"):
            argv += [OPTION_FLAGS[key], str(value)]
        elif key in BOOL_OPTIONS and value:
            argv.append(BOOL_OPTIONS[key])
    return argv


def receiver_argv(tool: str, flow: FlowSpec, dst_ip: str, port: int, max_s: float) -> list[str]:
    """The sdnbench-tgen recv command line for one flow."""
    proto = "tcp" if flow.proto == "tcp" else "udp"
    argv = [tool, "recv", "--proto", proto, "--bind", f"{dst_ip}:{port}", "--duration", f"{math.ceil(max_s)}s"]
    if proto == "udp":
        argv += ["--expect-flows", str(int(flow.options.get("flows", 1)))]
        if flow.meter == "rtt" or flow.proto == "icmp":
            argv.append("--echo")
        for key, flag in RECV_OPTION_FLAGS.items():
            if key in flow.options:
                argv += [flag, str(flow.options[key])]
    return argv


def expected_seconds(flow: FlowSpec) -> float:
    """How long a flow should take, for time-outs (generous for TCP by volume)."""
    if flow.duration_s:
        return flow.duration_s
    if flow.count and flow.rate_pps:
        return flow.count / flow.rate_pps
    if flow.volume_bytes:
        return max(10.0, flow.volume_bytes * 8 / 50e6)
    return 10.0


def read_lines(text: str) -> list[dict]:
    """JSON lines of one tool output; lines that are not envelopes raise ToolError."""
    return read_records(text, TOOL)


def _summaries(records: list[dict], role: str) -> list[dict]:
    return [r["data"] for r in records if r.get("type") == "summary" and r["data"].get("role") == role]


def _errors(records: list[dict]) -> list[str]:
    return [r["data"].get("message", "") for r in records if r.get("type") == "error"]


def _sum(rows: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return sum(vals) if vals else None


def _weighted(rows: list[dict], key: str, weight: str = "rx_pkts") -> float | None:
    pairs = [(r[key], r.get(weight) or 0) for r in rows if r.get(key) is not None]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total else None


def udp_metrics(tx: list[dict], rx: list[dict], rtt: bool) -> dict[str, float | None]:
    """Common-schema metrics of a UDP flow (all its sub-flows added up)."""
    src = tx if rtt else rx
    prefix = "rtt" if rtt else "owd"
    m: dict[str, float | None] = {
        "tx_pkts": _sum(tx, "tx_pkts"),
        "rx_pkts": _sum(src, "rx_pkts"),
        "loss_pkts": _sum(src, "loss_pkts"),
        "tx_rate_pps": _sum(tx, "tx_rate_pps"),
        "jitter_ms": _weighted(src, "jitter_ms"),
        f"{prefix}_mean_ms": _weighted(src, f"{prefix}_mean_ms"),
        f"{prefix}_min_ms": min((r[f"{prefix}_min_ms"] for r in src if r.get(f"{prefix}_min_ms") is not None), default=None),
        f"{prefix}_max_ms": max((r[f"{prefix}_max_ms"] for r in src if r.get(f"{prefix}_max_ms") is not None), default=None),
        f"{prefix}_sd_ms": src[0].get(f"{prefix}_sd_ms") if len(src) == 1 else None,
    }
    expected = _sum(src, "expected_pkts")
    m["loss_pct"] = 100.0 * m["loss_pkts"] / expected if expected and m["loss_pkts"] is not None else None
    one = len(src) == 1  # percentiles do not add up over sub-flows
    for q in ("p50", "p90", "p99") if prefix == "owd" else ("p50", "p99"):
        m[f"{prefix}_{q}_ms"] = src[0].get(f"{prefix}_{q}_ms") if one else None
    m["ipdv_mean_ms"] = _weighted(src, "ipdv_mean_ms")
    m["longest_gap_ms"] = max((r["longest_gap_ms"] for r in src if r.get("longest_gap_ms") is not None),
                              default=None)
    m["reordered_pkts"] = _sum(src, "reordered_pkts")
    m["duplicate_pkts"] = _sum(src, "duplicate_pkts")
    m["tx_late_pkts"] = _sum(tx, "late_pkts")
    requested, achieved = _sum(tx, "requested_pps"), _sum(tx, "tx_rate_pps")
    m["tx_rate_ratio"] = achieved / requested if requested and achieved is not None else None
    if not rtt:
        m["throughput_bps"] = _sum(rx, "rx_payload_bps")
        m["throughput_pps"] = _sum(rx, "rx_pps")
        m["l2_throughput_bps"] = _sum(rx, "rx_l2_bps")
        m["bytes"] = _sum(rx, "rx_payload_bytes")
        video = [r["video"] for r in rx if r.get("video")]
        if video:
            m["video_startup_ms"] = max((v["startup_delay_ms"] for v in video if v["startup_delay_ms"] is not None),
                                        default=None)
            m["video_stalls"] = float(sum(v["stalls"] for v in video))
            m["video_stall_s"] = sum(v["stall_total_ms"] for v in video) / 1000.0
    return m


def gap_end(summaries: list[dict]) -> dict[str, float]:
    """Unix time of the arrival that ended the longest silence of any sub-flow, if there was one."""
    gaps = [(r["longest_gap_ms"], r["longest_gap_end_ns"]) for r in summaries if r.get("longest_gap_end_ns")]
    return {"longest_gap_end": max(gaps)[1] / 1e9} if gaps else {}


def tcp_metrics(tx: list[dict], rx: list[dict]) -> dict[str, float | None]:
    """Common-schema metrics of a TCP bulk transfer."""
    s = tx[0] if tx else {}
    return {
        "tcp_connect_ms": s.get("tcp_connect_ms"),
        "transfer_time_s": s.get("transfer_time_s"),
        "bytes": rx[0].get("bytes") if rx else s.get("bytes_confirmed"),
        "throughput_bps": s.get("throughput_bps"),
        "retransmits": s.get("retransmits"),
    }


def interval_series(records: list[dict]) -> list[dict[str, float]]:
    """Receiver interval lines as a series in common metric names (summed over sub-flows)."""
    by_t: dict[float, dict[str, float]] = {}
    for r in records:
        if r.get("type") != "interval":
            continue
        d = r["data"]
        row = by_t.setdefault(d["t_s"], {"t_s": d["t_s"], "throughput_bps": 0.0, "throughput_pps": 0.0})
        row["throughput_bps"] += d["rx_payload_bps"]
        row["throughput_pps"] += d["rx_pps"]
        for key in ("owd_mean_ms", "jitter_ms"):
            if d.get(key) is not None:
                row[key] = d[key]
    return [by_t[t] for t in sorted(by_t)]


def flow_result(flow: FlowSpec, sender_out: str, receiver_out: str, sender_rc: int | None) -> FlowResult:
    """Parses one flow's sender and receiver JSON lines into a FlowResult."""
    res = FlowResult(flow_id=flow.flow_id, engine="native",
                     raw={f"{flow.flow_id}.send.jsonl": sender_out, f"{flow.flow_id}.recv.jsonl": receiver_out})
    try:
        s_rec, r_rec = read_lines(sender_out), read_lines(receiver_out)
    except ToolError as exc:
        res.errors.append(str(exc))
        return res
    tx, rx = _summaries(s_rec, "sender"), _summaries(r_rec, "receiver")
    res.errors += _errors(s_rec) + _errors(r_rec)
    rtt = flow.proto != "tcp" and (flow.meter == "rtt" or flow.proto == "icmp")
    if not tx:
        res.errors.append(f"{TOOL} sender printed no summary (exit code {sender_rc})")
    if not rx and not rtt:
        res.errors.append(f"{TOOL} receiver printed no summary")
    if flow.proto == "tcp":
        res.metrics = tcp_metrics(tx, rx)
    else:
        res.metrics = udp_metrics(tx, rx, rtt)
        res.series = interval_series(r_rec)
        res.timestamps = gap_end(tx if rtt else rx)
        if not rtt and rx and not all(r.get("owd_valid") for r in rx):
            res.errors.append("one-way delay withheld: sender and receiver do not share a clock")
        res.clock = "single-kernel CLOCK_REALTIME (sender and receiver share one clock)" if all(
            r.get("same_kernel") for r in rx) or rtt else "CLOCK_REALTIME on two kernels (declared synchronised)"
    if sender_rc == 1:
        res.errors.append("sender could not hold the requested rate (below --min-rate-ratio)")
    unknown = set(res.metrics) - set(METRICS)
    if unknown:
        raise ToolError(f"native engine produced metrics outside the schema: {sorted(unknown)}")
    return res


class _Stderr:
    """Collects a process's stderr in a thread and signals the 'listening' line."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace").rstrip()
            self.lines.append(line)
            if "listening on" in line:
                self.ready.set()
        self.ready.set()


class NativeEngine(TrafficEngine):
    """sdnbench's default traffic engine, backed by the sdnbench-tgen binary."""

    name = "native"
    protocols = ("udp", "tcp", "icmp")

    def __init__(self, binary: Path | None = None, ready_timeout_s: float = 5.0, slack_s: float = 15.0):
        self.binary = binary or native_tool(TOOL)
        self.ready_timeout_s = ready_timeout_s
        self.slack_s = slack_s

    @classmethod
    def availability(cls) -> Availability:
        """Available when sdnbench-tgen is built."""
        path = native_tool(TOOL)
        if path:
            return Availability(True, f"{TOOL} at {path}")
        return Availability(False, f"{TOOL} is not built", fix=build_hint(TOOL))

    def _tool(self) -> str:
        if not self.binary:
            raise ToolError(f"{TOOL} not found; build it: {build_hint(TOOL)}")
        return str(self.binary)

    def version(self) -> str:
        """The tool's version string, e.g. 'sdnbench-tgen 0.1.0'."""
        out = subprocess.run([self._tool(), "--version"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip()

    def run(self, flows: list[FlowSpec], hosts: dict[str, HostHandle], workdir: Path) -> list[FlowResult]:
        """Start every receiver, wait until each listens, start all senders, collect results."""
        tool = self._tool()
        workdir.mkdir(parents=True, exist_ok=True)
        for f in flows:
            if f.proto not in self.protocols:
                raise ConfigError(f"protocol {f.proto!r} is not supported by the native engine", key=f.flow_id)
        longest = max((expected_seconds(f) for f in flows), default=0.0)
        procs: list[OwnedProcess] = []
        try:
            receivers = []
            for i, f in enumerate(flows):
                port = f.port or FIRST_PORT + i
                dst_ip = hosts[f.dst].IP()
                p = spawn_in(hosts[f.dst], receiver_argv(tool, f, dst_ip, port, longest + self.slack_s),
                             f"{TOOL}-receiver", stdout=workdir / f"{f.flow_id}.recv.jsonl", stderr=subprocess.PIPE)
                procs.append(p)
                receivers.append((p, _Stderr(p.popen.stderr), port, dst_ip))
            for f, (p, err, _, _) in zip(flows, receivers):
                if not err.ready.wait(self.ready_timeout_s) or not p.alive():
                    raise ToolError(f"{TOOL} receiver for {f.flow_id} did not start: {' | '.join(err.lines[-3:])}")
            senders = []
            for f, (_, _, port, dst_ip) in zip(flows, receivers):
                p = spawn_in(hosts[f.src], sender_argv(tool, f, dst_ip, port), f"{TOOL}-sender",
                             stdout=workdir / f"{f.flow_id}.send.jsonl", stderr=workdir / f"{f.flow_id}.send.err")
                procs.append(p)
                senders.append(p)
            # Past the deadline SIGTERM: the tool still prints its summary.
            deadline = time.monotonic() + longest + self.slack_s
            codes = finish_by(senders, deadline, signal.SIGTERM, 5.0)
            finish_by([r[0] for r in receivers], deadline + 5, signal.SIGTERM, 5.0)
        finally:
            stop_processes(procs, signal.SIGKILL, 0.0)
        return [flow_result(f, (workdir / f"{f.flow_id}.send.jsonl").read_text(),
                            (workdir / f"{f.flow_id}.recv.jsonl").read_text(), rc)
                for f, rc in zip(flows, codes)]
