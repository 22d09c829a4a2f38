"""iperf3 engine: one one-shot server (`-s -1 -J`) per flow, one client per flow, JSON results.

TCP runs the client on the source host (it sends). UDP runs in reverse mode
(`-R`): the server sits on the source host and sends, the client on the
destination host receives. iperf3's server stops reading as soon as the
client announces the end of the test, so in forward mode the last datagram
in flight is regularly missed and not even counted as lost (esnet/iperf
#252; 999 of 1000 here). In reverse mode the receiving client reads until the
sender's end, and a count of N datagrams arrives as N. Set the flow option
`reverse: false` to get forward mode anyway.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ...errors import ToolError
from .base import FlowResult, FlowSpec, HostHandle
from .runner import (PortPicker, ToolEngine, availability_of, deadline_s, finite, loss_metrics,
                     rate_shortfall, raw_text, read_text, require_host, tool_version)

TOOL = "iperf3"


def load_report(text: str, flow_id: str, side: str) -> dict:
    """An iperf3 -J report; ToolError when it is not JSON or carries iperf3's "error"."""
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolError(f"iperf3 {side} for flow {flow_id!r}: output is not JSON ({exc}): "
                        f"{text.strip()[-200:]!r}") from None
    if report.get("error"):
        raise ToolError(f"iperf3 {side} for flow {flow_id!r}: {report['error']}")
    return report


def _f(d: dict, key: str) -> float | None:
    """d[key] as float, None when absent."""
    v = d.get(key)
    return finite(float(v)) if isinstance(v, (int, float)) else None


def tcp_metrics(sender: dict, receiver: dict | None = None, by_volume: bool = False) -> dict[str, float | None]:
    """Metrics of a TCP test from the sender's (client's) report; receiver's report for its series."""
    end = sender.get("end", {})
    sent, recvd = end.get("sum_sent", {}), end.get("sum_received", {})
    m: dict[str, float | None] = {
        "throughput_bps": _f(recvd, "bits_per_second"),
        "bytes": _f(recvd, "bytes"),
        "retransmits": _f(sent, "retransmits"),
        # iperf3 3.x JSON has no connect time (only a whole-second timestamp).
        "tcp_connect_ms": None,
    }
    if by_volume:
        m["transfer_time_s"] = _f(recvd, "seconds")
    return m


def udp_metrics(client: dict) -> dict[str, float | None]:
    """Metrics of a UDP test from the client's report, which holds both sides' sums in either direction.

    iperf3 counts a datagram as lost from gaps in sequence numbers; its
    `packets` is the highest sequence seen, so received = packets - lost.
    """
    end = client.get("end", {})
    sent, recvd = end.get("sum_sent", {}), end.get("sum_received", {})
    expected = int(recvd.get("packets", 0))
    rx = expected - int(recvd.get("lost_packets", 0))
    tx = int(sent["packets"]) if "packets" in sent else None
    m: dict[str, float | None] = loss_metrics(tx, rx)
    seconds = _f(recvd, "seconds")
    m.update({
        "throughput_bps": _f(recvd, "bits_per_second"),
        "throughput_pps": rx / seconds if seconds else None,
        "jitter_ms": _f(recvd, "jitter_ms"),
        "bytes": _f(recvd, "bytes"),
    })
    sent_s = _f(sent, "seconds")
    if tx is not None and sent_s:
        m["tx_rate_pps"] = tx / sent_s
    return m


def interval_series(report: dict, udp: bool) -> list[dict[str, float]]:
    """Per-interval rows of one side's report: t_s, throughput_bps, bytes (+ UDP loss, jitter; TCP retransmits)."""
    rows = []
    for interval in report.get("intervals", []):
        s = interval.get("sum", {})
        if s.get("omitted"):
            continue
        row = {"t_s": float(s.get("start", 0.0)), "throughput_bps": float(s.get("bits_per_second", 0.0)),
               "bytes": float(s.get("bytes", 0))}
        if udp and "lost_packets" in s:
            row["rx_pkts"] = float(s.get("packets", 0) - s["lost_packets"])
            row["loss_pkts"] = float(s["lost_packets"])
            row["jitter_ms"] = float(s.get("jitter_ms", 0.0))
        if not udp and "retransmits" in s:
            row["retransmits"] = float(s["retransmits"])
        rows.append(row)
    return rows


def _merge_retransmits(rows: list[dict[str, float]], sender_rows: list[dict[str, float]]) -> None:
    """Copy the sender's per-interval retransmits onto the receiver's rows (same interval index)."""
    for row, srow in zip(rows, sender_rows):
        if "retransmits" in srow:
            row["retransmits"] = srow["retransmits"]


