"""ping engine: iputils ping with `-D` timestamps, parsed from its per-reply lines.

Each reply line (`[epoch] N bytes from IP: icmp_seq=S ttl=T time=R ms`) is
stable across iputils versions and carries everything needed: RTT statistics,
jitter (mean absolute difference of consecutive RTTs) and a per-second series
are computed here from those lines. The number of requests sent comes from
the statistics line ("N packets transmitted"), read defensively: when it is
missing, the requested count stands in.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import ToolError
from .base import FlowResult, FlowSpec, HostHandle
from .runner import (ToolEngine, availability_of, deadline_s, loss_metrics, mean_abs_diff, packet_rate,
                     rate_shortfall, raw_text, read_text, require_host, spread_stats, tool_version)

TOOL = "ping"
REPLY = re.compile(r"^\[(?P<ts>\d+(?:\.\d+)?)\]\s+\d+ bytes from [^:]+: icmp_seq=(?P<seq>\d+)"
                   r" ttl=\d+ time=(?P<rtt>\d+(?:\.\d+)?) ms(?P<dup> \(DUP!\))?")
TRANSMITTED = re.compile(r"^(\d+) packets transmitted", re.MULTILINE)


@dataclass(frozen=True)
class Reply:
    """One echo reply: arrival time (epoch s), sequence number, RTT (ms)."""

    t_s: float
    seq: int
    rtt_ms: float


def parse_replies(text: str) -> list[Reply]:
    """The first reply per icmp_seq from `ping -D` output (duplicates dropped), in arrival order."""
    seen, replies = set(), []
    for line in text.splitlines():
        m = REPLY.match(line.strip())
        if not m or m["dup"]:
            continue
        seq = int(m["seq"])
        if seq in seen:
            continue
        seen.add(seq)
        replies.append(Reply(float(m["ts"]), seq, float(m["rtt"])))
    return replies


def parse_transmitted(text: str) -> int | None:
    """'N packets transmitted' from ping's statistics line, None when absent."""
    m = TRANSMITTED.search(text)
    return int(m[1]) if m else None


def ping_metrics(text: str, requested: int | None = None) -> dict[str, float | None]:
    """Loss, RTT statistics and jitter from one ping run's output."""
    replies = parse_replies(text)
    tx = parse_transmitted(text)
    if tx is None:
        tx = requested
    m = loss_metrics(tx, len(replies))
    rtts = [r.rtt_ms for r in replies]
    m.update(spread_stats(rtts, "rtt"))
    m["jitter_ms"] = mean_abs_diff(rtts)
    m["tx_rate_pps"] = send_rate(replies)
    return m


def send_rate(replies: list[Reply]) -> float | None:
    """Requests sent per second: icmp_seq advance over reply-time span (ping may lag its -i)."""
    if len(replies) < 2:
        return None
    first, last = min(replies, key=lambda r: r.seq), max(replies, key=lambda r: r.seq)
    span = last.t_s - first.t_s
    return (last.seq - first.seq) / span if span > 0 else None


def ping_series(text: str) -> list[dict[str, float]]:
    """Per-second rows (t_s from the first reply): replies received and their mean RTT."""
    replies = parse_replies(text)
    if not replies:
        return []
    t0 = replies[0].t_s
    buckets: dict[int, list[float]] = {}
    for r in replies:
        buckets.setdefault(int(r.t_s - t0), []).append(r.rtt_ms)
    return [{"t_s": float(sec), "rx_pkts": float(len(v)), "rtt_mean_ms": sum(v) / len(v)}
            for sec, v in sorted(buckets.items())]


def ping_argv(flow: FlowSpec, dst_ip: str) -> list[str]:
    """ping's command line: count from count or duration x rate, interval from the rate."""
    rate = packet_rate(flow) or 1.0
    count = flow.count or (math.ceil(flow.duration_s * rate) if flow.duration_s else None)
    if not count:
        raise ToolError(f"ping: flow {flow.flow_id!r} needs count or duration_s")
    argv = ["ping", "-D", "-n", "-c", str(count), "-i", f"{1.0 / rate:.6f}",
            # -W: wait at most this long for the last replies, so a lost tail cannot stall the run.
            "-W", str(flow.options.get("reply_timeout_s", 1))]
    if flow.size_bytes is not None:
        argv += ["-s", str(flow.size_bytes)]
    return argv + [dst_ip]


class PingEngine(ToolEngine):
    """ICMP echo at a fixed interval and size; round-trip metrics only."""

    name = TOOL
    protocols = ("icmp",)

    @classmethod
    def availability(cls):
        """iputils ping (intervals below 0.2 s need root, which sdnbench has)."""
        return availability_of(["ping"], "iputils-ping", "ping traffic engine")

    def version(self) -> str:
        """e.g. 'ping from iputils 20221126'."""
        return tool_version(["ping", "-V"], "iputils")

    def run(self, flows: list[FlowSpec], hosts: dict[str, HostHandle], workdir: Path) -> list[FlowResult]:
        """Start every ping at once (ping needs no receiver) and parse each one's replies."""
        workdir = self.check(flows, workdir)
        env = dict(os.environ, LC_ALL="C")
        with self.processes(workdir) as procs:
            started = []
            for flow in flows:
                src = require_host(hosts, flow.src, TOOL, flow.flow_id)
                dst = require_host(hosts, flow.dst, TOOL, flow.flow_id)
                started.append(procs.start(src, ping_argv(flow, dst.IP()), TOOL, flow.flow_id, "sender",
                                           f"{flow.flow_id}.{TOOL}", "txt", env=env))
            # Exit code 1 means some or all replies were missing: a measurement, not a failure.
            procs.wait_all(started, max(deadline_s(f) for f in flows), ok_codes=(0, 1))
        results = []
        for flow, proc in zip(flows, started):
            text = read_text(proc.stdout_path)
            if proc.returncode == 1 and parse_transmitted(text) is None:
                raise proc.fail("exited with code 1 and printed no statistics")
            result = FlowResult(flow.flow_id, TOOL, ping_metrics(text, flow.count), ping_series(text))
            result.errors += rate_shortfall(TOOL, flow, result.metrics["tx_rate_pps"])
            result.raw[proc.stdout_path.name] = raw_text(proc.stdout_path)
            results.append(result)
        return results
