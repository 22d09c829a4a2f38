"""Workload types by name: each is one module here defining `WORKLOAD` (a WorkloadType).

TYPE_MODULES is the registry; the first type is the default when a workload
names none. The experiment schema, the format reference, the planner, the
preflight checks, the runner and the metric catalog all read from here.
"""

from __future__ import annotations

import importlib

from ..base import WorkloadType

#: Modules of this package that define a workload type; the first is the default type.
TYPE_MODULES = ("traffic", "sbi", "nbi", "flowprog")

WORKLOAD_TYPES: dict[str, WorkloadType] = {
    t.name: t for t in (importlib.import_module(f"{__name__}.{m}").WORKLOAD for m in TYPE_MODULES)}
DEFAULT_TYPE = next(iter(WORKLOAD_TYPES))


def workload_type(name: str) -> WorkloadType:
    """The workload type called name (KeyError naming the known types otherwise)."""
    try:
        return WORKLOAD_TYPES[name]
    except KeyError:
        raise KeyError(f"unknown workload type {name!r}; expected one of {', '.join(WORKLOAD_TYPES)}") from None
