"""What this machine's kernel and Open vSwitch can do, detected, never assumed."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Capability:
    """One capability: present or not, what was seen, and how to fix it."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None


def _run(argv: list[str], timeout: float = 5.0) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None


def ovs_running() -> Capability:
    """ovsdb-server and ovs-vswitchd answer."""
    if not shutil.which("ovs-vsctl"):
        return Capability("openvswitch", False, "ovs-vsctl not installed", "apt-get install openvswitch-switch")
    res = _run(["ovs-vsctl", "--timeout=3", "show"])
    if res is None or res.returncode != 0:
        return Capability("openvswitch", False, "ovsdb-server is not running",
                          "/usr/share/openvswitch/scripts/ovs-ctl start --system-id=random")
    ver = _run(["ovs-vswitchd", "--version"])
    version = ver.stdout.split()[-1] if ver and ver.stdout else "?"
    try:
        pid = subprocess.run(["ovs-appctl", "-t", "ovs-vswitchd", "version"], capture_output=True, timeout=5.0)
    except subprocess.TimeoutExpired:
        # A running daemon busy with thousands of ports (another network) is slow, not absent.
        return Capability("openvswitch", False, "ovs-vswitchd did not answer within 5 s (busy with another "
                          "network's ports?)", "wait for other Open vSwitch users to finish, then run again")
    except OSError:
        pid = None
    if pid is None or pid.returncode != 0:
        return Capability("openvswitch", False, "ovs-vswitchd is not running",
                          "/usr/share/openvswitch/scripts/ovs-ctl start --system-id=random")
    return Capability("openvswitch", True, f"Open vSwitch {version} running")


@functools.lru_cache(maxsize=1)
def kernel_datapath() -> Capability:
    """The openvswitch kernel module is loaded (else the userspace netdev datapath is used)."""
    if os.path.isdir("/sys/module/openvswitch"):
        return Capability("kernel datapath", True, "openvswitch kernel module loaded")
    return Capability("kernel datapath", False,
                      "no openvswitch kernel module: bridges use the userspace netdev datapath "
                      "with veth offloads off (slower, but correct)",
                      "modprobe openvswitch (if the kernel ships it)")


@functools.lru_cache(maxsize=None)
def qdisc_available(kind: str) -> Capability:
    """Whether `tc` can attach qdisc `kind` (netem, htb, tbf), tried in a throwaway namespace."""
    if not shutil.which("unshare") or not shutil.which("tc"):
        return Capability(kind, False, "unshare or tc missing", "apt-get install util-linux iproute2")
    args = {"netem": ["delay", "1ms"], "htb": ["default", "1"], "tbf": ["rate", "1mbit", "burst", "32kbit", "latency", "50ms"]}[kind]
    res = _run(["unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", kind, *args])
    if res is not None and res.returncode == 0:
        return Capability(kind, True, f"tc qdisc {kind} works")
    err = (res.stderr.strip().splitlines() or ["?"])[-1] if res else "tc did not answer"
    fix = ("a kernel with sch_netem (CONFIG_NET_SCH_NETEM); link delay/loss cannot be emulated "
           "by tc here" if kind == "netem" else f"a kernel with sch_{kind}")
    return Capability(kind, False, f"tc qdisc {kind} unavailable: {err}", fix)


def datapath_for(choice: str) -> str:
    """Resolve 'auto' | 'kernel' | 'user' to Mininet's datapath name ('kernel' or 'user')."""
    if choice == "auto":
        return "kernel" if kernel_datapath().ok else "user"
    return choice


def tool(name: str, package: str, version_args: list[str] | None = None) -> Capability:
    """Whether a command-line tool is installed, with its version when it has one."""
    path = shutil.which(name)
    if not path:
        return Capability(name, False, "not installed", f"apt-get install {package}")
    detail = path
    if version_args is not None:
        res = _run([name, *version_args])
        if res is not None:
            text = (res.stdout or res.stderr).strip().splitlines()
            if text:
                detail = text[0]
    return Capability(name, True, detail)
