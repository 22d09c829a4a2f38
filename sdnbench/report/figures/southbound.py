"""Southbound capacity: responses/s with 95 % CI, and answer latency percentiles, per controller and OpenFlow version."""

from __future__ import annotations

import math

from ...analysis.compare import Cell, row_key
from ...analysis.validity import CellHealth
from ...results.store import ResultStore
from .bars import draw_bars, figure_width, grouping_label, legend
from .plot import Plot
from .style import new_figure, scaled

RATE = "responses_per_s_mean"
#: Latency percentiles drawn as points: metric, level, marker.
PERCENTILES = (("latency_p50_us", "p50", "o"), ("latency_p90_us", "p90", "s"), ("latency_p99_us", "p99", "^"))


def openflow_labels(store: ResultStore, controllers: list[str], rows) -> dict[str, str]:
    """Controller -> 'label (OpenFlow 1.3)' from the versions its trials of these rows ran."""
    versions: dict[str, set[str]] = {c: set() for c in controllers}
    for t in store.trials():
        if t.params.get("openflow") and row_key(t.topology, t.workload, t.params) in rows:
            versions.setdefault(t.controller, set()).add(str(t.params["openflow"]))
    return {c: f"{c} (OpenFlow {', '.join(sorted(v))})" if v else c for c, v in versions.items()}


def southbound_plot(store: ResultStore, cells: list[Cell], controllers: list[str], rows,
                    health: dict[tuple, CellHealth], palette: dict[str, str]) -> Plot | None:
    """Rate and latency percentiles of every southbound row (None when the run has none)."""
    index = {(c.row, c.controller, c.metric): c for c in cells}
    present = [r for r in rows if any((r, c, RATE) in index for c in controllers)]
    if not present:
        return None
    ctrls = [c for c in controllers if any((r, c, RATE) in index for r in present)]
    with_workload = len({r[1] for r in present}) > 1
    fig, (rate_ax, lat_ax) = new_figure(figure_width(len(present), len(ctrls)), 4.2, rows=2, sharex=True)
    rates = [c for c in cells if c.metric == RATE and c.row in present]
    factor, unit = scaled("responses/s", max(c.summary.mean + (c.summary.ci95 if math.isfinite(c.summary.ci95)
                                                                else 0) for c in rates))
    drawn = draw_bars(rate_ax, present, ctrls, lambda r, c: index.get((r, c, RATE)), health, palette, factor,
                      with_workload)
    rate_ax.set_ylabel(f"FLOW_MOD + PACKET_OUT\nanswers [{unit}]\n(higher is better)")
    rate_ax.set_ylim(bottom=0)
    points, log = _percentiles(lat_ax, present, ctrls, index, palette)
    lat_ax.set_xlabel(grouping_label(present, with_workload))
    fig.align_ylabels([rate_ax, lat_ax])
    labels = openflow_labels(store, ctrls, set(present))
    legend(fig, [labels[c] for c in ctrls], {labels[c]: palette[c] for c in ctrls}, drawn)
    caption = ("Southbound load (sdnbench-ofload against each controller). Top: FLOW_MOD + PACKET_OUT answers "
               "per second, mean over repetitions with 95 % confidence whiskers. Bottom: PACKET_IN to answer "
               "latency percentiles (circle p50, square p90, triangle p99), mean over repetitions"
               + (", log scale." if log else "."))
    return Plot("southbound", "southbound", "southbound responses/s and latency", caption, fig,
                {**drawn, "latency_points": points})


def _percentiles(ax, rows, ctrls: list[str], index: dict, palette: dict[str, str]) -> tuple[int, bool]:
    """Latency percentile markers at each bar's position; returns how many were drawn, and if on a log scale."""
    k, width, drawn = len(ctrls), 0.8 / len(ctrls), 0
    values = [index[(r, c, m)].summary.mean for r in rows for c in ctrls for m, _, _ in PERCENTILES
              if (r, c, m) in index]
    factor, unit = scaled("us", max(values, default=0.0))
    for gi, row in enumerate(rows):
        for ci, ctrl in enumerate(ctrls):
            x = gi + (ci - (k - 1) / 2) * width
            for metric, _, marker in PERCENTILES:
                cell = index.get((row, ctrl, metric))
                if cell is not None and cell.summary.mean > 0:
                    ax.plot([x], [cell.summary.mean * factor], marker=marker, linestyle="", markersize=4,
                            color=palette[ctrl], markerfacecolor="none" if metric != PERCENTILES[0][0] else None)
                    drawn += 1
    from matplotlib.lines import Line2D

    ax.legend(handles=[Line2D([], [], marker=m, linestyle="", color="#444444", markersize=4, label=level,
                              markerfacecolor=None if i == 0 else "none")
                       for i, (_, level, m) in enumerate(PERCENTILES)], loc="best", ncol=3, handletextpad=0.2)
    log = bool(drawn) and max(values) > 10 * min(v for v in values if v > 0)
    if log:
        ax.set_yscale("log")   # p99 can be orders of magnitude above p50
    else:
        ax.set_ylim(bottom=0)
    ax.set_ylabel(f"PACKET_IN → answer\nlatency [{unit}]\n(lower is better)")
    ax.grid(True, axis="y", which="both")
    return drawn, log
