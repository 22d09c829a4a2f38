"""Link parameters of a topology spec: `link` for all, `edge_link`/`core_link` to override,
and per link from a topology file (GraphML edge attributes, a custom Topo's addLink options)."""

from __future__ import annotations

from ..errors import ConfigError
from .graph import LinkParams


def _params(d: dict | None) -> LinkParams:
    d = d or {}
    return LinkParams(**{k: d[k] for k in LinkParams.keys() if d.get(k) is not None})


def link_params(spec: dict, default: dict | None = None) -> tuple[LinkParams, LinkParams]:
    """(edge, core) parameters from a topology spec and the network's default link."""
    base = spec.get("link") or default
    edge = spec.get("edge_link") or base
    core = spec.get("core_link") or base
    return _params(edge), _params(core)


def checked_params(values: dict, where: str, base: LinkParams = LinkParams()) -> LinkParams:
    """base overridden by a file's per-link values, checked as an experiment's `link` record is
    (ConfigError naming where and the key otherwise)."""
    import yaml

    from ..config.fields import Context
    from ..config.schema import LINK

    merged = {k: v for k, v in vars(base).items() if v not in (None, False)}
    merged.update(values)
    ctx = Context()
    checked = LINK.check(yaml.compose(yaml.safe_dump(merged)), ctx, "")
    if checked is None:
        raise ConfigError(f"{where}: " + "; ".join(f"{i.key}: {i.message}" for i in ctx.issues))
    return _params(checked)
