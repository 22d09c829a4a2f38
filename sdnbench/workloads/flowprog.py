"""Flow programming of a proactive controller: REST writes timed until their FLOW_MOD reaches a switch.

K flows per emulated switch are written through the controller's REST flow
API (sdnbench.forwarding: one request per flow, or `batch` flows of one
switch per request) by `concurrency` writers at once. Every flow carries a
cookie and an Ethernet destination of its own, so the FLOW_MOD it causes at
the switch (flowmods.FlowModListener) is paired with it: by cookie, or by
Ethernet destination for APIs that choose the cookie themselves (ONOS).

A flow's programming latency runs from the moment its request is sent to
the moment its FLOW_MOD is read at the switch; its acknowledgement latency
to the moment the 2xx answer is read. Both clocks are CLOCK_MONOTONIC of
this machine. A flow acknowledged but never seen is an error, never a zero.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..errors import ControllerError
from ..forwarding.rules import Rule
from ..metrics import HIGHER, LOWER, Metric, by_name
from .sbi import METRICS as SBI_METRICS

#: Cookies of benchmark flows: 0x5db1, a per-run nonce (16 bits), the flow's number (32 bits).
COOKIE_TAG = 0x5DB1
PRIORITY = 200
OUT_PORT = 1            # every emulated switch has ports 1-4
NAME_PREFIX = "sdnbench-fp-"
#: FLOW_MOD commands that install a flow (ADD, MODIFY, MODIFY_STRICT).
INSTALLS = (0, 1, 2)

METRICS: dict[str, Metric] = by_name(
    Metric("flow_programming_per_s", "flows/s", "flows seen at the switches per second, from the first REST "
                                                "write to the last FLOW_MOD", HIGHER, shown=True),
    Metric("flow_programming_p50_ms", "ms", "median REST write -> FLOW_MOD at the switch", LOWER, shown=True),
    Metric("flow_programming_p99_ms", "ms", "99th percentile REST write -> FLOW_MOD at the switch", LOWER,
           shown=True),
    Metric("flows_unseen", "flows", "flows the controller acknowledged that never reached their switch", LOWER,
           shown=True),
    Metric("flow_programming_p90_ms", "ms", "90th percentile REST write -> FLOW_MOD at the switch", LOWER),
    Metric("flow_programming_max_ms", "ms", "slowest REST write -> FLOW_MOD at the switch", LOWER),
    Metric("rest_ack_per_s", "flows/s", "flows acknowledged (2xx) per second, from the first write to the last "
                                        "answer", HIGHER),
    Metric("rest_ack_p50_ms", "ms", "median REST write -> 2xx answer", LOWER),
    Metric("rest_ack_p99_ms", "ms", "99th percentile REST write -> 2xx answer", LOWER),
    Metric("flows_written", "flows", "flows the workload wrote"),
    Metric("flows_acknowledged", "flows", "flows whose write the controller answered with 2xx", HIGHER),
    Metric("flows_seen", "flows", "flows whose FLOW_MOD reached their switch", HIGHER),
    Metric("rest_errors", "flows", "flows whose write was refused or unanswered", LOWER),
    Metric("flow_mods_unpaired", "messages", "FLOW_MODs (add/modify) that belong to no written flow"),
    Metric("flow_mods_duplicate", "messages", "further FLOW_MODs for an already seen flow"),
    SBI_METRICS["switches_connected"],
)


def cookie(nonce: int, k: int) -> int:
    """The cookie of flow k of a run."""
    return COOKIE_TAG << 48 | (nonce & 0xFFFF) << 32 | (k & 0xFFFF_FFFF)


def eth_dst(k: int) -> str:
    """The Ethernet destination flow k matches (unique per switch, locally administered)."""
    return "02:fb:" + ":".join(f"{b:02x}" for b in k.to_bytes(4, "big"))


def bench_rules(dpids: list[int], flows_per_switch: int, nonce: int) -> list[Rule]:
    """flows_per_switch flows on each switch, in write order: flow k of every switch, then flow k+1,
    so concurrent writers address different switches first."""
    return [Rule(dpid, f"{NAME_PREFIX}{k}", PRIORITY, OUT_PORT, eth_dst=eth_dst(k), cookie=cookie(nonce, k))
            for k in range(flows_per_switch) for dpid in dpids]


def requests(rules: list[Rule], batch: int) -> list[tuple[int, list[Rule]]]:
    """(dpid, rules) per REST request: one rule each, or up to `batch` rules of one switch."""
    if batch <= 1:
        return [(r.dpid, [r]) for r in rules]
    per_switch: dict[int, list[Rule]] = {}
    for r in rules:
        per_switch.setdefault(r.dpid, []).append(r)
    chunks = {d: [rs[i:i + batch] for i in range(0, len(rs), batch)] for d, rs in per_switch.items()}
    out = []
    for i in range(max((len(c) for c in chunks.values()), default=0)):
        out += [(d, c[i]) for d, c in chunks.items() if i < len(c)]
    return out


@dataclass
class Write:
    """One REST request and what came of it (monotonic ns)."""

    dpid: int
    rules: list[Rule]
    sent_ns: int
    done_ns: int
    error: str | None = None


def write_all(programmer, reqs: list[tuple[int, list[Rule]]], concurrency: int) -> list[Write]:
    """Send every request, `concurrency` at a time; a refused or failed request is recorded, not raised."""
    def one(req: tuple[int, list[Rule]]) -> Write:
        dpid, rules = req
        t0 = time.monotonic_ns()
        try:
            if len(rules) == 1:
                programmer.write_flow(dpid, rules[0])
            else:
                programmer.write(dpid, rules)
            error = None
        except ControllerError as exc:
            error = str(exc)
        return Write(dpid, rules, t0, time.monotonic_ns(), error)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(one, reqs))


@dataclass
class Pairing:
    """Written flows matched with the FLOW_MODs the switches saw."""

    programming_ns: dict[tuple[int, str], int] = field(default_factory=dict)  # (dpid, name) -> write..FLOW_MOD
    seen_at_ns: dict[tuple[int, str], int] = field(default_factory=dict)      # (dpid, name) -> FLOW_MOD time
    duplicates: int = 0
    unpaired: int = 0


def pair(writes: list[Write], flow_mods) -> Pairing:
    """Each flow's first installing FLOW_MOD on its own switch, found by cookie, else by Ethernet destination."""
    by_cookie, by_mac, sent = {}, {}, {}
    for w in writes:
        for r in w.rules:
            key = (r.dpid, r.name)
            by_cookie[(r.dpid, r.cookie)] = by_mac[(r.dpid, (r.eth_dst or "").lower())] = key
            sent[key] = w.sent_ns
    out = Pairing()
    for fm in sorted(flow_mods, key=lambda f: f.t_ns):
        if fm.command not in INSTALLS:
            continue
        key = by_cookie.get((fm.dpid, fm.cookie)) or by_mac.get((fm.dpid, (fm.eth_dst or "").lower()))
        if key is None or fm.t_ns < sent[key]:
            out.unpaired += 1     # not ours, or left from an earlier run
        elif key in out.seen_at_ns:
            out.duplicates += 1
        else:
            out.seen_at_ns[key] = fm.t_ns
            out.programming_ns[key] = fm.t_ns - sent[key]
    return out


