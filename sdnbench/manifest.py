"""The run manifest: every resource a run creates, written down before it exists.

Each record is one JSON line appended and flushed to `manifest.jsonl` in the run
directory, so that after a crash or SIGKILL `sdnbench clean` knows exactly which
processes, bridges, interfaces and namespaces to remove, and nothing else.
A record is written *before* the resource is created, and a matching
`released` record after it is gone.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

MANIFEST_NAME = "manifest.jsonl"


def process_start_time(pid: int) -> int | None:
    """The process start time in clock ticks (field 22 of /proc/PID/stat), or None.

    Stored with each PID so that a recycled PID is never mistaken for ours.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces; fields restart after ')'.
    rest = stat[stat.rindex(")") + 2:].split()
    return int(rest[19])


class Manifest:
    """Append-only record of created resources (thread-safe)."""

    def __init__(self, rundir: Path):
        self.path = Path(rundir) / MANIFEST_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def _append(self, record: dict) -> None:
        record["at"] = time.time()
        line = json.dumps(record, sort_keys=True)
        with self._lock, open(self.path, "a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())

    def created(self, kind: str, name: str, **extra) -> None:
        """Record a resource about to be created: kind is process|bridge|interface|netns|qdisc."""
        self._append({"event": "created", "kind": kind, "name": str(name), **extra})

    def released(self, kind: str, name: str) -> None:
        """Record that a resource has been removed."""
        self._append({"event": "released", "kind": kind, "name": str(name)})

    def process(self, pid: int, argv: list[str], role: str, start: int | None = None) -> None:
        """Record a process with its start time (read from /proc when not given), in one line."""
        start = process_start_time(pid) if start is None else start
        self.created("process", str(pid), argv=argv, role=role, start=start)

    def outstanding(self) -> list[dict]:
        """Records created and not yet released, in creation order."""
        return outstanding(self.path)


def outstanding(path: Path) -> list[dict]:
    """Parse a manifest file and return the resources still held."""
    held: dict[tuple[str, str], dict] = {}
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by SIGKILL
        key = (rec.get("kind"), rec.get("name"))
        if rec.get("event") == "created":
            held[key] = rec
        elif rec.get("event") == "released":
            held.pop(key, None)
    return list(held.values())
