"""Fault injection within a trial, and what it measures: reconnection, recovery, outage, loss.

A workload's `faults:` list schedules actions at seconds after the trial's
workload starts: kill, freeze (SIGSTOP) or resume the controller, start it
again, cut switches off their controller and give it back, take a link down
and up. Every action, and every reconnection it waits for, is an event stored
with the trial. After the trial, each flow's longest silence between arrivals
(reported by sdnbench-tgen) tells whether forwarding went on without the
controller and when packets arrived again.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field

from .config.fields import REQUIRED, Field, ListOf, Number, Record, Str
from .metrics import HIGHER, LOWER, Metric, by_name
from .topology.kind import MAX_SWITCHES

#: action -> (what it does, whether it starts a controller outage, whether it ends one).
ACTIONS: dict[str, tuple[str, bool, bool]] = {
    "kill_controller": ("SIGKILL the controller's processes", True, False),
    "stop_controller": ("SIGSTOP the controller: it freezes with its connections open", True, False),
    "continue_controller": ("SIGCONT a stopped controller", False, True),
    "restart_controller": ("start the controller again and wait until every switch reconnects", False, True),
    "disconnect_switch": ("remove the switches' controller (the fail mode decides what they forward)", True, False),
    "reconnect_switch": ("give the switches their controller back and wait until they reconnect", False, True),
    "link_down": ("take the link between two nodes down", False, False),
    "link_up": ("bring the link between two nodes up again", False, False),
}
LINK_ACTIONS = ("link_down", "link_up")
SWITCH_ACTIONS = ("disconnect_switch", "reconnect_switch")


def _check_fault(fault: dict, node, ctx, key: str) -> None:
    if fault["action"] in LINK_ACTIONS and not fault["link"]:
        ctx.error(node, key, f"{fault['action']} needs link: [node, node], e.g. [s1, s2]")
    if fault["link"] and len(fault["link"]) != 2:
        ctx.error(node, f"{key}.link", "a link is two node names, e.g. [s1, s2]")


FAULT = Record("fault", {
    "at_s": Field(Number(minimum=0, maximum=86_400), REQUIRED, "seconds after the trial's workload starts"),
    "action": Field(Str(choices=tuple(ACTIONS)), REQUIRED,
                    "; ".join(f"{name}: {what}" for name, (what, _, _) in ACTIONS.items())),
    "switches": Field(ListOf(Str(), scalar_ok=True, max_items=MAX_SWITCHES, why="a topology has at most that many"),
                      ["all"], "disconnect/reconnect_switch: switch names, or all"),
    "link": Field(ListOf(Str()), None, "link_down/link_up: the link's two nodes, e.g. [s1, s2]"),
}, doc="One action of a fault schedule within a trial.", extra_check=_check_fault)

#: Metrics of trials with faults; per flow unless noted.
FAULT_METRICS: dict[str, Metric] = by_name(
    Metric("recovery_ms", "ms", "from the first fault to the first packet after the flow's longest silence "
                                "(0: packets kept arriving)", LOWER, shown=True),
    Metric("reconnect_ms", "ms", "from the restart (controller start-up included) or reconnect action to every "
                                 "switch connected again (per trial)", LOWER,
           shown=True),
    Metric("outage_ms", "ms", "the flow's longest silence between arrivals, when it spans the first fault",
           LOWER),
    Metric("forwarded_during_fault", "0/1", "1 when the flow's packets still arrived while the controller was "
                                            "down or cut off (fail mode standalone, or flows left in secure mode)",
           HIGHER),
)


@dataclass
class FaultRun:
    """What a schedule did: events, controller outage windows, reconnection times."""

    t0: float                                              # unix time the workload started
    events: list[dict] = field(default_factory=list)
    outages: list[list[float | None]] = field(default_factory=list)   # [start, end or None] unix times
    reconnect_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def event(self, kind: str, detail: str = "", at: float | None = None) -> None:
        """Record that kind happened (now, or at unix time `at`)."""
        t = time.time() if at is None else at
        self.events.append({"t_unix": t, "t_s": t - self.t0, "kind": kind, "detail": detail})

    def in_outage(self, t: float, grace_s: float = 0.0) -> bool:
        """True when unix time t falls inside a planned controller outage (plus grace_s after its end)."""
        return any(start <= t and (end is None or t <= end + grace_s) for start, end in self.outages)

    @property
    def first_fault(self) -> float | None:
        """Unix time of the first outage, or None."""
        return min((start for start, _ in self.outages), default=None)


class FaultInjector:
    """Runs a fault schedule in a thread beside the workload."""

    def __init__(self, plan: list[dict], net, adapter, restart_dir, reconnect_timeout_s: float = 60.0):
        self.plan = sorted(plan, key=lambda f: f["at_s"])
        self.net, self.adapter, self.restart_dir = net, adapter, restart_dir
        self.reconnect_timeout_s = reconnect_timeout_s
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self.run: FaultRun | None = None

    def __enter__(self) -> "FaultInjector":
        self.run = FaultRun(time.time())
        if self.plan:
            self._thread = threading.Thread(target=self._play, name="faults", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join()

    def _play(self) -> None:
        for fault in self.plan:
            if self._halt.wait(max(0.0, self.run.t0 + fault["at_s"] - time.time())):
                self.run.event("not_reached", f"{fault['action']} at {fault['at_s']:g} s: the trial ended first")
                continue
            try:
                self._apply(fault)
            except Exception as exc:   # keep the schedule going; the trial reports it
                self.run.errors.append(f"fault {fault['action']} at {fault['at_s']:g} s failed: {exc}")
                self.run.event("fault_failed", f"{fault['action']}: {exc}")

    def _switches(self, fault: dict) -> list[str]:
        names = [s.name for s in self.net.graph.switches]
        return names if "all" in fault["switches"] else list(fault["switches"])

    def _apply(self, fault: dict) -> None:
        action, run = fault["action"], self.run
        _, starts_outage, ends_outage = ACTIONS[action]
        now = time.time()
        if starts_outage:
            run.outages.append([now, None])
        if action == "kill_controller":
            self.adapter.send_signal(signal.SIGKILL)
        elif action == "stop_controller":
            self.adapter.send_signal(signal.SIGSTOP)
        elif action == "continue_controller":
            self.adapter.send_signal(signal.SIGCONT)
        elif action == "restart_controller":
            self.adapter.stop()
            self.adapter.start(self.restart_dir)
        elif action == "disconnect_switch":
            self.net.disconnect_switches(self._switches(fault))
        elif action == "reconnect_switch":
            self.net.reconnect_switches(self._switches(fault))
        elif action in LINK_ACTIONS:
            self.net.set_link(*fault["link"], up=action == "link_up")
        detail = " ".join(fault["link"]) if action in LINK_ACTIONS else ""
        run.event(action, detail, at=now)
        if ends_outage:
            self._wait_reconnected(action, self._switches(fault) if action in SWITCH_ACTIONS else None, since=now)
            for window in run.outages:
                if window[1] is None:
                    window[1] = time.time()

    def _wait_reconnected(self, action: str, names: list[str] | None, since: float) -> None:
        """Time from the action (a restart includes the controller's start-up) until every (named)
        switch's controller session is up again."""
        wanted = set(names or (s.name for s in self.net.graph.switches))
        while time.time() - since < self.reconnect_timeout_s and not self._halt.is_set():
            if wanted <= self.net.connected_switches():
                ms = (time.time() - since) * 1000
                self.run.reconnect_ms.append(ms)
                self.run.event("switches_reconnected", f"{len(wanted)} switches {ms:.0f} ms after {action}")
                return
            time.sleep(0.02)
        self.run.event("reconnect_timeout", f"{sorted(wanted - self.net.connected_switches())} not connected")


def flow_fault_metrics(run: FaultRun, gap_ms: float | None, gap_end_unix: float | None) -> dict[str, float | None]:
    """Recovery metrics of one flow from its longest silence between arrivals."""
    first = run.first_fault
    if first is None or gap_ms is None:
        return {}
    if gap_end_unix is None:   # never a silence: every packet arrived in one stream
        return {"recovery_ms": 0.0, "outage_ms": 0.0, "forwarded_during_fault": 1.0}
    gap_start = gap_end_unix - gap_ms / 1000.0
    spans_fault = gap_start <= first + 0.001 <= gap_end_unix
    outage_end = max((end or time.time()) for start, end in run.outages if start == first)
    return {
        "recovery_ms": (gap_end_unix - first) * 1000.0 if spans_fault else 0.0,
        "outage_ms": gap_ms if spans_fault else 0.0,
        # Silent for the whole controller outage: nothing was forwarded without the controller.
        "forwarded_during_fault": 0.0 if spans_fault and gap_end_unix >= outage_end else 1.0,
    }
