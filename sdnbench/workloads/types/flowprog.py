"""The `flowprog` workload type: flow-programming throughput and latency of a proactive controller.

No network is built: sdnbench-ofload emulates the switches, which only
connect and report every FLOW_MOD (flowmods.py). The workload writes flows
to each of them through the controller's REST flow API (the adapter's
flow_programmer(): OpenDaylight's RESTCONF, or ONOS's REST API for a remote
ONOS) and times each write until its FLOW_MOD is read at the switch
(flowprog.py). Controllers that forward with a reactive application and
have no flow API sdnbench programs are reported as not applicable.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from ...config.fields import Field, Number, positive
from ...config.sweep import Sweep
from ...errors import ControllerError
from ..base import FlowResult, TrialContext, WorkloadType, workload_record
from ..flowmods import FlowModListener
from ..flowprog import (METRICS, acknowledged, bench_rules, flow_metrics, new_nonce, pair, problems, requests,
                        seen_series, write_all)
from ..sbi import OFLOAD_DEFAULT_PORTS, OFLOAD_FIRST_DPID
from .sbi import ofload_preflight

#: One TCP connection per emulated switch; flows per switch as a controller's table holds them;
#: writers as HTTP connections; a flow that takes ten minutes has failed.
MAX_SWITCHES = 4_096
MAX_FLOWS_PER_SWITCH = 100_000
MAX_CONCURRENCY = 1_024
MAX_BATCH = 10_000
MAX_WAIT_S = 600
CONNECT_TIMEOUT_S = 60.0
#: Until the controller lists every emulated switch (OpenDaylight's inventory: a few seconds).
INVENTORY_TIMEOUT_S = 120.0
#: A guess for estimates: OpenDaylight programmed about 200-400 flows/s here.
ESTIMATE_FLOWS_PER_S = 200.0
#: Switches whose flows are deleted at once after a trial (OpenDaylight deletes one flow per request).
CLEANUP_CONCURRENCY = 8
CLOCK = "single-host CLOCK_MONOTONIC (REST writer and emulated switches on one machine)"

FIELDS = {
    "switches": Field(positive(maximum=MAX_SWITCHES), 4, "emulated switches (dpids 1..N)"),
    "flows_per_switch": Field(positive(maximum=MAX_FLOWS_PER_SWITCH), 100, "flows written to each switch"),
    "concurrency": Field(positive(maximum=MAX_CONCURRENCY), 4, "REST requests in flight at once"),
    "batch": Field(positive(maximum=MAX_BATCH), 1, "flows per request: 1 writes each flow at its own path "
                                                   "(OpenDaylight: PUT), more write that many flows of one switch "
                                                   "in one request"),
    "wait_s": Field(Number(minimum=1, maximum=MAX_WAIT_S), 30, "how long after the last write to wait for "
                                                               "FLOW_MODs still on their way"),
}
SWEEPABLE = ("switches", "flows_per_switch", "concurrency", "batch")


def not_applicable(adapter) -> str:
    """Why a controller without a REST flow API has no flow-programming figures."""
    return (f"not applicable: {adapter.spec.kind} has no REST flow API sdnbench programs (it forwards with a "
            "reactive application); flow programming applies to odl and to remote controllers with "
            "options.flow_api (onos, opendaylight)")


def wait_known(programmer, dpids: set[int], timeout_s: float) -> float | None:
    """Seconds until the controller lists every switch; None when its API cannot tell."""
    t0 = time.monotonic()
    while True:
        try:
            known = programmer.switches()
        except OSError:
            known = set()
        if known is None:
            return None
        if dpids <= known:
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout_s:
            raise ControllerError(f"{programmer.api}: {len(dpids - known)} of {len(dpids)} emulated switches not "
                                  f"listed by the controller after {timeout_s:g} s")
        time.sleep(0.25)


def remove_all(programmer, dpids: list[int], concurrency: int = CLEANUP_CONCURRENCY) -> str | None:
    """Delete the benchmark's flows from every switch, a few switches at once (not measured); the first
    failure in words, or None."""
    def one(dpid: int) -> str | None:
        try:
            programmer.remove(dpid)
        except ControllerError as exc:
            return str(exc)
        return None

    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(dpids)))) as pool:
        return next((e for e in pool.map(one, dpids) if e), None)


class FlowProgrammingWorkload(WorkloadType):
    """REST flow writes to a proactive controller, timed until the FLOW_MOD reaches an emulated switch."""

    name = "flowprog"
    record = workload_record("flowprog", "flow programming: REST flow writes until the FLOW_MOD reaches a switch", {
        **FIELDS,
        "sweep": Field(Sweep(FIELDS, SWEEPABLE), {}, "parameters to vary; every combination is a trial"),
    }, doc="Flow-programming throughput and latency of a proactive controller (OpenDaylight, a remote ONOS): "
           "flows written over its REST API, each timed until its FLOW_MOD reaches an emulated switch "
           "(sdnbench-ofload --listen-flow-mods); no network is built.", on_network=False)
    sweep_doc = "flowprog workloads sweep " + ", ".join(f"`{k}`" for k in SWEEPABLE) + "."
    metrics = METRICS
    headline_formats = (("flow_programming_per_s", "{:.0f} flows/s"), ("flow_programming_p50_ms", "p50 {:.1f} ms"))

    def needs_network(self, workload: dict) -> bool:
        return False

    def expected_seconds(self, trial) -> float:
        flows = trial.setting("switches") * trial.setting("flows_per_switch")
        return 5.0 + flows / ESTIMATE_FLOWS_PER_S

    def emulated_switches(self, trials: list) -> dict[int, int]:
        n = max((t.setting("switches") for t in trials), default=0)
        return {OFLOAD_FIRST_DPID + i: OFLOAD_DEFAULT_PORTS for i in range(n)}

    def preflight(self, exp, index: int) -> list[str]:
        """flowprog needs the ofload binary and controllers that take OpenFlow connections."""
        return ofload_preflight(exp, index, "program")

    def run(self, trial, ctx: TrialContext) -> tuple[list[FlowResult], dict]:
        wl, adapter = trial.workload, ctx.adapter
        programmer = adapter.flow_programmer()
        if programmer is None:
            # A rate of zero would read as a slow controller; say why there is no number instead.
            why = not_applicable(adapter)
            return [FlowResult("flows", "sdnbench-ofload", errors=[why], clock="")], {"flow_programming": why}
        switches, concurrency = trial.setting("switches"), trial.setting("concurrency")
        dpids = [OFLOAD_FIRST_DPID + i for i in range(switches)]
        spec, nonce = adapter.spec, new_nonce()
        reqs = requests(bench_rules(dpids, trial.setting("flows_per_switch"), nonce), trial.setting("batch"))
        budget_s = CONNECT_TIMEOUT_S + INVENTORY_TIMEOUT_S + 3 * self.expected_seconds(trial) + wl["wait_s"] + 60
        with FlowModListener(spec.host, spec.port, spec.openflow, switches, ctx.workdir, budget_s) as listener:
            connected = listener.wait_connected(CONNECT_TIMEOUT_S)
            inventory_s = wait_known(programmer, set(dpids), INVENTORY_TIMEOUT_S)
            writes = write_all(programmer, reqs, concurrency)
            acked = acknowledged(writes)
            deadline = time.monotonic() + wl["wait_s"]
            while not acked <= set(pair(writes, listener.seen()).seen_at_ns) and time.monotonic() < deadline:
                time.sleep(0.1)
            summary = listener.stop() or {}
        cleanup_error = remove_all(programmer, dpids)
        pairing = pair(writes, listener.seen())
        metrics = flow_metrics(writes, pairing, connected.get("switches_connected"))
        result = FlowResult("flows", "sdnbench-ofload", metrics, seen_series(writes, pairing),
                            raw={"ofload.jsonl": listener.raw(), "ofload.stderr": listener.stderr_tail()},
                            clock=CLOCK, errors=problems(metrics, writes, wl["wait_s"]))
        if not summary:
            why = "; ".join(listener.errors) or listener.stderr_tail() or "no output"
            result.errors.append(f"sdnbench-ofload ended without a summary: {why}")
        elif not summary.get("valid", True):
            result.errors.append("not valid: " + "; ".join(summary.get("invalid_reasons") or []))
        env = {"engine": "sdnbench-ofload", "engine_argv": listener.argv, "flow_api": programmer.api,
               "flow_cookie_nonce": nonce, "connect_s": connected.get("connect_s"),
               "inventory_s": None if inventory_s is None else round(inventory_s, 3),
               "write_s": round((max(w.done_ns for w in writes) - min(w.sent_ns for w in writes)) / 1e9, 3)}
        if cleanup_error:
            env["cleanup_error"] = cleanup_error
        return [result], env


WORKLOAD = FlowProgrammingWorkload()
