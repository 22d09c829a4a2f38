"""Shared plumbing for tool-backed engines: start, wait for, collect and kill host processes.

Engines start their receivers first, wait until each listens (checked with
`ss` inside the host's namespace, never with a blind sleep), then start all
senders at once and wait for them with one deadline. Processes are started,
recorded and stopped by sdnbench.procs (each leads its own process group, so
stopping one signals exactly the processes it started, nothing matched by name).
"""

from __future__ import annotations

import math
import random
import shutil
import signal
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import ToolError
from ...procs import OwnedProcess, spawn_in, stop_processes
from .base import FlowSpec, HostHandle, TrafficEngine

#: Seconds a receiver may take to start listening.
LISTEN_TIMEOUT_S = 10.0
#: Extra seconds a flow may run beyond its nominal length before it counts as hung.
GRACE_S = 15.0
#: Ports engines pick from when a flow names none (above the usual ephemeral range start).
PORT_RANGE = (20000, 32000)


@dataclass
class ProcessSet:
    """The processes of one engine call; leaving the `with` block kills those still running."""

    workdir: Path
    manifest: object | None = None   # sdnbench.manifest.Manifest recording PIDs, when given
    procs: list[OwnedProcess] = field(default_factory=list)
    hosts: dict[int, HostHandle] = field(default_factory=dict)   # PID -> the host it runs in

    def __enter__(self) -> "ProcessSet":
        self.workdir.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(self, *exc) -> None:
        self.kill_all()

    def start(self, host: HostHandle, argv: list[str], tool: str, flow_id: str, role: str,
              stem: str, stdout_ext: str = "log", env: dict | None = None) -> OwnedProcess:
        """Start argv inside host; stdout goes to <stem>.<stdout_ext>, stderr to <stem>.err.log."""
        label = f"{tool} ({role}) for flow {flow_id!r} on {host.name}"
        try:
            proc = spawn_in(host, argv, f"{tool}-{role}", self.manifest, stdout=self.workdir / f"{stem}.{stdout_ext}",
                            stderr=self.workdir / f"{stem}.err.log", cwd=self.workdir, env=env, label=label)
        except OSError as exc:
            raise ToolError(f"{label}: cannot start {argv[0]}: {exc}") from exc
        self.procs.append(proc)
        self.hosts[proc.pid] = host
        return proc

    def wait_listening(self, proc: OwnedProcess, port: int, proto: str = "tcp",
                       timeout_s: float = LISTEN_TIMEOUT_S) -> None:
        """Return once proc's host listens on port; ToolError if proc dies or time runs out."""
        host = self.hosts[proc.pid]
        deadline = time.monotonic() + timeout_s
        while True:
            if not proc.alive():
                raise proc.fail(f"exited with code {proc.returncode} before listening on {proto} port {port}")
            if port in listening_ports(host, proto):
                return
            if time.monotonic() >= deadline:
                raise proc.fail(f"not listening on {proto} port {port} after {timeout_s:.0f} s")
            time.sleep(0.02)

    def wait_all(self, procs: list[OwnedProcess], timeout_s: float, ok_codes=(0,)) -> None:
        """Wait for procs to exit within timeout_s; ToolError on timeout or a bad exit code."""
        deadline = time.monotonic() + timeout_s
        for proc in procs:
            if not proc.wait(deadline - time.monotonic()):
                raise proc.fail(f"still running after {timeout_s:.1f} s (killed)")
            if proc.returncode not in ok_codes:
                raise proc.fail(f"exited with code {proc.returncode}")

    def stop(self, proc: OwnedProcess, sig: int = signal.SIGINT, grace_s: float = 3.0) -> None:
        """Ask proc to end with sig (tools flush their logs on SIGINT), SIGKILL after grace_s."""
        proc.stop(sig, grace_s)

    def kill_all(self) -> None:
        """SIGKILL every process of this set that still runs, then reap and release them."""
        stop_processes(reversed(self.procs), signal.SIGKILL, 0.0)
        self.procs.clear()
        self.hosts.clear()


