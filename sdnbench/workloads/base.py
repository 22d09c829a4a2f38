"""The contract of a workload type (traffic, sbi, nbi, ...) and the result record they all return.

A workload type is one module under `workloads/types/` defining `WORKLOAD`, an
instance of a WorkloadType subclass. It owns everything the runner needs to
know of it: its section of the experiment file, its sweep points, whether it
runs on an emulated network, how long a trial takes, what to check on this
machine before running, how to run one trial, and the metrics it reports.
The runner never looks at a workload's `type` string.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config.fields import Record
    from ..config.loader import Experiment
    from ..metrics import Metric


@dataclass
class FlowResult:
    """One result of a trial (a flow, a generator run, an API load phase) in the common schema."""

    flow_id: str
    engine: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    series: list[dict[str, float]] = field(default_factory=list)  # {"t_s": ..., metric: ...}
    raw: dict[str, str] = field(default_factory=dict)             # tool outputs, by file name
    clock: str = "single-kernel CLOCK_REALTIME (sender and receiver share one clock)"
    errors: list[str] = field(default_factory=list)
    #: Unix times of moments within the result, e.g. "longest_gap_end": when packets arrived again.
    timestamps: dict[str, float] = field(default_factory=dict)


@dataclass
class TrialContext:
    """What one trial runs against."""

    net: Any                   # sdnbench.emulation.network.EmulatedNetwork, or None without a network
    adapter: Any               # the controller's ControllerAdapter
    workdir: Path              # the trial's directory for raw outputs
    store: Any = None          # the campaign's ResultStore (a later phase may read an earlier one's result)


def sweep_points(sweep: dict) -> list[dict]:
    """Every combination of a sweep's values (one empty point without a sweep)."""
    if not sweep:
        return [{}]
    keys = list(sweep)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(sweep[k] for k in keys))]


class WorkloadType(ABC):
    """One kind of workload; a stateless singleton shared by every trial of that kind."""

    #: The value of `type:` in experiment files.
    name: str = ""
    #: The experiment-file section of this type (checked by sdnbench.config.schema).
    record: "Record"
    #: Further records of this type for the format reference, as (title, record).
    doc_records: tuple[tuple[str, "Record"], ...] = ()
    #: What `sweep:` may vary, in words, for the format reference.
    sweep_doc: str = ""
    #: Metrics the type's results carry, by name (sdnbench.metrics).
    metrics: dict[str, "Metric"] = {}
    #: True when trials drive the controller's northbound API (its endpoint is checked around them).
    uses_northbound: bool = False

    def points(self, workload: dict) -> list[dict]:
        """The sweep points of a workload: every combination of its `sweep` by default."""
        return sweep_points(workload.get("sweep") or {})

    def needs_network(self, workload: dict) -> bool:
        """True when trials run on an emulated network (built once per controller and topology)."""
        return True

    def needs_topology(self, workload: dict) -> bool:
        """True when trials run once per topology of the experiment."""
        return self.needs_network(workload)

    def prepare(self, trial) -> None:
        """Work out at plan time what a trial needs from its topology (ConfigError when impossible)."""

    @abstractmethod
    def expected_seconds(self, trial) -> float:
        """How long the trial measures, for estimates and deadlines."""

    def reachability_pairs(self, trial) -> list[tuple[str, str]]:
        """Host pairs that must reach each other before the trial is measured."""
        return []

    def emulated_switches(self, trials: list) -> dict[int, int]:
        """dpid -> port count of switches these trials emulate themselves, without a network
        (for controllers that must know their switches in advance, such as Faucet)."""
        return {}

    def preflight(self, exp: "Experiment", index: int) -> list[str]:
        """Problems that stop workload `index` of exp on this machine, each naming its line."""
        return []

    #: (metric, format) pairs for the progress line, e.g. ("loss_pct", "loss {:.2f}%").
    headline_formats: tuple[tuple[str, str], ...] = ()

    def headline(self, results: list[FlowResult]) -> str:
        """A few words about a trial's first result for the progress line (headline_formats), or why it has
        no figures (a result without metrics but with errors, such as a controller it does not apply to)."""
        if results and not results[0].metrics and results[0].errors:
            return results[0].errors[0]
        m = results[0].metrics if results else {}
        return ", ".join(fmt.format(m[key]) for key, fmt in self.headline_formats if m.get(key) is not None)

    @abstractmethod
    def run(self, trial, ctx: TrialContext) -> tuple[list[FlowResult], dict]:
        """Run one trial; returns its results and what to add to the trial's environment record."""


#: Fault actions in one trial's schedule: each waits for its second and most for a reconnection.
MAX_FAULTS = 1_000


def workload_record(type_name: str, type_doc: str, fields: dict, doc: str, extra_check=None,
                    is_default: bool = False, on_network: bool = True) -> "Record":
    """The experiment-file record of a workload type: `name` and `type`, its own fields, and for
    workloads on an emulated network a `faults` schedule."""
    from ..config.fields import NAME, REQUIRED, Field, ListOf, Record, Str
    from ..faults import FAULT

    common = {
        "name": Field(NAME, REQUIRED, "name of the workload in tables"),
        "type": Field(Str(choices=(type_name,)), type_name if is_default else REQUIRED, type_doc),
    }
    if on_network:
        fields = {**fields, "faults": Field(ListOf(FAULT, min_items=0, max_items=MAX_FAULTS), [],
                                            "faults injected during each trial (see the fault record)")}
    return Record(f"{type_name} workload", {**common, **fields}, doc=doc, extra_check=extra_check)
