"""DoS/DDoS attack traffic between hosts of an emulated network, on a schedule.

SYN, UDP and ICMP floods from real source addresses use hping3; spoofed floods
and the `newflows` flood (a fresh random source MAC and IP per frame, so every
frame misses the flow table and raises a PACKET_IN) use attack_sender, a raw
socket writer that keeps every spoofed address inside 10.0.0.0/8. Targets and
spoofed ranges are checked against the topology before anything starts:
traffic never goes to an address that is not an emulated host.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CapabilityError, ConfigError
from ..procs import OwnedProcess, spawn_in, stop_processes
from ..topology.graph import Host, TopologyGraph
from . import attack_sender

KINDS = ("syn", "udp", "icmp", "newflows")
#: Every emulated host address and every spoofed source lies in this range.
EMULATED_NET = attack_sender.EMULATED_NET
DEFAULT_PORTS = {"syn": 80, "udp": 9, "newflows": 9}
STOP_GRACE_S = 3.0


@dataclass(frozen=True)
class AttackSpec:
    """One attack: `sources` flood `target` from start_s for duration_s (relative to its phase)."""

    kind: str                          # syn | udp | icmp | newflows
    sources: tuple[str, ...]           # emulated host names, "first", "last": one = DoS, several = DDoS
    target: str                        # an emulated host name, "first" or "last"
    duration_s: float
    start_s: float = 0.0
    rate_pps: float | None = None      # per source; None = as fast as possible
    spoof: bool = False                # random source IPs inside spoof_cidr
    spoof_cidr: str = "10.0.0.0/8"
    size_bytes: int = 0                # L4 payload bytes (hping3 -d)
    dst_port: int | None = None        # syn/udp/newflows; defaults 80 / 9 / 9

    def validate(self) -> None:
        """Refuse impossible values with the field's name."""
        if self.kind not in KINDS:
            raise ConfigError(f"kind {self.kind!r} is not one of {', '.join(KINDS)}", key="attack.kind")
        if not self.sources:
            raise ConfigError("an attack needs at least one source host", key="attack.sources")
        if self.duration_s <= 0 or self.start_s < 0:
            raise ConfigError("duration_s must be > 0 and start_s >= 0", key="attack.duration_s")
        if self.rate_pps is not None and self.rate_pps <= 0:
            raise ConfigError("rate_pps must be > 0 (or absent for as fast as possible)", key="attack.rate_pps")
        if not 0 <= self.size_bytes <= 1400:
            raise ConfigError("size_bytes must be within 0..1400", key="attack.size_bytes")
        if self.dst_port is not None and not 0 < self.dst_port < 65536:
            raise ConfigError("dst_port must be within 1..65535", key="attack.dst_port")

    @property
    def tool(self) -> str:
        """'hping3' for plain floods, 'sender' when frames need random sources."""
        return "sender" if self.spoof or self.kind == "newflows" else "hping3"


def check_target(ip: str, graph: TopologyGraph) -> Host:
    """The emulated host owning ip; ConfigError for any other address (loopback, public, unknown)."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        raise ConfigError(f"attack target {ip!r} is not an IP address", key="attack.target") from None
    for h in graph.hosts:
        if ipaddress.ip_address(h.ip) == addr:
            return h
    raise ConfigError(f"attack target {addr} is not a host of the emulated network "
                      f"({graph.summary()}): refused", key="attack.target")


def check_spoof_range(cidr: str, graph: TopologyGraph) -> ipaddress.IPv4Network:
    """The spoofed source range, if it lies inside 10.0.0.0/8 and holds emulated hosts; else ConfigError."""
    try:
        net = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        raise ConfigError(f"spoof range {cidr!r} is not a CIDR", key="attack.spoof_cidr") from None
    if net.version != 4 or not net.subnet_of(EMULATED_NET):
        raise ConfigError(f"spoof range {net} is not inside the emulated network {EMULATED_NET}: refused",
                          key="attack.spoof_cidr")
    if not any(ipaddress.ip_address(h.ip) in net for h in graph.hosts):
        raise ConfigError(f"spoof range {net} holds no host of the emulated network: refused",
                          key="attack.spoof_cidr")
    return net


def resolve_target(spec: AttackSpec, graph: TopologyGraph) -> Host:
    """The target host of spec: a host name, 'first', 'last' or an emulated host's IP."""
    if not graph.hosts:
        raise ConfigError("the topology has no hosts to attack", key="attack.target")
    if spec.target in ("first", "last"):
        host = graph.hosts[0 if spec.target == "first" else -1]
    elif any(h.name == spec.target for h in graph.hosts):
        host = graph.host(spec.target)
    else:
        host = check_target(spec.target, graph)
    return check_target(host.ip, graph)


