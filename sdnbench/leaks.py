"""What a run left on the machine: processes, namespaces, interfaces, bridges, ports, files, memory.

A Snapshot taken before work and one taken after are compared; anything new
is a leak. Processes are judged by ancestry (descendants of this process), so
other programs on the machine do not count; interfaces, bridges and ports are
machine-wide, so compare snapshots only while nothing else builds networks.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def descendants(pid: int) -> set[str]:
    """'PID name' of every live descendant of pid (zombies included: they are leaks too)."""
    kids, out, todo = _children_map(), set(), [pid]
    while todo:
        for child in kids.get(todo.pop(), []):
            try:
                name = Path(f"/proc/{child}/comm").read_text().strip()
            except OSError:
                continue
            out.add(f"{child} {name}")
            todo.append(child)
    return out


def _lines(argv: list[str]) -> set[str]:
    res = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return set(res.stdout.split()) if res.returncode == 0 else set()


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@dataclass
class Snapshot:
    """The machine as far as sdnbench could change it, and this process's own resources."""

    processes: set[str] = field(default_factory=set)
    namespaces: set[str] = field(default_factory=set)
    interfaces: set[str] = field(default_factory=set)
    bridges: set[str] = field(default_factory=set)
    ports: set[str] = field(default_factory=set)
    temp_files: set[str] = field(default_factory=set)
    fds: int = 0
    rss_mb: float = 0.0

    @classmethod
    def take(cls) -> "Snapshot":
        """Look at the machine now."""
        links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, timeout=30).stdout
        return cls(
            processes=descendants(os.getpid()),
            namespaces=_lines(["ip", "netns", "list"]),
            interfaces={ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines() if ":" in ln},
            bridges=_lines(["ovs-vsctl", "--timeout=10", "list-br"]),
            ports=_lines(["ovs-vsctl", "--timeout=10", "--columns=name", "--bare", "list", "interface"]),
            temp_files=set(os.listdir(tempfile.gettempdir())),
            fds=len(os.listdir("/proc/self/fd")),
            rss_mb=_rss_mb(),
        )

    def leaks_since(self, before: "Snapshot") -> dict[str, list[str]]:
        """What exists now and did not before (empty lists: nothing left behind)."""
        out = {name: sorted(getattr(self, name) - getattr(before, name))
               for name in ("processes", "namespaces", "interfaces", "bridges", "ports", "temp_files")}
        out["fds"] = [f"{self.fds - before.fds} more open file descriptors"] if self.fds > before.fds else []
        return out
