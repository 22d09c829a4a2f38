"""A link's parameters as sdnbench-linkemu's configuration (one direction), and what Mininet's TCLink
(netem through tc) can express of them. Pure functions: no root, unit-tested."""

from __future__ import annotations

import zlib

from ...topology.graph import Link, LinkParams

#: Link keys Mininet's TCLink passes to netem (delay, uniform jitter, Bernoulli loss, limit).
TCLINK_KEYS = frozenset({"delay_ms", "jitter_ms", "loss_pct", "queue_pkts"})

#: Experiment keys -> the emulator's loss spec keys, per loss model.
_LOSS = {
    "bernoulli": ("bernoulli", {"loss_pct": "loss_pct", "loss_correlation_pct": "correlation_pct"}),
    "gilbert_elliott": ("gilbert_elliott", {"loss_p_pct": "p_pct", "loss_r_pct": "r_pct",
                                            "loss_bad_pct": "bad_loss_pct", "loss_good_pct": "good_loss_pct"}),
    "4state": ("four_state", {"loss_p13_pct": "p13_pct", "loss_p31_pct": "p31_pct", "loss_p32_pct": "p32_pct",
                              "loss_p23_pct": "p23_pct", "loss_p14_pct": "p14_pct"}),
}

#: Experiment keys copied as they are, with the emulator's name.
_PLAIN = {"delay_distribution": "delay_distribution", "delay_correlation_pct": "delay_correlation_pct",
          "keep_order": "keep_order", "reorder_pct": "reorder_pct", "reorder_gap": "reorder_gap",
          "reorder_correlation_pct": "reorder_correlation_pct", "duplicate_pct": "duplicate_pct",
          "duplicate_correlation_pct": "duplicate_correlation_pct", "corrupt_pct": "corrupt_pct",
          "corrupt_correlation_pct": "corrupt_correlation_pct", "rate_overhead_bytes": "overhead_bytes",
          "queue_pkts": "limit_pkts", "queue_bytes": "limit_bytes"}


def tclink_unsupported(p: LinkParams) -> list[str]:
    """The impairments of p that Mininet's TCLink cannot give (it has no distribution, correlation,
    loss model, duplication, corruption, reordering or netem rate)."""
    extra = [k for k in p.impairments() if k not in TCLINK_KEYS]
    if p.delay_distribution == "uniform":
        extra.remove("delay_distribution")
    if p.loss_model == "bernoulli":
        extra.remove("loss_model")
    return extra


def direction_seed(link: Link, direction: str) -> int:
    """A fixed seed per link direction: every controller of a comparison meets the same loss pattern."""
    return zlib.crc32(f"{link.a}-{link.b}:{direction}".encode())


def emulator_direction(p: LinkParams, seed: int) -> dict:
    """One direction of sdnbench-linkemu's configuration (linkemu-core's Impairment) for p."""
    out: dict = {"seed": seed}
    for key, scale, name in (("delay_ms", 1e6, "delay_ns"), ("jitter_ms", 1e6, "jitter_ns"),
                             ("rate_mbps", 1e6, "rate_bps")):
        value = getattr(p, key)
        if value:
            out[name] = round(value * scale)
    for key, name in _PLAIN.items():
        value = getattr(p, key)
        if value not in (None, False):
            out[name] = value
    model = p.loss_model or "bernoulli"
    tag, keys = _LOSS[model]
    loss = {name: getattr(p, key) for key, name in keys.items() if getattr(p, key) is not None}
    if loss and (model != "bernoulli" or p.loss_pct):
        out["loss"] = {"model": tag, **loss}
    return out


def emulator_link(name: str, inner: tuple[str, str], link: Link) -> dict:
    """One link of the emulator's configuration: a = the inner end on node a's side, the same impairment
    each way (as TCLink puts netem on both ends), independent random streams."""
    return {"name": name, "a": inner[0], "b": inner[1],
            "a_to_b": emulator_direction(link.params, direction_seed(link, "a>b")),
            "b_to_a": emulator_direction(link.params, direction_seed(link, "b>a"))}