def resolve_sources(spec: AttackSpec, graph: TopologyGraph) -> list[str]:
    """Source host names, with 'first' and 'last' standing for the topology's first and last host."""
    if not graph.hosts:
        raise ConfigError("the topology has no hosts to attack from", key="attack.sources")
    alias = {"first": graph.hosts[0].name, "last": graph.hosts[-1].name}
    names = [alias.get(s, s) for s in spec.sources]
    known = {h.name for h in graph.hosts}
    unknown = [s for s in names if s not in known]
    if unknown:
        raise ConfigError(f"attack sources {', '.join(unknown)} are not hosts of the emulated network",
                          key="attack.sources")
    if len(set(names)) != len(names):
        raise ConfigError(f"a source host is listed twice: {', '.join(names)}", key="attack.sources")
    return names


def check_spec(spec: AttackSpec, graph: TopologyGraph) -> tuple[Host, list[str]]:
    """Validate spec against graph (sources, target, spoof range); returns the target and the sources."""
    spec.validate()
    sources = resolve_sources(spec, graph)
    target = resolve_target(spec, graph)
    if target.name in sources:
        raise ConfigError(f"attack target {target.name} is also one of its sources", key="attack.target")
    if spec.tool == "sender":
        check_spoof_range(spec.spoof_cidr, graph)
    return target, sources


def hping3_argv(spec: AttackSpec, target_ip: str) -> list[str]:
    """hping3 command line for a plain (unspoofed) syn/udp/icmp flood."""
    mode = {"syn": ["-S", "-p", str(spec.dst_port or DEFAULT_PORTS["syn"])],
            "udp": ["--udp", "-p", str(spec.dst_port or DEFAULT_PORTS["udp"])],
            "icmp": ["--icmp"]}[spec.kind]
    # hping3 paces with usleep between packets: -i uN asks for one packet every N µs.
    pace = ["--flood"] if spec.rate_pps is None else ["-i", f"u{max(1, round(1e6 / spec.rate_pps))}"]
    return ["hping3", "-q", "-n", *mode, *pace, "-d", str(spec.size_bytes), target_ip]


def sender_argv(spec: AttackSpec, source: Host, target: Host) -> list[str]:
    """attack_sender command line for spoofed and newflows floods (runs as a plain script)."""
    argv = [sys.executable, "-u", attack_sender.__file__, "--kind", spec.kind, "--dst-ip", target.ip,
            "--dst-mac", target.mac, "--src-mac", source.mac, "--src-cidr", spec.spoof_cidr,
            "--rate-pps", repr(float(spec.rate_pps or 0)), "--size", str(spec.size_bytes)]
    if spec.kind != "icmp":
        argv += ["--dst-port", str(spec.dst_port or DEFAULT_PORTS[spec.kind])]
    if spec.spoof:
        argv.append("--spoof")
    return argv


_HPING_SENT = re.compile(r"(\d+)\s+packets\s+transmitted")


def parse_hping3_stats(stderr: str) -> int | None:
    """Packets hping3 says it sent (its exit statistics on stderr), or None when absent."""
    found = _HPING_SENT.findall(stderr)
    return int(found[-1]) if found else None


def parse_sender_output(stdout: str) -> tuple[int | None, str | None, dict[str, Any]]:
    """(sent, error, summary data) from attack_sender's JSON line."""
    for line in reversed(stdout.splitlines()):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        data = rec.get("data") or {}
        if rec.get("type") == "error":
            return None, str(data.get("message", "unknown error")), data
        if rec.get("type") == "summary" and isinstance(data.get("sent"), int):
            return data["sent"], None, data
    return None, "attack sender printed no summary", {}


@dataclass
class AttackProcess:
    """One source's process of one attack, with its timing and outcome."""

    attack: int
    source: str
    argv: list[str]
    out_path: Path
    err_path: Path
    process: OwnedProcess | None = None
    start_s: float | None = None
    stop_s: float | None = None
    exit_code: int | None = None
    packets_sent: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