def acknowledged(writes: list[Write]) -> set[tuple[int, str]]:
    """(dpid, name) of every flow whose write got a 2xx answer."""
    return {(r.dpid, r.name) for w in writes if w.error is None for r in w.rules}


def percentile_ms(values_ns, q: float) -> float | None:
    """The q-th percentile in ms (None without values)."""
    return float(np.percentile(np.asarray(values_ns, dtype=float), q)) / 1e6 if len(values_ns) else None


def per_s(count: int, first_ns: int, last_ns: int | None) -> float | None:
    """count events between first_ns and last_ns, per second (None without events or time)."""
    return count / ((last_ns - first_ns) / 1e9) if count and last_ns and last_ns > first_ns else None


def flow_metrics(writes: list[Write], pairing: Pairing, switches_connected: int | None) -> dict[str, float | None]:
    """The METRICS of one run. Rates and latencies are None (not zero) when nothing was seen."""
    acked = acknowledged(writes)
    written = sum(len(w.rules) for w in writes)
    lat = list(pairing.programming_ns.values())
    ack_lat = [w.done_ns - w.sent_ns for w in writes if w.error is None for _ in w.rules]
    first = min((w.sent_ns for w in writes), default=0)
    last_seen = max(pairing.seen_at_ns.values(), default=None)
    last_ack = max((w.done_ns for w in writes if w.error is None), default=None)
    return {
        "flow_programming_per_s": per_s(len(lat), first, last_seen),
        "flow_programming_p50_ms": percentile_ms(lat, 50), "flow_programming_p90_ms": percentile_ms(lat, 90),
        "flow_programming_p99_ms": percentile_ms(lat, 99),
        "flow_programming_max_ms": max(lat) / 1e6 if lat else None,
        "rest_ack_per_s": per_s(len(acked), first, last_ack),
        "rest_ack_p50_ms": percentile_ms(ack_lat, 50), "rest_ack_p99_ms": percentile_ms(ack_lat, 99),
        "flows_written": float(written), "flows_acknowledged": float(len(acked)),
        "flows_seen": float(len(lat)), "flows_unseen": float(len(acked - set(pairing.seen_at_ns))),
        "rest_errors": float(written - len(acked)),
        "flow_mods_unpaired": float(pairing.unpaired), "flow_mods_duplicate": float(pairing.duplicates),
        "switches_connected": None if switches_connected is None else float(switches_connected),
    }


def seen_series(writes: list[Write], pairing: Pairing, bin_s: float = 1.0) -> list[dict[str, float]]:
    """Flows seen at the switches per second, in bins of bin_s from the first write (t_s: a bin's end)."""
    if not writes or not pairing.seen_at_ns:
        return []
    first = min(w.sent_ns for w in writes)
    counts = np.bincount([int((t - first) / 1e9 // bin_s) for t in pairing.seen_at_ns.values()])
    return [{"t_s": round((i + 1) * bin_s, 3), "flow_programming_per_s": float(n) / bin_s}
            for i, n in enumerate(counts)]


def problems(metrics: dict, writes: list[Write], wait_s: float) -> list[str]:
    """What went wrong in words: refused writes (with the first reason) and flows that never arrived."""
    out = []
    if metrics["rest_errors"]:
        first = next(w.error for w in writes if w.error)
        out.append(f"{metrics['rest_errors']:.0f} of {metrics['flows_written']:.0f} flow writes failed; first: {first}")
    if metrics["flows_unseen"]:
        out.append(f"{metrics['flows_unseen']:.0f} of {metrics['flows_acknowledged']:.0f} acknowledged flows never "
                   f"reached their switch within {wait_s:g} s of the last write")
    return out


def new_nonce() -> int:
    """A run's 16-bit cookie nonce: FLOW_MODs of an earlier run's flows (replayed at reconnection) never pair."""
    return random.randrange(1, 1 << 16)
