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


def disable_offloads_root(ifnames: list[str]) -> None:
    """Turn offloads off on interfaces in the root namespace."""
    if not ifnames:
        return
    script = "; ".join(offload_off_command(i) for i in ifnames)
    subprocess.run(["sh", "-c", script], check=False, timeout=120)
