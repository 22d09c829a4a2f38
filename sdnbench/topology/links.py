"""Link parameters of a topology spec: `link` for all, `edge_link`/`core_link` to override."""

from __future__ import annotations

from .graph import LinkParams


def _params(d: dict | None) -> LinkParams:
    d = d or {}
    return LinkParams(d.get("bw_mbps"), d.get("delay_ms"), d.get("loss_pct"))


def link_params(spec: dict, default: dict | None = None) -> tuple[LinkParams, LinkParams]:
    """(edge, core) parameters from a topology spec and the network's default link."""
    base = spec.get("link") or default
    edge = spec.get("edge_link") or base
    core = spec.get("core_link") or base
    return _params(edge), _params(core)
