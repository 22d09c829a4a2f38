"""The environment fingerprint stored with every trial."""

from __future__ import annotations

import os
import platform
import subprocess

from .. import __version__
from ..emulation import capabilities


def _cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _ovs_version() -> str:
    try:
        out = subprocess.run(["ovs-vswitchd", "--version"], capture_output=True, text=True, timeout=5).stdout
        return out.split()[-1] if out else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def fingerprint(datapath: str) -> dict:
    """Kernel, OVS, datapath, CPUs: what makes two runs comparable or not."""
    return {
        "kernel": platform.release(),
        "os": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "cpu_model": _cpu_model(),
        "ovs_version": _ovs_version(),
        "datapath": datapath,
        "kernel_datapath_available": capabilities.kernel_datapath().ok,
        "netem_available": capabilities.qdisc_available("netem").ok,
        "sdnbench_version": __version__,
        "python": platform.python_version(),
    }
