"""Switch implementations by name (`network.switch`): one module per kind, one line here each."""

from __future__ import annotations

from ..kinds import Registry
from .base import SwitchKind

SWITCHES = Registry("switch", __name__, {
    "ovs": "ovs:OvsSwitch",
    "ovs_fast": "ovs_fast:OvsFast",
    "p4": "p4:P4Switch",
})

__all__ = ["SWITCHES", "SwitchKind"]
