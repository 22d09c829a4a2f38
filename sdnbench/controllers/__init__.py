"""Controller adapters by kind, and the factory that builds one from a spec."""

from __future__ import annotations

from ..errors import ConfigError
from .base import Availability, ControllerAdapter, ControllerSpec
from .faucet import FaucetAdapter
from .none import NoneAdapter
from .osken import OsKenAdapter
from .pox import PoxAdapter
from .remote import RemoteAdapter
from .ryu import RyuAdapter
from .testcontroller import TestControllerAdapter

ADAPTERS: dict[str, type[ControllerAdapter]] = {
    "osken": OsKenAdapter,
    "ryu": RyuAdapter,
    "faucet": FaucetAdapter,
    "testcontroller": TestControllerAdapter,
    "pox": PoxAdapter,
    "remote": RemoteAdapter,
    "none": NoneAdapter,
}


def make_adapter(spec: ControllerSpec, tracker=None) -> ControllerAdapter:
    """The adapter for spec.kind; ConfigError for an unknown kind or OpenFlow version."""
    cls = ADAPTERS.get(spec.kind)
    if cls is None:
        raise ConfigError(f"unknown controller {spec.kind!r}; expected one of {', '.join(ADAPTERS)}",
                          key="kind")
    if spec.openflow not in cls.openflow_versions:
        raise ConfigError(f"{spec.kind} speaks OpenFlow {' and '.join(cls.openflow_versions)}, "
                          f"not {spec.openflow!r}", key="openflow")
    return cls(spec, tracker)


def availability(kind: str) -> Availability:
    """Whether controller `kind` can run here (for check and doctor)."""
    if kind not in ADAPTERS:
        return Availability(False, f"unknown controller {kind!r}")
    return ADAPTERS[kind].availability()


__all__ = ["ADAPTERS", "Availability", "ControllerAdapter", "ControllerSpec", "make_adapter", "availability"]
