"""Grouped bars per metric: topology x parameters as groups, controllers as colours, 95 % CI whiskers.

A cell that must not be trusted as it stands (analysis.validity) is hatched;
a cell whose every repetition failed gets a cross and the word "failed" where
its bar would be.
"""

from __future__ import annotations

import math
from typing import Callable

from ...analysis.compare import Cell
from ...analysis.validity import CellHealth
from .plot import Plot
from .style import COLUMN_IN, MARKED_HATCH, PAGE_IN, axis_label, new_figure, scaled, unit_and_meaning, wrap

Row = tuple[str, str, str]
#: Units of flags and codes: tables show them, a bar of them says nothing.
NOT_QUANTITIES = ("bool", "0/1/2")
#: Width of a tick label's character at 7 pt, in points (DejaVu Sans averages 0.55 em).
CHAR_PT = 3.9
#: Means spanning more than this factor get a logarithmic axis (a linear one flattens the small ones).
LOG_SPAN = 100


def group_label(row: Row, with_workload: bool) -> str:
    """A group's tick label: topology, then workload (when several), then the parameters, one per line."""
    topology, workload, params = row
    parts = [topology] if topology != "-" else []
    if with_workload:
        parts.append(workload)
    parts += params.split()
    return "\n".join(parts) or workload


def grouping_label(rows: list[Row], with_workload: bool) -> str:
    """What the groups are, e.g. 'topology × size_bytes'."""
    parts = ["topology"] if any(r[0] != "-" for r in rows) else []
    if with_workload:
        parts.append("workload")
    for r in rows:
        for name in (kv.split("=", 1)[0] for kv in r[2].split()):
            if name not in parts:
                parts.append(name)
    return " × ".join(parts) or "workload"


def figure_width(groups: int, controllers: int) -> float:
    """Column width while it holds the bars, up to the page width."""
    return min(PAGE_IN, max(COLUMN_IN, 0.9 + groups * (0.22 * controllers + 0.2)))


def draw_bars(ax, rows: list[Row], controllers: list[str], cell: Callable[[Row, str], Cell | None],
              health: dict[tuple[Row, str], CellHealth], palette: dict[str, str], factor: float,
              with_workload: bool) -> dict[str, int]:
    """Bars of one metric on ax; returns counts of what was drawn (bars, marked, failed)."""
    k = len(controllers)
    width = 0.8 / k
    drawn = {"bars": 0, "marked": 0, "failed": 0}
    for gi, row in enumerate(rows):
        for ci, ctrl in enumerate(controllers):
            x = gi + (ci - (k - 1) / 2) * width
            c, h = cell(row, ctrl), health.get((row, ctrl))
            if c is None:
                if h is not None and h.all_failed:
                    ax.plot([x], [0], marker="x", color=palette[ctrl], markersize=5, mew=1.2, clip_on=False)
                    ax.annotate("failed", (x, 0), xytext=(0, 4), textcoords="offset points", rotation=90,
                                ha="center", va="bottom", fontsize=6, color="#444444")
                    drawn["failed"] += 1
                continue
            marked = h is not None and h.marked
            ci95 = c.summary.ci95
            bar = ax.bar(x, c.summary.mean * factor, width * 0.92, color=palette[ctrl],
                         edgecolor="#222222" if marked else palette[ctrl], linewidth=0.6,
                         hatch=MARKED_HATCH if marked else None,
                         yerr=ci95 * factor if math.isfinite(ci95) else None,
                         error_kw={"elinewidth": 0.8, "capsize": 2, "capthick": 0.8, "ecolor": "#222222"})
            bar.patches[0].set_gid(f"bar {ctrl} {' '.join(row)}")
            drawn["bars"] += 1
            drawn["marked"] += marked
    labels = [group_label(r, with_workload) for r in rows]
    ax.set_xticks(range(len(rows)), labels)
    ax.set_xlim(-0.5, len(rows) - 0.5)
    longest = max(len(line) for label in labels for line in label.splitlines())
    group_pt = (ax.figure.get_figwidth() - 0.9) * 72 / len(rows)
    if longest * CHAR_PT > group_pt:   # labels would run into each other: slant them
        ax.tick_params(axis="x", labelrotation=30)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
    return drawn


def legend(fig, controllers: list[str], palette: dict[str, str], drawn: dict[str, int]) -> None:
    """Controllers above the axes; below them, the marks that were used."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig.legend(handles=[Patch(facecolor=palette[c], edgecolor=palette[c], label=c) for c in controllers],
               loc="outside upper center", ncol=min(len(controllers), 4), handlelength=1.2, columnspacing=1.0)
    marks = []
    if drawn["marked"]:
        marks.append(Patch(facecolor="white", edgecolor="#222222", hatch=MARKED_HATCH,
                           label="failed repetitions or tool errors"))
    if drawn["failed"]:
        marks.append(Line2D([], [], marker="x", linestyle="", color="#444444", label="every repetition failed"))
    if marks:
        fig.legend(handles=marks, loc="outside lower center", ncol=len(marks), handlelength=1.2, columnspacing=1.0)


def bar_plot(metric: str, cells: list[Cell], controllers: list[str], rows: list[Row],
             health: dict[tuple[Row, str], CellHealth], palette: dict[str, str]) -> Plot | None:
    """The grouped bar figure of one metric (None for a metric with no cell, or a flag)."""
    index = {(c.row, c.controller): c for c in cells if c.metric == metric}
    unit, desc, _ = unit_and_meaning(metric)
    if not index or unit in NOT_QUANTITIES:
        return None
    present = [r for r in rows if any((r, c) in index for c in controllers)]
    ctrls = [c for c in controllers if any((r, c) in index or (r, c) in health for r in present)]
    with_workload = len({r[1] for r in present}) > 1
    peak = max(abs(c.summary.mean) + (c.summary.ci95 if math.isfinite(c.summary.ci95) else 0)
               for c in index.values())
    factor, shown_unit = scaled(unit, peak)
    fig, (ax,) = new_figure(figure_width(len(present), len(ctrls)), 2.5)
    drawn = draw_bars(ax, present, ctrls, lambda r, c: index.get((r, c)), health, palette, factor,
                      with_workload)
    ax.set_ylabel(axis_label(metric, shown_unit))
    ax.set_xlabel(grouping_label(present, with_workload))
    means = [c.summary.mean for c in index.values()]
    log = min(means) > 0 and max(means) / min(means) > LOG_SPAN
    if log:
        ax.set_yscale("log")
    elif min(means) >= 0:
        ax.set_ylim(bottom=0)
    legend(fig, ctrls, palette, drawn)
    ns = sorted({c.summary.n for c in index.values()})
    caption = (f"{metric}: {desc} [{unit}]. Bars: mean over repetitions (n = {', '.join(map(str, ns))}); "
               f"whiskers: 95 % confidence interval of the mean (Student's t); no whisker: one repetition."
               + (" Logarithmic axis: the means span more than a factor of 100." if log else ""))
    if drawn["marked"]:
        caption += " Hatched: some repetitions failed or their tools reported errors."
    if drawn["failed"]:
        caption += " Cross: every repetition failed."
    return Plot(f"bars-{metric}", "bars", wrap(desc, 80), caption, fig, {**drawn, "log": log})
