"""Emulated switches that report the FLOW_MODs a controller sends them: sdnbench-ofload --listen-flow-mods.

The switches complete the OpenFlow handshake, answer what the controller asks
and raise nothing. Each FLOW_MOD arrives as a `flow_mod` record with the
CLOCK_MONOTONIC time it was read; time.monotonic_ns() reads the same clock,
so a REST write timed here compares with the FLOW_MOD it caused. The records
are read while the tool runs (a thread follows its stdout); closing its
stdin ends the run and brings the summary.
"""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from ..paths import build_hint, native_tool
from .jsonlines import read_records

TOOL = "sdnbench-ofload"


@dataclass(frozen=True)
class FlowModSeen:
    """One FLOW_MOD as an emulated switch read it."""

    dpid: int
    t_ns: int                 # CLOCK_MONOTONIC, as time.monotonic_ns()
    cookie: int
    command: int              # 0 ADD, 1 MODIFY, 2 MODIFY_STRICT, 3 DELETE, 4 DELETE_STRICT
    table_id: int = 0
    priority: int = 0
    eth_dst: str | None = None

    @classmethod
    def from_record(cls, data: dict) -> "FlowModSeen":
        """From a `flow_mod` record's data (the cookie from its hex form: exact beyond 2^53)."""
        return cls(int(data["dpid"]), int(data["t_ns"]), int(data["cookie_hex"], 16), int(data["command"]),
                   int(data.get("table_id", 0)), int(data.get("priority", 0)), data.get("eth_dst"))


def listen_argv(binary: str, host: str, port: int, of_version: str, switches: int, listen_for_s: float,
                extra: list[str] = ()) -> list[str]:
    """The sdnbench-ofload command line of a listening run that also ends when stdin closes."""
    return [binary, "-c", host, "-p", str(port), "-V", of_version, "-s", str(switches), "--listen-flow-mods",
            "--listen-for", f"{listen_for_s:g}s", "--until-eof", *extra]


class FlowModListener:
    """A running sdnbench-ofload in listen mode; use as a context manager (it never outlives the block)."""

    def __init__(self, host: str, port: int, of_version: str, switches: int, workdir: Path,
                 listen_for_s: float = 600.0, extra: list[str] = ()):
        binary = native_tool(TOOL)
        if binary is None:
            raise ToolError(f"{TOOL} is not built: {build_hint(TOOL)}")
        self.argv = listen_argv(str(binary), host, port, of_version, switches, listen_for_s, list(extra))
        self.stderr_path = Path(workdir) / "ofload.stderr"
        self.lines: list[str] = []
        self.flow_mods: list[FlowModSeen] = []
        self.connected: dict | None = None
        self.summary: dict | None = None
        self.errors: list[str] = []
        self._changed = threading.Condition()
        self._proc: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None

    def __enter__(self) -> "FlowModListener":
        with open(self.stderr_path, "w") as err:
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                          text=True, bufsize=1)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _read(self) -> None:
        for line in self._proc.stdout:
            try:
                records = read_records(line, TOOL)
            except ToolError as exc:
                records = [{"type": "error", "data": {"message": str(exc)}}]
            for rec in records:
                kind, data = rec.get("type"), rec.get("data", {})
                with self._changed:
                    self.lines.append(line)
                    if kind == "flow_mod":
                        self.flow_mods.append(FlowModSeen.from_record(data))
                    elif kind == "connected":
                        self.connected = data
                    elif kind == "summary":
                        self.summary = data
                    elif kind == "error":
                        self.errors.append(str(data.get("message", data)))
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait(self, predicate, timeout_s: float) -> bool:
        """Wait until predicate(self) holds (checked at every record), the tool ends, or the time is up."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0 or not self._reader.is_alive():
                    return predicate(self)
                self._changed.wait(min(left, 0.5))
        return True

    def wait_connected(self, timeout_s: float) -> dict:
        """The `connected` record; ToolError with the tool's own words when it ends or times out first."""
        if not self.wait(lambda s: s.connected is not None, timeout_s):
            why = "; ".join(self.errors) or self.stderr_tail() or f"no handshake within {timeout_s:g} s"
            raise ToolError(f"{TOOL} (listening) did not connect: {why}")
        return self.connected

    def seen(self) -> list[FlowModSeen]:
        """The FLOW_MODs seen so far."""
        with self._changed:
            return list(self.flow_mods)

    def stop(self, timeout_s: float = 15.0) -> dict | None:
        """Close stdin (the tool prints its summary and exits), wait for it; the summary."""
        proc = self._proc
        if proc is None:
            return self.summary
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()   # ours: started in __enter__
            proc.wait()
        self._reader.join(5)
        self._proc = None
        return self.summary

    def stderr_tail(self) -> str:
        try:
            return self.stderr_path.read_text().strip()[-300:]
        except OSError:
            return ""

    def raw(self) -> str:
        """Everything the tool printed, as JSON Lines."""
        with self._changed:
            return "".join(self.lines)
