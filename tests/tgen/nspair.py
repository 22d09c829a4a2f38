"""Two network namespaces joined by one veth pair, and host handles that run commands inside them."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from sdnbench.paths import native_tool

_serial = itertools.count()


def tgen_binary() -> Path | None:
    """The built sdnbench-tgen, if any."""
    return native_tool("sdnbench-tgen")


def netns_missing() -> str | None:
    """Why namespace tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if not shutil.which("ip"):
        return "needs iproute2 (ip)"
    if not tgen_binary():
        return "sdnbench-tgen is not built: cargo build --release -p sdnbench-tgen"
    return None


def sh(*argv: str) -> str:
    """Runs a command, raising with its stderr on failure."""
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")
    return r.stdout


class NetnsHost:
    """A HostHandle for the traffic engines: a name, an IP, and popen inside the namespace."""

    def __init__(self, name: str, ns: str, ip: str):
        self.name, self.ns, self.ip = name, ns, ip

    def IP(self) -> str:  # noqa: N802 - Mininet's spelling
        """The host's address on the veth."""
        return self.ip

    def popen(self, *args, **kwargs) -> subprocess.Popen:
        """Starts argv inside the namespace as its own session, like Mininet's `mnexec -d`
        (`ip netns exec` execs, so the PID is the tool's)."""
        argv = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
        return subprocess.Popen(["ip", "netns", "exec", self.ns, *argv], start_new_session=True, **kwargs)

    def run(self, argv: list[str], timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
        """Runs argv inside the namespace to completion."""
        return subprocess.run(["ip", "netns", "exec", self.ns, *argv], capture_output=True,
                              text=True, timeout=timeout, **kwargs)


@dataclass
class NsPair:
    """Host a (10.x.y.1) and host b (10.x.y.2) on one veth pair; each veth end is named like its namespace."""

    a: NetnsHost
    b: NetnsHost
    names: tuple[str, str]


def make_pair() -> NsPair:
    """Creates the namespaces and veth pair; pair_cleanup removes them."""
    tag = f"sbtg{os.getpid() % 100000}x{next(_serial)}"
    na, nb = f"{tag}a", f"{tag}b"
    subnet = f"10.{200 + os.getpid() % 50}.{next(_serial) % 250}"
    sh("ip", "netns", "add", na)
    try:
        sh("ip", "netns", "add", nb)
        sh("ip", "link", "add", f"{tag}a", "netns", na, "type", "veth", "peer", "name", f"{tag}b", "netns", nb)
        for ns, dev, ip in ((na, f"{tag}a", f"{subnet}.1"), (nb, f"{tag}b", f"{subnet}.2")):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
    except Exception:
        pair_cleanup((na, nb))
        raise
    return NsPair(NetnsHost("h1", na, f"{subnet}.1"), NetnsHost("h2", nb, f"{subnet}.2"), (na, nb))


def pair_cleanup(names: tuple[str, str]) -> None:
    """Deletes both namespaces (the veth pair goes with them)."""
    for ns in names:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def free_port() -> int:
    """A UDP/TCP port number free right now (namespaces start empty, so it is free there too)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def records(text: str) -> list[dict]:
    """Parsed JSON lines."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def summaries(text: str, role: str) -> list[dict]:
    """The summary data of one role."""
    return [r["data"] for r in records(text) if r["type"] == "summary" and r["data"]["role"] == role]


def start_receiver(host: NetnsHost, argv: list[str]) -> subprocess.Popen:
    """Starts `sdnbench-tgen recv ...` and returns once it listens."""
    p = host.popen([str(tgen_binary()), "recv", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    if "listening" not in line:
        p.kill()
        raise RuntimeError(f"receiver did not start: {line}{p.stderr.read()}")
    return p


def finish(p: subprocess.Popen, timeout: float = 30) -> tuple[int, str]:
    """Waits for a process started here, killing it by PID on time-out."""
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    return p.returncode, out


def python_in(host: NetnsHost, code: str, *args: str) -> subprocess.CompletedProcess:
    """Runs a Python snippet inside the host's namespace."""
    return host.run([sys.executable, "-c", code, *args])


def wait_quiet(seconds: float) -> None:
    """A short pause between fixture steps."""
    time.sleep(seconds)
