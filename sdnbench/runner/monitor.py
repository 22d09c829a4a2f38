"""Samples host and controller CPU while traffic runs: a saturated host invalidates a trial."""

from __future__ import annotations

import os
import threading
import time
from typing import Callable

from ..metrics import LOWER, Metric, by_name

#: Per-trial measurements of the testbed itself, stored with the trial's timings.
MONITOR_METRICS: dict[str, Metric] = by_name(
    Metric("host_cpu_max_pct", "%", "peak CPU use of the whole machine (near 100: the testbed was the "
                                    "bottleneck)", LOWER, shown=True),
    Metric("ctrl_cpu_pct", "% of a core", "controller CPU use during traffic", LOWER, shown=True),
    Metric("host_cpu_mean_pct", "%", "mean CPU use of the whole machine during traffic", LOWER),
    Metric("ctrl_rss_max_mb", "MB", "controller peak resident memory", LOWER),
)

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _host_times() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs."""
    with open("/proc/stat") as f:
        parts = [float(x) for x in f.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    return sum(parts) - idle, sum(parts)


def _proc_cpu_s(pid: int) -> float | None:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    rest = stat[stat.rindex(")") + 2:].split()
    return (int(rest[11]) + int(rest[12])) / _TICK


def _proc_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE / 1e6
    except OSError:
        return None


class CpuMonitor:
    """Background sampler; `result()` gives host_cpu_pct, ctrl_cpu_pct, ctrl_rss_mb.

    pids is a callable asked at every sample, so a controller restarted during the trial (fault
    injection) is followed: CPU is summed per process, from its first to its last sample.
    """

    def __init__(self, pids: Callable[[], list[int]], interval_s: float = 0.5):
        self.pids, self.interval_s = pids, interval_s
        self._stop = threading.Event()
        self._host: list[float] = []
        self._rss: list[float] = []
        self._cpu_first: dict[int, float] = {}
        self._cpu_last: dict[int, float] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._t0 = None

    def _sample_controller(self) -> None:
        rss = []
        for pid in self.pids():
            cpu = _proc_cpu_s(pid)
            if cpu is not None:
                self._cpu_first.setdefault(pid, cpu)
                self._cpu_last[pid] = cpu
            mb = _proc_rss_mb(pid)
            if mb is not None:
                rss.append(mb)
        if rss:
            self._rss.append(sum(rss))

    def _run(self) -> None:
        prev = _host_times()
        while not self._stop.wait(self.interval_s):
            cur = _host_times()
            if cur[1] > prev[1]:
                self._host.append(100.0 * (cur[0] - prev[0]) / (cur[1] - prev[1]))
            prev = cur
            self._sample_controller()

    def __enter__(self):
        self._t0 = time.monotonic()
        self._sample_controller()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample_controller()
        self._elapsed = time.monotonic() - self._t0
        self._cpu = sum(self._cpu_last[p] - self._cpu_first[p] for p in self._cpu_last)

    def result(self) -> dict[str, float | None]:
        """Mean/max host CPU %, controller CPU % of one core, peak controller RSS."""
        out: dict[str, float | None] = {
            "host_cpu_mean_pct": sum(self._host) / len(self._host) if self._host else None,
            "host_cpu_max_pct": max(self._host) if self._host else None,
        }
        if self._cpu_last:
            out["ctrl_cpu_pct"] = 100.0 * self._cpu / self._elapsed if self._elapsed > 0 else None
            out["ctrl_rss_max_mb"] = max(self._rss) if self._rss else None
        return out
