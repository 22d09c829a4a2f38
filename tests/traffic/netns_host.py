"""A host handle backed by a plain network namespace, and a two-namespace veth pair for tests.

The handle offers what a Mininet Host offers to traffic engines (`name`,
`IP()`, `popen(argv, **kwargs)`); like Mininet's `mnexec -d`, it starts each
process as its own session leader so engines can kill it by process group.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
from dataclasses import dataclass
from typing import Iterator

PREFIX = "sbtr"


@dataclass
class NetnsHost:
    """An emulated host: a network namespace with one address."""

    name: str
    ns: str
    ip: str

    def IP(self) -> str:  # noqa: N802 - Mininet's spelling
        """The host's address."""
        return self.ip

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        """Start argv inside the namespace, as a new session."""
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(["ip", "netns", "exec", self.ns, *argv], start_new_session=True, **kwargs)

    def run(self, argv: list[str], check: bool = True) -> str:
        """Run a short command inside the namespace and return its stdout."""
        proc = subprocess.run(["ip", "netns", "exec", self.ns, *argv], capture_output=True, text=True,
                              timeout=30)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{argv} in {self.ns}: {proc.stderr.strip()}")
        return proc.stdout


def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=30)


def _quiet(*argv: str) -> None:
    subprocess.run(argv, capture_output=True, timeout=30)


def can_build() -> str | None:
    """None when namespaces can be built here, else the reason why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    for tool in ("ip", "ethtool"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode:
            return f"{tool} not installed"
    return None


@contextlib.contextmanager
def veth_pair(rate_mbit: float | None = None) -> Iterator[tuple[NetnsHost, NetnsHost]]:
    """Two namespaces h1 (10.x.y.1) and h2 (10.x.y.2) joined by one veth pair, offloads off.

    rate_mbit shapes h1's side (the sender's egress) with an HTB class.
    Everything is removed on exit, also when the body raises.
    """
    tag = secrets.token_hex(3)
    ns = [f"{PREFIX}-{tag}-1", f"{PREFIX}-{tag}-2"]
    ifs = [f"{PREFIX}{tag}a", f"{PREFIX}{tag}b"]
    octet = int(tag[:2], 16)
    hosts = [NetnsHost(f"h{i + 1}", ns[i], f"10.{200 + octet % 50}.{octet}.{i + 1}") for i in range(2)]
    created: list[str] = []
    try:
        for name in ns:
            _sh("ip", "netns", "add", name)
            created.append(name)
        _sh("ip", "link", "add", ifs[0], "type", "veth", "peer", "name", ifs[1])
        for i in range(2):
            _sh("ip", "link", "set", ifs[i], "netns", ns[i])
            _sh("ip", "-n", ns[i], "addr", "add", f"{hosts[i].ip}/24", "dev", ifs[i])
            _sh("ip", "-n", ns[i], "link", "set", "lo", "up")
            _sh("ip", "-n", ns[i], "link", "set", ifs[i], "up")
            _sh("ip", "netns", "exec", ns[i], "ethtool", "-K", ifs[i],
                "tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off")
        if rate_mbit:
            # HTB, as Mininet's TCLink(bw=...) shapes a link.
            tc = ["ip", "netns", "exec", ns[0], "tc"]
            _sh(*tc, "qdisc", "add", "dev", ifs[0], "root", "handle", "1:", "htb", "default", "1")
            _sh(*tc, "class", "add", "dev", ifs[0], "parent", "1:", "classid", "1:1", "htb",
                "rate", f"{rate_mbit}mbit")
        yield hosts[0], hosts[1]
    finally:
        # Deleting a namespace deletes the veth inside it (and its peer).
        for name in reversed(created):
            _quiet("ip", "netns", "delete", name)


def drop_every(host: NetnsHost, k: int, match: str) -> None:
    """Drop every k-th packet arriving at host that matches an nftables expression (1st, k+1-th, ...)."""
    rules = (f"table inet {PREFIX}drop {{\n chain input {{\n"
             f"  type filter hook input priority 0; policy accept;\n"
             f"  {match} numgen inc mod {k} == 0 counter drop\n }}\n}}\n")
    subprocess.run(["ip", "netns", "exec", host.ns, "nft", "-f", "-"], input=rules, text=True,
                   check=True, capture_output=True, timeout=30)