def client_argv(flow: FlowSpec, server_ip: str, port: int, reverse: bool) -> list[str]:
    """iperf3 client command line for one flow."""
    proto = flow.proto.lower()
    argv = ["iperf3", "-c", server_ip, "-p", str(port), "-J", "-i", str(flow.options.get("interval_s", 1))]
    if reverse:
        argv.append("-R")
    if flow.size_bytes:
        argv += ["-l", str(flow.size_bytes)]
    if proto == "udp":
        argv.append("-u")
        bps = flow.rate_bps or (flow.rate_pps * flow.size_bytes * 8 if flow.rate_pps and flow.size_bytes else None)
        if not bps:
            raise ToolError(f"iperf3: UDP flow {flow.flow_id!r} needs rate_bps, or rate_pps with size_bytes")
        argv += ["-b", str(int(round(bps)))]
    elif flow.rate_bps:
        argv += ["-b", str(int(round(flow.rate_bps)))]
    # The flow ends by block count (-k: writes of size_bytes), volume (-n) or whole seconds (-t).
    if flow.count:
        argv += ["-k", str(flow.count)]
    elif flow.volume_bytes:
        argv += ["-n", str(flow.volume_bytes)]
    elif flow.duration_s:
        argv += ["-t", str(max(1, math.ceil(flow.duration_s)))]
    else:
        raise ToolError(f"iperf3: flow {flow.flow_id!r} needs count, volume_bytes or duration_s")
    return argv


class Iperf3Engine(ToolEngine):
    """TCP bulk (by time or volume) and UDP at a bit rate, from iperf3's JSON reports."""

    name = TOOL
    protocols = ("tcp", "udp")

    @classmethod
    def availability(cls):
        """iperf3 and ss (to see the server listen)."""
        return availability_of(["iperf3", "ss"], "iperf3 iproute2", "iperf3 traffic engine")

    def version(self) -> str:
        """e.g. 'iperf 3.12 (cJSON 1.7.15)'."""
        return tool_version(["iperf3", "--version"], "iperf")

    def run(self, flows: list[FlowSpec], hosts: dict[str, HostHandle], workdir: Path) -> list[FlowResult]:
        """Start every server, wait until each listens, start every client, parse both reports."""
        workdir = self.check(flows, workdir)
        ports = PortPicker()
        plan = []
        with self.processes(workdir) as procs:
            for flow in flows:
                src = require_host(hosts, flow.src, TOOL, flow.flow_id)
                dst = require_host(hosts, flow.dst, TOOL, flow.flow_id)
                reverse = flow.proto.lower() == "udp" and flow.options.get("reverse", True)
                server_host, client_host = (src, dst) if reverse else (dst, src)
                port = ports.claim(server_host, flow.port) if flow.port else ports.pick(server_host)
                argv = client_argv(flow, server_host.IP(), port, reverse)
                server = procs.start(server_host, ["iperf3", "-s", "-1", "-J", "-p", str(port)], TOOL,
                                     flow.flow_id, "server", f"{flow.flow_id}.{TOOL}.server", "json")
                plan.append((flow, server, port, client_host, argv, reverse))
            for flow, server, port, *_ in plan:
                procs.wait_listening(server, port, "tcp")
            clients = [procs.start(client_host, argv, TOOL, flow.flow_id, "client",
                                   f"{flow.flow_id}.{TOOL}.client", "json")
                       for flow, _, _, client_host, argv, _ in plan]
            budget = max(deadline_s(f) for f in flows)
            try:
                procs.wait_all(clients, budget)
            except ToolError as exc:
                # iperf3 writes its reason into the JSON ("error"), not to stderr.
                for client, (flow, *_) in zip(clients, plan):
                    if client.returncode not in (None, 0):
                        load_report(read_text(client.stdout_path), flow.flow_id, "client")
                raise exc
            procs.wait_all([p[1] for p in plan], 15.0)
        return [self._result(flow, server, reverse, workdir) for flow, server, _, _, _, reverse in plan]

    def _result(self, flow: FlowSpec, server, reverse: bool, workdir: Path) -> FlowResult:
        """Parse one flow's two reports into a FlowResult."""
        client_path = workdir / f"{flow.flow_id}.{TOOL}.client.json"
        client = load_report(read_text(client_path), flow.flow_id, "client")
        srv = load_report(read_text(server.stdout_path), flow.flow_id, "server")
        texts = {p.name: raw_text(p) for p in (client_path, server.stdout_path)}
        sender, receiver = (srv, client) if reverse else (client, srv)
        udp = flow.proto.lower() == "udp"
        if udp:
            metrics = udp_metrics(client)
        else:
            metrics = tcp_metrics(sender, receiver, by_volume=bool(flow.volume_bytes or flow.count))
        series = interval_series(receiver, udp)
        if not udp:
            _merge_retransmits(series, interval_series(sender, udp))
        result = FlowResult(flow.flow_id, TOOL, metrics, series, texts)
        if udp:
            result.errors += rate_shortfall(TOOL, flow, metrics.get("tx_rate_pps"))
        return result
