"""Terminal tables: controllers as columns, topology x workload x parameters as rows."""

from __future__ import annotations

import math

from ..metrics import default_shown, describe
from .compare import Cell


def fmt_value(v: float) -> str:
    """Three significant digits, no scientific notation for everyday magnitudes."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e3:
        return f"{v / 1e3:.3g}k"
    if a == 0:
        return "0"
    return f"{v:.3g}"


def fmt_cell(cell: Cell | None) -> str:
    """'mean ± ci95 (n)' or '-'."""
    if cell is None:
        return "-"
    s = cell.summary
    ci = "" if math.isnan(s.ci95) else f" ± {fmt_value(s.ci95)}"
    failed = f" !{cell.failed}" if cell.failed else ""
    return f"{fmt_value(s.mean)}{ci}{failed}"


def render(cells: list[Cell], controllers: list[str], rows: list[tuple[str, str, str]],
           metric: str) -> str:
    """One metric as a text table."""
    index = {(c.row, c.controller): c for c in cells if c.metric == metric}
    if not index:
        return ""
    info = describe(metric)
    unit, desc = info.unit, info.description
    header = ["topology", "workload", "params"] + controllers
    body = []
    for row in rows:
        if not any((row, ctrl) in index for ctrl in controllers):
            continue
        body.append(list(row) + [fmt_cell(index.get((row, ctrl))) for ctrl in controllers])
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    lines = [f"{metric} [{unit}] — {desc}; mean ± 95% CI over repetitions"]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in body]
    return "\n".join(lines)


def render_all(cells: list[Cell], controllers: list[str], rows, metrics: list[str] | None = None) -> str:
    """Tables of the chosen (or default) metrics, separated by blank lines."""
    present = {c.metric for c in cells}
    chosen = metrics or [m for m in default_shown() if m in present]
    return "\n\n".join(t for t in (render(cells, controllers, rows, m) for m in chosen) if t)


def render_report(store, comparison, metrics: list[str] | None = None) -> str:
    """Everything a reader expects after a run: metric tables, then stress outcomes if any.

    comparison is sdnbench.analysis.compare.compare(store), computed once by the caller.
    """
    from .stress_table import render_stress

    cells, controllers, rows = comparison
    parts = [render_all(cells, controllers, rows, metrics)]
    if not metrics:
        parts.append(render_stress(store))
    return "\n\n".join(p for p in parts if p) or "no measurements stored yet"
