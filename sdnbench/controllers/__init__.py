"""Controller adapters by kind, and the factory that builds one from a spec.

Each adapter is one module defining `ADAPTER` (a ControllerAdapter subclass
whose `kind` names it); ADAPTER_MODULES is the registry. The experiment
schema and `doctor` take their controller choices from here.
"""

from __future__ import annotations

import importlib

from ..errors import ConfigError
from .base import Availability, ControllerAdapter, ControllerSpec

#: Modules of this package that define an adapter, in the order the docs list them.
ADAPTER_MODULES = ("osken", "ryu", "faucet", "testcontroller", "pox", "odl", "p4rt", "remote", "none")

ADAPTERS: dict[str, type[ControllerAdapter]] = {
    cls.kind: cls for cls in (importlib.import_module(f"{__name__}.{m}").ADAPTER for m in ADAPTER_MODULES)}


def make_adapter(spec: ControllerSpec, tracker=None) -> ControllerAdapter:
    """The adapter for spec.kind; ConfigError for an unknown kind or OpenFlow version."""
    cls = ADAPTERS.get(spec.kind)
    if cls is None:
        raise ConfigError(f"unknown controller {spec.kind!r}; expected one of {', '.join(ADAPTERS)}",
                          key="kind")
    refusal = cls.refusal(spec.openflow)
    if refusal:
        raise ConfigError(refusal, key="openflow")
    return cls(spec, tracker)


def availability(kind: str) -> Availability:
    """Whether controller `kind` can run here (for check and doctor)."""
    if kind not in ADAPTERS:
        return Availability(False, f"unknown controller {kind!r}")
    return ADAPTERS[kind].availability()


__all__ = ["ADAPTERS", "Availability", "ControllerAdapter", "ControllerSpec", "make_adapter", "availability"]
