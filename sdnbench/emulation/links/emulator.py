"""The sdnbench-linkemu process of one network: started as an owned process (in the run manifest
before it runs), handed its interfaces, asked for its own accuracy around each trial (SIGUSR1 closes
a window), stopped with the network.

It runs in a network namespace of its own; the inner veth ends move into it, so if it dies, even by
SIGKILL, its namespace goes and every veth pair of its links with it: nothing is left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from ...errors import CapabilityError, ToolError
from ...manifest import Manifest
from ...paths import build_hint, native_tool
from ...procs import OwnedProcess, wait_for
from .air import air_window
from .base import LinkWindow

TOOL = "sdnbench-linkemu"
#: A trial is not valid when a link direction's 99th percentile release lateness exceeds this:
#: frames left later than the configured delay by more than the tens of µs the emulator promises.
LATE_P99_LIMIT_US = 100.0


class JsonlTail:
    """The complete JSON lines a growing file has gained since the last look."""

    def __init__(self, path: Path):
        self.path, self.offset = path, 0

    def new(self) -> list[dict]:
        """Parsed lines appended since the previous call (a line still being written waits)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1
        self.offset += end
        out = []
        for line in data[:end].splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out


def judge(record: dict, late_limit_us: float = LATE_P99_LIMIT_US) -> tuple[dict, list[str]]:
    """Metrics of one window record (worst link direction) and why the window is not valid, if it is not."""
    dirs = record.get("links", [])
    busy = [d for d in dirs if d["released_pkts"] > 0]
    drops = sum(d["ring_drop_pkts"] + d["tx_error_pkts"] + d["truncated_pkts"] for d in dirs)
    worst = max(busy, key=lambda d: d["late_p99_us"], default=None)
    metrics = {
        "link_late_p50_us": max((d["late_p50_us"] for d in busy), default=0.0),
        "link_late_p99_us": worst["late_p99_us"] if worst else 0.0,
        "link_late_max_us": max((d["late_max_us"] for d in busy), default=0.0),
        "link_emulator_drops": float(drops),
    }
    problems = []
    if worst and worst["late_p99_us"] > late_limit_us:
        problems.append(f"link emulator fell behind: 99th percentile release lateness {worst['late_p99_us']:.0f} µs "
                        f"on {worst['link']} {worst['dir']} (limit {late_limit_us:.0f} µs)")
    if drops:
        problems.append(f"link emulator dropped {drops} frames itself (receive ring full or send refused)")
    metrics["link_timing_valid"] = 0.0 if problems else 1.0
    return metrics, problems


class Emulator:
    """One sdnbench-linkemu process and its output."""

    def __init__(self, basedir: Path, manifest: Manifest):
        """basedir holds one numbered directory per emulator a run starts (one per network)."""
        self.basedir, self.manifest = basedir, manifest
        self.proc: OwnedProcess | None = None
        self.tail: JsonlTail | None = None      # its stdout, once started
        self.started: dict = {}

    @staticmethod
    def tool() -> Path:
        """The built binary (CapabilityError naming the build command otherwise)."""
        path = native_tool(TOOL)
        if path is None:
            raise CapabilityError(f"{TOOL} is not built; fix: {build_hint(TOOL)}")
        return path

    def start(self, config: dict, inner: list[str], cpu: int | None) -> dict:
        """Start the emulator for config, move the inner interfaces into its namespace, return its start record."""
        self.basedir.mkdir(parents=True, exist_ok=True)
        taken = {p.name for p in self.basedir.iterdir()}
        workdir = self.basedir / next(f"{n:03d}" for n in range(1, 10_000) if f"{n:03d}" not in taken)
        workdir.mkdir()
        self.tail = JsonlTail(workdir / "linkemu.jsonl")
        cfg = workdir / "linkemu.json"
        cfg.write_text(json.dumps(config, indent=1))
        argv = [self.tool(), "--config", cfg, "--netns-private", "--wait", "10s", "--interval", "1s"]
        if cpu is not None:
            argv += ["--cpu", cpu]
        self.proc = OwnedProcess.spawn(argv, "linkemu", self.manifest, stdout=self.tail.path,
                                       stderr=workdir / "linkemu.stderr")
        mine = os.readlink("/proc/self/ns/net")

        def own_namespace() -> bool:
            try:
                return os.readlink(f"/proc/{self.proc.pid}/ns/net") != mine
            except OSError:
                return True   # gone: the next check reports it
        if not wait_for(lambda: not self.proc.alive() or own_namespace(), 10.0, 0.005) or not self.proc.alive():
            raise self.proc.fail("did not make its network namespace")
        batch = "".join(f"link set dev {name} netns {self.proc.pid}\n" for name in inner)
        res = subprocess.run(["ip", "-batch", "-"], input=batch, capture_output=True, text=True, timeout=60)
        if res.returncode != 0:
            raise ToolError(f"moving link ends into the emulator failed: {res.stderr.strip()}")
        record = self._wait_for("start", 20.0)
        if record is None:
            raise self.proc.fail("did not start forwarding")
        self.started = record
        return record

    def _wait_for(self, scope: str, timeout_s: float) -> dict | None:
        """The next record of scope, or None when the emulator ended or timeout_s passed."""
        found: list[dict] = []

        def arrived() -> bool:
            found.extend(r["data"] for r in self.tail.new() if r.get("data", {}).get("scope") == scope)
            return bool(found) or not self.proc.alive()
        wait_for(arrived, timeout_s, 0.005)
        return found[0] if found else None

    def mark(self) -> dict | None:
        """Close the emulator's current window (SIGUSR1) and return its record (None: it is not running)."""
        if self.proc is None or not self.proc.alive():
            return None
        self.proc.send_signal(signal.SIGUSR1)
        return self._wait_for("mark", 5.0)

    def failure(self) -> str:
        """Why the emulator is not running, for a trial's error."""
        if self.proc is None:
            return "link emulator not started"
        return f"link emulator exited (code {self.proc.returncode}): {self.proc.stderr_tail()}"

    def stop(self) -> None:
        """SIGTERM (it prints its summary), SIGKILL after a grace period, release its record."""
        if self.proc is not None:
            self.proc.stop(signal.SIGTERM, 5.0)


class EmulatorWindow(LinkWindow):
    """The emulator's accuracy during one trial: a window opened and closed by SIGUSR1."""

    engine = TOOL

    def __init__(self, emulator: Emulator, association: dict[str, str] | None = None):
        """association: emulator link name -> access point, for the station links of wireless media."""
        super().__init__()
        self.emulator, self.association = emulator, association or {}

    def __enter__(self):
        self.emulator.mark()
        return self

    def __exit__(self, *exc):
        record = self.emulator.mark()
        if record is None:
            self.problems = [self.emulator.failure()]
        else:
            self.metrics, self.problems = judge(record)
            air, stations = air_window(record, self.association)
            self.metrics.update(air)
            if stations:
                self.raw["wifi_stations.json"] = stations
        return False
