"""Switch veth offloads off: OVS's userspace datapath does not finish checksums/TSO.

Without this, TCP through a netdev bridge stalls (segments arrive with bad or
missing checksums); UDP and ICMP are slowed. Only the userspace datapath needs it.
"""

from __future__ import annotations

import subprocess

OFFLOAD_ARGS = ["tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off"]


def offload_off_command(ifname: str) -> str:
    """The shell command that turns offloads off on one interface."""
    return "ethtool -K " + ifname + " " + " ".join(OFFLOAD_ARGS) + " >/dev/null 2>&1"


def disable_offloads_root(ifnames: list[str], shells: int = 4) -> None:
    """Turn offloads off on interfaces in the root namespace, split over a few shells at once
    (one ethtool per interface: a large topology has thousands)."""
    if not ifnames:
        return
    chunks = [ifnames[i::shells] for i in range(min(shells, len(ifnames)))]
    procs = [subprocess.Popen(["sh", "-c", "; ".join(offload_off_command(i) for i in chunk)]) for chunk in chunks]
    try:
        for proc in procs:
            proc.wait(timeout=max(120, len(ifnames) / 10))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
