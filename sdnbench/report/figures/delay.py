"""Distribution of per-packet one-way delay per row: a CDF where the store has the packets, else its quantiles.

D-ITG trials keep every packet (ITGDec's decoded log is stored raw), so their
delays give an empirical CDF. The native engine keeps percentiles of each flow
(min, p50, p90, p99, max), not the packets: those are drawn as points at their
quantile, with no line between them, and the caption says so.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ...analysis.compare import row_key
from ...results.store import ResultStore
from .plot import Plot
from .style import COLUMN_IN, new_figure, scaled

#: Stored metrics that are quantiles of one-way delay, with their level.
QUANTILES = (("owd_min_ms", 0.0), ("owd_p50_ms", 0.5), ("owd_p90_ms", 0.9), ("owd_p99_ms", 0.99),
             ("owd_max_ms", 1.0))
DITG_PACKETS = ".ditg.recv.txt"
TRUNCATED = "\n[truncated at"
CDF_POINTS = 1000


@dataclass
class Delays:
    """One row x controller: packet delays (ms) where stored, and quantile points otherwise."""

    samples: list[float] = field(default_factory=list)
    quantiles: list[tuple[float, float]] = field(default_factory=list)   # (delay ms, level)
    truncated: int = 0                                                   # outputs kept only in part


def ditg_delays_ms(text: str) -> tuple[list[float], bool]:
    """One-way delays of a stored ITGDec per-packet log; True when the store kept only its head."""
    from ...workloads.traffic.ditg import parse_packets

    cut = text.find(TRUNCATED)
    if cut >= 0:
        text = text[:text.rfind("\n", 0, cut)]   # drop the partial line before the marker
    return [p.delay_s * 1000.0 for p in parse_packets(text)], cut >= 0


def collect(store: ResultStore) -> dict[tuple, dict[str, Delays]]:
    """row -> controller -> Delays, for rows with packets or quantiles of one-way delay."""
    out: dict[tuple, dict[str, Delays]] = defaultdict(lambda: defaultdict(Delays))
    for t in store.trials():
        if t.status != "ok":
            continue
        cell = None
        for name, content in store.raw(t.key).items():
            if name.endswith(DITG_PACKETS):
                cell = out[row_key(t.topology, t.workload, t.params)][t.controller]
                delays, cut = ditg_delays_ms(content)
                cell.samples += delays
                cell.truncated += cut
        if cell is not None:
            continue   # packets beat quantiles
        for flow in store.metrics(t.key).values():
            points = [(flow[m], q) for m, q in QUANTILES if flow.get(m) is not None]
            if points:
                out[row_key(t.topology, t.workload, t.params)][t.controller].quantiles += points
    return out


def _ecdf(samples: list[float]) -> tuple[list[float], list[float]]:
    """The empirical CDF at CDF_POINTS levels (exact quantiles of the samples, so the curve is exact)."""
    import numpy as np

    levels = np.linspace(0.0, 1.0, min(CDF_POINTS, len(samples)))
    return list(np.quantile(np.asarray(samples), levels, method="inverted_cdf")), list(levels)


def delay_plot(row, by_ctrl: dict[str, Delays], controllers: list[str], palette: dict[str, str],
               index: int) -> Plot | None:
    """The delay distribution figure of one row."""
    ctrls = [c for c in controllers if c in by_ctrl and (by_ctrl[c].samples or by_ctrl[c].quantiles)]
    if not ctrls:
        return None
    values = [v for c in ctrls for v in by_ctrl[c].samples + [q[0] for q in by_ctrl[c].quantiles]]
    factor, unit = scaled("ms", max(values))
    fig, (ax,) = new_figure(COLUMN_IN, 2.4)
    for c in ctrls:
        d = by_ctrl[c]
        if d.samples:
            xs, ys = _ecdf(d.samples)
            ax.step([x * factor for x in xs], ys, where="post", color=palette[c], linewidth=1.0,
                    label=f"{c} ({len(d.samples)} packets)")
        if d.quantiles:
            ax.plot([v * factor for v, _ in d.quantiles], [q for _, q in d.quantiles], linestyle="",
                    marker="o", markersize=3.5, markerfacecolor="none", color=palette[c],
                    label=f"{c} (stored quantiles)")
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 50:
        ax.set_xscale("log")
    ax.set_xlabel(f"one-way delay [{unit}]")
    ax.set_ylabel("fraction of packets")
    ax.set_ylim(0, 1.02)
    ax.grid(True, axis="both")
    fig.legend(loc="outside upper center", ncol=min(len(ctrls), 2), handlelength=1.5)
    topology, workload, point = row
    where = " ".join(x for x in (workload, "on", topology, point) if x)
    parts = []
    if any(by_ctrl[c].samples for c in ctrls):
        parts.append("Lines: empirical CDF of every packet's one-way delay (D-ITG's per-packet log), "
                     "pooled over repetitions and flows.")
    if any(by_ctrl[c].quantiles for c in ctrls):
        parts.append("Points: the store keeps only percentiles of each flow's one-way delay (min, p50, p90, p99, "
                     "max; native engine), not its packets, so no curve is drawn between them.")
    if any(by_ctrl[c].truncated for c in ctrls):
        parts.append("Some packet logs were stored only in part (their head): their later packets are missing.")
    return Plot(f"delay-{index:02d}", "delay", f"one-way delay, {where}", " ".join(parts), fig,
                {"curves": sum(bool(by_ctrl[c].samples) for c in ctrls),
                 "quantile_sets": sum(bool(by_ctrl[c].quantiles) for c in ctrls)})


def delay_plots(store: ResultStore, controllers: list[str], palette: dict[str, str]) -> list[Plot]:
    """The delay distribution figures of every row that has packets or quantiles."""
    plots = []
    for row, by_ctrl in collect(store).items():
        plot = delay_plot(row, by_ctrl, controllers, palette, len(plots) + 1)
        if plot:
            plots.append(plot)
    return plots

