"""Whether shards ran on comparable machines: the environment fields a merge requires equal.

Cells of one table come from different shards, so a difference between two
controllers must not be a difference between two machines. Fields that shape
a measurement must agree; the host name and the OS string are only reported
(shards run on different hosts by design; the kernel and Python are checked
on their own).
"""

from __future__ import annotations

from collections import defaultdict

from .store import TrialRecord

#: Must be equal in every store: the machine kind, kernel, Open vSwitch, what the kernel offers, sdnbench.
MACHINE_FIELDS = ("kernel", "cpu_model", "cpu_count", "cpus_usable", "ovs_version", "kernel_datapath_available",
                  "netem_available", "sdnbench_version", "python")
#: Must be equal between stores for the same topology: the data plane it was built on.
TOPOLOGY_FIELDS = ("switch", "datapath", "links", "link_shaping")
#: Must be equal between stores for the same controller label: the controller's version.
CONTROLLER_FIELDS = ("controller_version",)
#: Reported when they differ, never refused.
REPORTED_FIELDS = ("os",)


def _values(trials: list[TrialRecord], fields: tuple[str, ...], scope) -> dict[tuple, set]:
    """(scope, field) -> set of values the trials recorded (failed trials without an environment add none)."""
    out: dict[tuple, set] = defaultdict(set)
    for t in trials:
        env = t.environment or {}
        for name in fields:
            if env.get(name) is not None:
                out[(scope(t), name)].add(str(env[name]))
    return out


def _differences(stores: dict[str, list[TrialRecord]], fields, scope, ignore: set[str]) -> list[str]:
    """'field (scope): store=value, store=value' for each field on which two stores disagree."""
    per_store = {name: _values(trials, tuple(f for f in fields if f not in ignore), scope)
                 for name, trials in stores.items()}
    lines = []
    for key in sorted({k for v in per_store.values() for k in v}):
        seen = {name: values[key] for name, values in per_store.items() if key in values}
        if len({frozenset(v) for v in seen.values()}) > 1:
            where, field = key
            scope_text = f" ({where})" if where else ""
            lines.append(f"{field}{scope_text}: " + ", ".join(f"{name}={'/'.join(sorted(v))}"
                                                             for name, v in seen.items()))
    return lines


def mismatches(stores: dict[str, list[TrialRecord]], ignore: set[str] = frozenset()) -> list[str]:
    """Environment fields on which the stores disagree and that a merge must refuse."""
    return (_differences(stores, MACHINE_FIELDS, lambda t: "", ignore)
            + _differences(stores, TOPOLOGY_FIELDS, lambda t: f"topology {t.topology}", ignore)
            + _differences(stores, CONTROLLER_FIELDS, lambda t: f"controller {t.controller}", ignore))


def reported(stores: dict[str, list[TrialRecord]]) -> list[str]:
    """Fields that may differ between shards, when they do."""
    return _differences(stores, REPORTED_FIELDS, lambda t: "", set())
