"""D-ITG engine: ITGRecv on each destination, ITGSend per flow, ITGDec to decode the binary logs.

Metrics come from ITGDec's per-packet numeric output (`-o`: sequence number,
send time, receive time, size on one line per packet), so totals are computed
here from every packet; the per-second series comes from ITGDec's combined
per-interval output (`-c 1000`). Neither is the human summary.
"""

from __future__ import annotations

import math
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...errors import ToolError
from ...procs import OwnedProcess
from .base import FlowResult, FlowSpec, HostHandle
from .runner import (PortPicker, ToolEngine, availability_of, deadline_s, finite,
                     loss_metrics, mean_abs_diff, packet_rate, rate_shortfall, raw_text, read_text,
                     require_host, spread_stats, tool_version)

TOOL = "ditg"
#: D-ITG's own defaults, passed explicitly so the command line says what ran.
DEFAULT_SIZE_BYTES = 512
DEFAULT_RATE_PPS = 1000.0
DAY_S = 86400.0


@dataclass(frozen=True)
class Packet:
    """One packet of a decoded D-ITG log; times are seconds of the day as ITGDec prints them."""

    seq: int
    tx_s: float
    rx_s: float
    size: int

    @property
    def delay_s(self) -> float:
        """rx - tx, corrected for a log that crosses midnight."""
        d = self.rx_s - self.tx_s
        return d + DAY_S if d < -DAY_S / 2 else d


def parse_packets(text: str) -> list[Packet]:
    """Parse `ITGDec LOG -o FILE` output: 'seq txH txM txS rxH rxM rxS size' per packet."""
    packets = []
    for n, line in enumerate(text.splitlines(), 1):
        cols = line.split()
        if not cols:
            continue
        if len(cols) != 8:
            raise ToolError(f"ditg: ITGDec -o line {n} has {len(cols)} columns, expected 8: {line!r}")
        seq, th, tm, ts, rh, rm, rs, size = cols
        packets.append(Packet(int(seq), int(th) * 3600 + int(tm) * 60 + float(ts),
                              int(rh) * 3600 + int(rm) * 60 + float(rs), int(size)))
    return packets


def _unwrapped(times: list[float]) -> list[float]:
    """Seconds-of-day made monotone across midnight."""
    out, offset, prev = [], 0.0, None
    for t in times:
        if prev is not None and t + offset < prev - DAY_S / 2:
            offset += DAY_S
        out.append(t + offset)
        prev = t + offset
    return out


def _unique(packets: list[Packet]) -> list[Packet]:
    """Packets in log order with duplicate sequence numbers dropped."""
    seen, out = set(), []
    for p in packets:
        if p.seq not in seen:
            seen.add(p.seq)
            out.append(p)
    return out


def _rate(count: int, times: list[float]) -> float | None:
    """count / (last - first), D-ITG's definition of an average rate; None for a zero span."""
    if len(times) < 2:
        return None
    span = max(times) - min(times)
    return count / span if span > 0 else None


def _round_trips_ms(back: list[Packet], rx: list[Packet]) -> list[float]:
    """Round trips: return time (sender log) minus the send stamp the packet carried (receiver log).

    With the rtt meter, ITGSend logs a send time of its own that now and then
    lies milliseconds after the stamp in the packet (a stalled sender), which
    would hide that stall from the round trip while the one-way delay shows it.
    The packet's own stamp, read from the receiver log, keeps rtt >= owd.
    """
    stamped = {p.seq: p.tx_s for p in rx}
    out = []
    for p in back:
        tx = stamped.get(p.seq, p.tx_s)
        d = p.rx_s - tx
        out.append((d + DAY_S if d < -DAY_S / 2 else d) * 1000.0)
    return out


