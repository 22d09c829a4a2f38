"""Whether a trial's testbed stayed whole: the controller lived, its port listened, switches stayed on.

Checked before a trial, every half second while it runs (cheaply: /proc for
the process and port, one ovs-vsctl call for the switches) and after it. A
problem inside a planned fault's outage is expected and not held against the
trial; any other fails it, with what went wrong and when.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

#: Seconds between checks while a trial runs.
INTERVAL_S = 0.5
#: Switch sessions are read at most this often (one ovs-vsctl call each time).
SWITCH_INTERVAL_S = 1.0


@dataclass
class Problem:
    """One thing that went wrong, first seen at unix time t."""

    t: float
    what: str

    def text(self, t0: float) -> str:
        """'at +2.3 s: <what>' relative to the trial's start t0."""
        return f"at {self.t - t0:+.1f} s: {self.what}"


def testbed_problems(adapter, net, identity: str | None = None, northbound: str | None = None,
                     switches: bool = True) -> list[str]:
    """What is wrong with the controller and the switches right now (empty: all is well).

    identity: the controller process expected (a different one means it was restarted behind our
    back); northbound: 'host:port' of a REST endpoint that must accept connections.
    """
    problems = []
    if not adapter.standalone:
        why = adapter.health()
        if why:
            problems.append(f"controller {adapter.spec.label}: {why}")
        elif identity is not None and adapter.identity() != identity:
            problems.append(f"controller {adapter.spec.label}: a different process serves now "
                            f"({adapter.identity()}, was {identity})")
    if switches and net is not None and not adapter.standalone:
        missing = sorted({s.name for s in net.graph.switches} - net.connected_switches())
        if missing:
            problems.append(f"switches not connected to the controller: {', '.join(missing[:10])}"
                            + (f" and {len(missing) - 10} more" if len(missing) > 10 else ""))
    if northbound:
        from ..controllers.process import accepts

        host, _, port = northbound.rpartition(":")
        if not accepts(host, int(port)):
            problems.append(f"northbound endpoint {northbound} does not accept connections")
    return problems


@dataclass
class HealthWatch:
    """Samples testbed_problems() in a thread while a trial runs; keeps the first sighting of each."""

    adapter: object
    net: object
    expected: Callable[[float], bool] = lambda t: False   # inside a planned outage at unix time t
    problems: list[Problem] = field(default_factory=list)
    _halt: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> "HealthWatch":
        self.identity = self.adapter.identity()
        self.t0 = time.time()
        self._thread = threading.Thread(target=self._watch, name="health", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._halt.set()
        self._thread.join()

    def _watch(self) -> None:
        last_switch_check = 0.0
        while not self._halt.wait(INTERVAL_S):
            now = time.time()
            check_switches = now - last_switch_check >= SWITCH_INTERVAL_S
            if check_switches:
                last_switch_check = now
            if self.expected(now):
                # A planned restart brings a new process: follow it instead of flagging it.
                self.identity = self.adapter.identity() or self.identity
                continue
            try:
                found = testbed_problems(self.adapter, self.net, self.identity, switches=check_switches)
            except Exception as exc:   # ovs-vsctl timing out is itself a problem of the testbed
                found = [f"health check failed: {exc}"]
            seen = {p.what.split(":")[0] for p in self.problems}
            self.problems += [Problem(now, w) for w in found if w.split(":")[0] not in seen]

    def unexpected(self) -> list[str]:
        """The problems seen outside planned outages, with when."""
        return [p.text(self.t0) for p in self.problems]
