"""wired: hosts on veth pairs to their switches, shaped by the topology's link keys (the default)."""

from .base import MediumKind

KIND = MediumKind(name="wired", doc="hosts wired to their switches (veth pairs, shaped by the link keys)",
                  apply=lambda graph, settings, shared: graph)