def metrics_from_logs(recv: list[Packet], send: list[Packet], meter: str,
                      requested_count: int | None = None) -> dict[str, float | None]:
    """The common metrics from decoded receiver and sender logs of one flow.

    owd meter: the sender log lists every packet sent. rtt meter: the sender log
    lists the packets that came back (their receive time is the return time),
    so packets sent is the requested count, or else the highest sequence number
    seen (a lower bound when the last packets were lost both ways).
    """
    rx = _unique(recv)
    back = _unique(send)
    if meter == "rtt":
        seqs = [p.seq for p in rx + back]
        tx = requested_count if requested_count else (max(seqs) if seqs else None)
    else:
        tx = len(back)
    m: dict[str, float | None] = loss_metrics(tx, len(rx))
    delays_ms = [p.delay_s * 1000.0 for p in rx]
    m.update(spread_stats(delays_ms, "owd"))
    # D-ITG's "average jitter": mean |delay(i) - delay(i-1)| over packets in arrival order.
    m["jitter_ms"] = mean_abs_diff(delays_ms)
    rx_times = _unwrapped([p.rx_s for p in rx])
    nbytes = sum(p.size for p in rx)
    m["bytes"] = nbytes
    pps = _rate(len(rx), rx_times)
    m["throughput_pps"] = pps
    m["throughput_bps"] = pps * 8.0 * nbytes / len(rx) if pps else None
    if meter == "rtt":
        m.update(spread_stats(_round_trips_ms(back, rx), "rtt"))
    # With the rtt meter the sender log lacks lost packets: rate from the stamps that arrived.
    sent = rx if meter == "rtt" else back
    m["tx_rate_pps"] = _rate(len(sent), _unwrapped([p.tx_s for p in sent]))
    return {k: finite(v) if isinstance(v, float) else v for k, v in m.items()}


def parse_series(text: str, delay_key: str = "owd_mean_ms") -> list[dict[str, float]]:
    """Parse `ITGDec LOG -c MS FILE`: 'time_s kbit/s delay_s jitter_s lost_pkts' per interval."""
    rows = []
    for line in text.splitlines():
        cols = line.split()
        if len(cols) != 5:
            continue
        try:
            t, kbps, delay, jitter, lost = (float(c) for c in cols)
        except ValueError:
            continue
        rows.append({"t_s": t, "throughput_bps": kbps * 1000.0, delay_key: delay * 1000.0,
                     "jitter_ms": jitter * 1000.0, "loss_pkts": lost})
    return rows


def sender_argv(flow: FlowSpec, dst_ip: str, sig_port: int, data_port: int,
                send_log: Path, recv_log: Path) -> list[str]:
    """ITGSend's command line for one flow."""
    proto = flow.proto.lower()
    size = flow.size_bytes or DEFAULT_SIZE_BYTES
    rate = packet_rate(flow) or DEFAULT_RATE_PPS
    argv = ["ITGSend", "-a", dst_ip, "-Sdp", str(sig_port), "-rp", str(data_port),
            "-T", proto.upper(), "-c", str(size), "-C", _num(rate),
            "-m", "rttm" if flow.meter == "rtt" else "owdm",
            "-l", str(send_log), "-x", str(recv_log)]
    if flow.count:
        argv += ["-z", str(flow.count)]
    elif flow.duration_s:
        argv += ["-t", str(max(1, round(flow.duration_s * 1000)))]
    elif flow.volume_bytes:
        argv += ["-k", str(max(1, math.ceil(flow.volume_bytes / 1024)))]
    else:
        raise ToolError(f"ditg: flow {flow.flow_id!r} needs count, duration_s or volume_bytes")
    if proto == "tcp" and flow.options.get("nodelay"):
        argv.append("-D")
    if flow.options.get("poll"):
        argv.append("-poll")   # busy-wait for inter-departure times below 1 ms
    return argv


def _num(x: float) -> str:
    """A rate as D-ITG reads it: integers without a decimal point."""
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


