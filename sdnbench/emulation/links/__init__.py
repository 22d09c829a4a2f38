"""Link realisations by name (`network.links`): one module per kind, one line here each."""

from __future__ import annotations

from ..kinds import Registry
from .base import LinkKind

LINKS = Registry("link realisation", __name__, {
    "veth_tc": "veth_tc:VethTc",
})

__all__ = ["LINKS", "LinkKind"]
