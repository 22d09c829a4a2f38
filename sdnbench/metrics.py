"""The metric catalog: every value sdnbench stores, with its unit, meaning and better direction.

Workload types and the testbed monitor declare their metrics as `Metric`s;
`catalog()` gathers them. Tables, exports and plots read units, descriptions,
directions and the default selection from here, and the results store refuses
a metric that is not catalogued, so a new measurement cannot arrive without
saying what it is.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

LOWER, HIGHER, NEITHER = "lower", "higher", "neither"


@dataclass(frozen=True)
class Metric:
    """One measured quantity; the name carries its unit (owd_mean_ms, throughput_bps)."""

    name: str
    unit: str
    description: str
    better: str = NEITHER    # lower, higher, or neither (a count or setting, not a quality)
    shown: bool = False      # in the default tables, in catalog order

    def __post_init__(self):
        if self.better not in (LOWER, HIGHER, NEITHER):
            raise ValueError(f"metric {self.name}: better must be {LOWER}, {HIGHER} or {NEITHER}")


def by_name(*metrics: Metric) -> dict[str, Metric]:
    """A group of metrics keyed by name; a name given twice is a programming error."""
    out: dict[str, Metric] = {}
    for m in metrics:
        if m.name in out:
            raise ValueError(f"metric {m.name} declared twice")
        out[m.name] = m
    return out


@functools.lru_cache(maxsize=1)
def catalog() -> dict[str, Metric]:
    """Every metric sdnbench stores: each workload type's, fault recovery's, the link realisations' own, then
    the testbed monitor's."""
    from .emulation.links.air import AIR_METRICS
    from .emulation.links.base import LINK_METRICS
    from .faults import FAULT_METRICS
    from .runner.monitor import MONITOR_METRICS
    from .workloads.types import WORKLOAD_TYPES

    out: dict[str, Metric] = {}
    for group in [*(t.metrics for t in WORKLOAD_TYPES.values()), FAULT_METRICS, LINK_METRICS, AIR_METRICS,
                  MONITOR_METRICS]:
        for name, m in group.items():
            known = out.setdefault(name, m)
            if known != m:
                raise ValueError(f"metric {name} declared twice with different meanings")
    return out


#: Per-interval series the workload types store under names that are not metrics of a trial
#: (a per-second answer rate whose trial metric is its mean, a count per interval).
SERIES_ONLY: dict[str, Metric] = by_name(
    Metric("responses_per_s", "responses/s", "southbound answers (FLOW_MOD + PACKET_OUT) per second", HIGHER),
    Metric("matched_per_s", "requests/s", "PACKET_INs answered per second (first answer only)", HIGHER),
    Metric("failed", "requests", "failed API requests in the interval", LOWER),
)


def describe(name: str) -> Metric:
    """The catalog entry of name, or of a series-only name (else an empty unit and itself as description)."""
    return catalog().get(name) or SERIES_ONLY.get(name) or Metric(name, "", name)


__all__ = ["Metric", "by_name", "catalog", "describe", "default_shown", "LOWER", "HIGHER", "NEITHER"]


def default_shown() -> list[str]:
    """Metrics shown in tables when none are asked for, in catalog order."""
    return [m.name for m in catalog().values() if m.shown]