def decode(log: Path, out: Path, series: Path | None = None) -> None:
    """Run ITGDec on a binary log: per-packet numbers to out, per-second series to series."""
    argv = ["ITGDec", str(log), "-o", str(out)]
    if series is not None:
        argv += ["-c", "1000", str(series)]
    try:
        proc = subprocess.run(argv, cwd=str(log.parent), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise ToolError(f"ditg: ITGDec on {log.name} did not finish in 120 s") from None
    if proc.returncode != 0 or not out.exists():
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise ToolError(f"ditg: ITGDec on {log.name} failed (code {proc.returncode}): {' | '.join(tail)}")


class DitgEngine(ToolEngine):
    """UDP/TCP flows at constant size and rate, with one-way or round-trip meters."""

    name = TOOL
    protocols = ("udp", "tcp")

    @classmethod
    def availability(cls):
        """D-ITG's three programs and ss (to see ITGRecv listen)."""
        return availability_of(["ITGSend", "ITGRecv", "ITGDec", "ss"], "d-itg iproute2",
                               "D-ITG traffic engine")

    def version(self) -> str:
        """e.g. 'ITGRecv version 2.8.1 (r1023)'."""
        return tool_version(["ITGRecv", "-h"], "version")

    def run(self, flows: list[FlowSpec], hosts: dict[str, HostHandle], workdir: Path) -> list[FlowResult]:
        """Start one ITGRecv per flow, all ITGSends at once, then decode every log."""
        workdir = self.check(flows, workdir)
        ports = PortPicker()
        with self.processes(workdir) as procs:
            # One ITGRecv per flow: flows from separate ITGSends that share one ITGRecv
            # race on its receiver log (seen here: a flow's log missing or empty).
            receivers: dict[str, tuple[OwnedProcess, int]] = {}
            for flow in flows:
                dst = require_host(hosts, flow.dst, TOOL, flow.flow_id)
                sig = ports.pick(dst)
                rproc = procs.start(dst, ["ITGRecv", "-Sp", str(sig)], TOOL, flow.flow_id,
                                    "receiver", f"{flow.flow_id}.{TOOL}.ITGRecv")
                receivers[flow.flow_id] = (rproc, sig)
            for rproc, sig in receivers.values():
                procs.wait_listening(rproc, sig, "tcp")
            senders = []
            for flow in flows:
                src = require_host(hosts, flow.src, TOOL, flow.flow_id)
                dst = hosts[flow.dst]
                data_port = ports.claim(dst, flow.port) if flow.port else ports.pick(dst)
                argv = sender_argv(flow, dst.IP(), receivers[flow.flow_id][1], data_port,
                                   workdir / f"{flow.flow_id}.{TOOL}.send.log",
                                   workdir / f"{flow.flow_id}.{TOOL}.recv.log")
                senders.append(procs.start(src, argv, TOOL, flow.flow_id, "sender",
                                           f"{flow.flow_id}.{TOOL}.ITGSend"))
            procs.wait_all(senders, max(deadline_s(f) for f in flows))
            # ITGRecv closes each flow's log when the flow ends; SIGINT ends it cleanly.
            for rproc, _ in receivers.values():
                procs.stop(rproc)
        return [self._result(flow, workdir, sender, receivers[flow.flow_id][0])
                for flow, sender in zip(flows, senders)]

    def _result(self, flow: FlowSpec, workdir: Path, sender: OwnedProcess, receiver: OwnedProcess) -> FlowResult:
        """Decode one flow's logs and turn them into a FlowResult."""
        # ITGSend exits 0 even when the receiver refused the flow; it says so on stdout.
        errors = [line.strip() for line in read_text(sender.stdout_path).splitlines() if line.startswith("Error")]
        if errors:
            raise sender.fail(" / ".join(errors))
        stem = workdir / f"{flow.flow_id}.{TOOL}"
        files = {k: Path(f"{stem}.{k}") for k in ("recv.log", "send.log", "recv.txt", "send.txt",
                                                   "recv.series.txt", "send.series.txt")}
        for side in ("recv", "send"):
            if not files[f"{side}.log"].exists():
                raise ToolError(f"ditg: flow {flow.flow_id!r}: no {side} log {files[side + '.log']}; "
                                f"ITGRecv said: {receiver.stderr_tail()}")
        rtt = flow.meter == "rtt"
        decode(files["recv.log"], files["recv.txt"], files["recv.series.txt"])
        decode(files["send.log"], files["send.txt"], files["send.series.txt"] if rtt else None)
        recv = parse_packets(read_text(files["recv.txt"]))
        send = parse_packets(read_text(files["send.txt"]))
        result = FlowResult(flow.flow_id, TOOL, metrics_from_logs(recv, send, flow.meter, flow.count))
        result.errors += rate_shortfall(TOOL, flow, result.metrics.get("tx_rate_pps"))
        result.series = parse_series(read_text(files["recv.series.txt"]))
        if rtt:
            by_t = {row["t_s"]: row["rtt_mean_ms"]
                    for row in parse_series(read_text(files["send.series.txt"]), "rtt_mean_ms")}
            for row in result.series:
                if row["t_s"] in by_t:
                    row["rtt_mean_ms"] = by_t[row["t_s"]]
        for key in ("recv.txt", "send.txt", "recv.series.txt", "send.series.txt"):
            if files[key].exists():
                result.raw[files[key].name] = raw_text(files[key])
        result.raw[sender.stdout_path.name] = raw_text(sender.stdout_path)
        result.raw[receiver.stdout_path.name] = raw_text(receiver.stdout_path)
        return result
