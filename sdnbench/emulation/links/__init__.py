"""Link realisations by name (`network.links`): one module per kind, one line here each.

`auto` (the default) is not a kind: it picks, per network, veth_tc where that can realise every link
(no impairment, or netem present and enough), else linkemu.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..kinds import Registry
from .base import LINK_METRICS, LinkKind, LinkWindow

LINKS = Registry("link realisation", __name__, {
    "veth_tc": "veth_tc:VethTc",
    "linkemu": "linkemu:LinkEmu",
})

AUTO = "auto"


def link_choices() -> tuple[str, ...]:
    """What `network.links` accepts: auto, then every registered kind."""
    return (AUTO, *LINKS.names())


def resolve(choice: str, links: Iterable = ()) -> str:
    """The kind `choice` means for these links: itself, or for auto the first kind that can realise them
    (the last one when none can, so its refusal names what is missing)."""
    if choice != AUTO:
        return choice
    links = list(links)
    for name in LINKS.names():
        if LINKS.get(name).availability(links).ok:
            return name
    return LINKS.names()[-1]


__all__ = ["AUTO", "LINKS", "LINK_METRICS", "LinkKind", "LinkWindow", "link_choices", "resolve"]