def run_in_host(host: HostHandle, argv: list[str], timeout_s: float = 10.0) -> str:
    """Run a short command inside host and return its stdout ('' on failure)."""
    proc = spawn_in(host, argv, "probe", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        out, _ = proc.popen.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.release()
        proc.popen.communicate()   # closes the pipe
        return ""
    proc.release()
    return out.decode(errors="replace")


def _ports_in_ss(text: str) -> set[int]:
    """Local ports in `ss -H` output (4th or 5th column is Local Address:Port)."""
    ports = set()
    for line in text.splitlines():
        cols = line.split()
        for col in cols[3:5]:
            head, sep, tail = col.rpartition(":")
            if sep and tail.isdigit():
                ports.add(int(tail))
                break
    return ports


def listening_ports(host: HostHandle, proto: str = "tcp") -> set[int]:
    """Ports listening (TCP) or bound (UDP) inside host."""
    flag = "-Hlnt" if proto == "tcp" else "-Hlnu"
    return _ports_in_ss(run_in_host(host, ["ss", flag]))


class PortPicker:
    """Hands out ports that no socket of a host uses and this call has not given out yet."""

    def __init__(self, rng: random.Random | None = None):
        self.rng = rng or random.Random()
        self.used: dict[str, set[int]] = {}

    def pick(self, host: HostHandle) -> int:
        """A port free for both TCP and UDP inside host."""
        taken = self.used.get(host.name)
        if taken is None:
            taken = self.used[host.name] = _ports_in_ss(run_in_host(host, ["ss", "-Hantu"]))
        for _ in range(1000):
            port = self.rng.randint(*PORT_RANGE)
            if port not in taken:
                taken.add(port)
                return port
        raise ToolError(f"no free port left on {host.name} in {PORT_RANGE}")

    def claim(self, host: HostHandle, port: int) -> int:
        """Record a port the flow asked for, so pick() does not hand it out again."""
        self.used.setdefault(host.name, set()).add(port)
        return port


def nominal_duration_s(flow: FlowSpec) -> float:
    """How long a flow should run: duration, count / rate or volume / bit rate; 10 s when unknown."""
    if flow.duration_s:
        return float(flow.duration_s)
    rate = packet_rate(flow)
    if flow.count and rate:
        return flow.count / rate
    if flow.volume_bytes and flow.rate_bps:
        return flow.volume_bytes * 8.0 / flow.rate_bps
    return 10.0


def packet_rate(flow: FlowSpec) -> float | None:
    """The flow's packet rate: rate_pps, or rate_bps / (8 * size_bytes)."""
    if flow.rate_pps:
        return float(flow.rate_pps)
    if flow.rate_bps and flow.size_bytes:
        return flow.rate_bps / (8.0 * flow.size_bytes)
    return None


def deadline_s(flow: FlowSpec) -> float:
    """Seconds to wait for a flow's sender: options['timeout_s'], else nominal * 1.5 + grace."""
    if "timeout_s" in flow.options:
        return float(flow.options["timeout_s"])
    return nominal_duration_s(flow) * 1.5 + GRACE_S


def require_host(hosts: dict[str, HostHandle], name: str, tool: str, flow_id: str) -> HostHandle:
    """hosts[name], or a ToolError naming the flow."""
    try:
        return hosts[name]
    except KeyError:
        raise ToolError(f"{tool}: flow {flow_id!r} names host {name!r}, "
                        f"not one of {sorted(hosts)}") from None


def spread_stats(values: list[float], prefix: str) -> dict[str, float | None]:
    """<prefix>_mean/min/max/sd_ms of values in ms (population sd, as ping's mdev); None when empty."""
    if not values:
        return {f"{prefix}_{k}_ms": None for k in ("mean", "min", "max", "sd")}
    return {f"{prefix}_mean_ms": statistics.fmean(values), f"{prefix}_min_ms": min(values),
            f"{prefix}_max_ms": max(values), f"{prefix}_sd_ms": statistics.pstdev(values)}


def mean_abs_diff(values: list[float]) -> float | None:
    """Mean absolute difference of consecutive values (IPDV-style jitter); None below two values."""
    if len(values) < 2:
        return None
    return statistics.fmean(abs(b - a) for a, b in zip(values, values[1:]))


def loss_metrics(tx: int | None, rx: int) -> dict[str, float | None]:
    """tx/rx/loss packets and loss percentage; loss is None when tx is unknown."""
    if tx is None:
        return {"tx_pkts": None, "rx_pkts": rx, "loss_pkts": None, "loss_pct": None}
    loss = max(0, tx - rx)
    return {"tx_pkts": tx, "rx_pkts": rx, "loss_pkts": loss,
            "loss_pct": 100.0 * loss / tx if tx else None}


#: A sender below this fraction of its requested packet rate gets a note in FlowResult.errors.
RATE_SHORTFALL = 0.9


def rate_shortfall(tool: str, flow: FlowSpec, achieved_pps: float | None) -> list[str]:
    """A note when the tool sent clearly slower than the flow asked, else nothing."""
    asked = packet_rate(flow)
    if not asked or achieved_pps is None or achieved_pps >= RATE_SHORTFALL * asked:
        return []
    return [f"{tool} sent {achieved_pps:.0f} packets/s, {100 * achieved_pps / asked:.0f}% of the "
            f"{asked:.0f} asked: the sender could not keep up"]


def tool_version(argv: list[str], pick: str) -> str:
    """The first output line of argv that contains pick, e.g. 'ITGRecv version 2.8.1'."""
    if not shutil.which(argv[0]):
        return "not installed"
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    for line in (proc.stdout + proc.stderr).decode(errors="replace").splitlines():
        if pick in line:
            return line.strip()
    return "unknown"


def availability_of(tools: list[str], package: str, purpose: str):
    """An Availability saying whether every tool is on PATH, with the apt command that installs them."""
    from ...controllers.base import Availability
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        return Availability(False, f"{', '.join(missing)} not found ({purpose})",
                            f"apt-get install -y {package}")
    return Availability(True, f"{', '.join(tools)} found ({purpose})")


#: Largest tool output kept whole in FlowResult.raw; longer ones keep their head and name the file.
RAW_LIMIT_BYTES = 1 << 20


def read_text(path: Path) -> str:
    """A file's text, '' when absent."""
    return path.read_text(errors="replace") if path.exists() else ""


def raw_text(path: Path, limit: int = RAW_LIMIT_BYTES) -> str:
    """A file's text for FlowResult.raw: whole up to limit bytes, else its head and where the rest is."""
    if not path.exists():
        return ""
    size = path.stat().st_size
    if size <= limit:
        return read_text(path)
    with open(path, "rb") as f:
        head = f.read(limit).decode(errors="replace")
    return head + f"\n[truncated at {limit} of {size} bytes; the whole output is {path}]\n"


def finite(value: float | None) -> float | None:
    """value, or None for NaN/inf (JSON and SQLite keep None, not NaN)."""
    if value is None or not math.isfinite(value):
        return None
    return value


class ToolEngine(TrafficEngine):
    """What the tool-backed engines share: an optional run manifest and the protocol check."""

    def __init__(self, manifest=None):
        self.manifest = manifest   # sdnbench.manifest.Manifest: every PID started is recorded there

    def check(self, flows: list[FlowSpec], workdir: Path) -> Path:
        """ToolError for a flow this engine cannot carry; returns workdir as an absolute path."""
        for flow in flows:
            if flow.proto.lower() not in self.protocols:
                raise ToolError(f"{self.name}: flow {flow.flow_id!r}: protocol {flow.proto!r} "
                                f"not one of {self.protocols}")
        if len({f.flow_id for f in flows}) != len(flows):
            raise ToolError(f"{self.name}: flow ids must be unique (they name the output files)")
        return Path(workdir).resolve()

    def processes(self, workdir: Path) -> ProcessSet:
        """A ProcessSet for one run() call, recording PIDs in the manifest."""
        return ProcessSet(workdir, self.manifest)