class AttackRun:
    """Attacks started by start_attacks: stop() ends them all, results() reports them."""

    def __init__(self, specs: list[AttackSpec], targets: list[Host], procs: list[list[AttackProcess]],
                 hosts: dict, t0: float):
        self.specs, self.targets, self.procs, self.hosts, self.t0 = specs, targets, procs, hosts, t0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def _now(self) -> float:
        return time.monotonic() - self.t0

    def _schedule(self) -> None:
        for i, spec in enumerate(self.specs):
            t = threading.Thread(target=self._one, args=(i, spec), name=f"sbat-attack-{i}", daemon=True)
            self._threads.append(t)
            t.start()

    def _one(self, i: int, spec: AttackSpec) -> None:
        """Wait for start_s, launch every source, wait for the end (or stop()), stop them."""
        try:
            if self._stop.wait(max(0.0, spec.start_s - self._now())):
                return
            for proc in self.procs[i]:
                self._launch(proc)
            self._stop.wait(max(0.0, spec.start_s + spec.duration_s - self._now()))
            self._end(self.procs[i])
        except Exception as e:   # a scheduler thread must not die silently: report it per source
            for proc in self.procs[i]:
                proc.error = proc.error or f"attack scheduler failed: {e!r}"

    def _launch(self, proc: AttackProcess) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            try:
                proc.start_s = self._now()
                proc.process = spawn_in(self.hosts[proc.source], proc.argv, f"attack{proc.attack}",
                                        stdout=proc.out_path, stderr=proc.err_path)
            except OSError as e:
                proc.error = f"could not start {proc.argv[0]}: {e}"

    def _end(self, group: list[AttackProcess]) -> None:
        """SIGINT to every source at once (both tools print their count), SIGKILL after a grace period."""
        with self._lock:
            live = [p for p in group if p.process is not None and p.stop_s is None]
            for proc in live:
                proc.stop_s = self._now()
                if not proc.process.alive():
                    proc.error = proc.error or f"exited early with code {proc.process.returncode}"
            stop_processes([p.process for p in live], signal.SIGINT, STOP_GRACE_S)
            for proc in live:
                if proc.process.killed:
                    proc.error = "did not stop on SIGINT; killed"
                proc.exit_code = proc.process.returncode
                self._collect(proc)

    def _collect(self, proc: AttackProcess) -> None:
        out = proc.out_path.read_text(errors="replace") if proc.out_path.exists() else ""
        err = proc.err_path.read_text(errors="replace") if proc.err_path.exists() else ""
        if proc.argv[0] == "hping3":
            proc.packets_sent = parse_hping3_stats(err)
            if proc.packets_sent is None:
                tail = err.strip().splitlines()[-1:] or ["no output"]
                proc.error = proc.error or f"hping3 printed no statistics: {tail[0]}"
        else:
            sent, error, data = parse_sender_output(out)
            proc.packets_sent, proc.detail = sent, data
            if error:
                proc.error = error

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until every attack has ended by its schedule; True when all did."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for t in self._threads:
            t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    def stop(self) -> None:
        """Stop every attack still running (and cancel those not yet started). Idempotent."""
        self._stop.set()
        for t in self._threads:
            t.join(STOP_GRACE_S + 10)
        for group in self.procs:
            self._end(group)

    def results(self) -> list[dict[str, Any]]:
        """Per attack: packets sent (total and per source), start/stop times, errors."""
        out = []
        for i, (spec, target, group) in enumerate(zip(self.specs, self.targets, self.procs)):
            sent = [p.packets_sent for p in group]
            out.append({
                "attack": i, "kind": spec.kind, "tool": spec.tool, "target": target.name,
                "target_ip": target.ip, "spoof": spec.spoof, "rate_pps": spec.rate_pps,
                "planned_start_s": spec.start_s, "planned_stop_s": spec.start_s + spec.duration_s,
                "packets_sent": sum(s for s in sent if s is not None) if any(s is not None for s in sent) else None,
                "sources": [{"source": p.source, "packets_sent": p.packets_sent, "start_s": p.start_s,
                             "stop_s": p.stop_s, "exit_code": p.exit_code, "error": p.error,
                             **({"sender": p.detail} if p.detail else {})} for p in group],
                "errors": [f"{p.source}: {p.error}" for p in group if p.error],
            })
        return out


def plan_attacks(specs: list[AttackSpec], graph: TopologyGraph, workdir: Path) -> tuple[list[Host], list[list[AttackProcess]]]:
    """Check every spec and build every command line; nothing runs yet (refusals happen here)."""
    targets, procs = [], []
    for i, spec in enumerate(specs):
        target, sources = check_spec(spec, graph)
        targets.append(target)
        group = []
        for src in sources:
            argv = (hping3_argv(spec, target.ip) if spec.tool == "hping3"
                    else sender_argv(spec, graph.host(src), target))
            stem = workdir / f"attack{i}-{spec.kind}-{src}"
            group.append(AttackProcess(i, src, argv, stem.with_suffix(".out"), stem.with_suffix(".err")))
        procs.append(group)
    return targets, procs


def start_attacks(specs: list[AttackSpec], hosts: dict, graph: TopologyGraph, workdir: Path,
                  t0: float | None = None) -> AttackRun:
    """Check all specs, then start each attack at its start_s after t0 (time.monotonic(), default now)."""
    workdir = Path(workdir)
    targets, procs = plan_attacks(list(specs), graph, workdir)
    if any(s.tool == "hping3" for s in specs) and not shutil.which("hping3"):
        raise CapabilityError("hping3 is not installed: apt-get install hping3")
    missing = sorted({p.source for g in procs for p in g} - set(hosts))
    if missing:
        raise ConfigError(f"attack sources {', '.join(missing)} are not running hosts", key="attack.sources")
    workdir.mkdir(parents=True, exist_ok=True)
    run = AttackRun(list(specs), targets, procs, hosts, time.monotonic() if t0 is None else t0)
    run._schedule()
    return run
