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


#: After a cell: that many of its repetitions measured a saturated testbed (see LEGEND).
SATURATED_SIGN = "†"


def legend(cells: list[Cell]) -> str:
    """What the marks in the tables mean, and why cells were marked; '' when nothing was."""
    lines = []
    if any(c.failed for c in cells):
        lines.append("!N  N repetitions failed (stored with the error; `sdnbench run FILE --out RUN --resume` "
                     "runs them again)")
    reasons = list(dict.fromkeys(r for c in cells for r in c.invalid_reasons))
    if reasons:
        lines.append(f"{SATURATED_SIGN}N  N repetitions measured the testbed, not the controller "
                     "(`results --hide-invalid` leaves them out of the statistics; the CSV/JSON `valid` and "
                     "`invalid_reasons` columns say which):")
        lines += [f"      {r}" for r in reasons[:8]] + ([f"      ... and {len(reasons) - 8} more"] if len(reasons) > 8 else [])
    return "\n".join(lines)


def fmt_cell(cell: Cell | None) -> str:
    """'mean ± ci95 (n)' or '-'."""
    if cell is None:
        return "-"
    s = cell.summary
    ci = "" if math.isnan(s.ci95) else f" ± {fmt_value(s.ci95)}"
    failed = f" !{cell.failed}" if cell.failed else ""
    saturated = f" {SATURATED_SIGN}{cell.invalid}" if cell.invalid else ""
    return f"{fmt_value(s.mean)}{ci}{failed}{saturated}"


def mark(change) -> str:
    """' ▲' / ' ▼' / ' ◆' after a cell that differs significantly from the baseline column, else ''."""
    from .significance import SYMBOLS

    return f" {SYMBOLS[change.verdict]}" if change is not None and change.verdict in SYMBOLS else ""


def render(cells: list[Cell], controllers: list[str], rows: list[tuple[str, str, str]],
           metric: str, marks: dict | None = None) -> str:
    """One metric as a text table; marks: each cell against the baseline column (analysis.significance)."""
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
        body.append(list(row) + [fmt_cell(index.get((row, ctrl))) + mark((marks or {}).get((row, ctrl, metric)))
                                 for ctrl in controllers])
    return "\n".join([f"{metric} [{unit}] — {desc}; mean ± 95% CI over repetitions", *text_table(header, body)])


def text_table(header: list[str], body: list[list[str]]) -> list[str]:
    """Lines of a left-aligned table: header, rule, rows."""
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    return ["  ".join(h.ljust(w) for h, w in zip(header, widths)),
            "  ".join("-" * w for w in widths),
            *("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in body)]


def shown_metrics(cells: list[Cell], metrics: list[str] | None = None) -> list[str]:
    """The metrics tables show: those asked for, else the catalog's default ones that have data."""
    present = {c.metric for c in cells}
    return metrics or [m for m in default_shown() if m in present]


def render_all(cells: list[Cell], controllers: list[str], rows, metrics: list[str] | None = None,
               marks: dict | None = None) -> str:
    """Tables of the chosen (or default) metrics, separated by blank lines."""
    tables = [t for t in (render(cells, controllers, rows, m, marks) for m in shown_metrics(cells, metrics)) if t]
    return "\n\n".join(tables)


def render_report(store, comparison, metrics: list[str] | None = None, marks: dict | None = None) -> str:
    """Everything a reader expects after a run: metric tables, then stress outcomes if any.

    comparison is sdnbench.analysis.compare.compare(store), computed once by the caller.
    """
    from .stress_table import render_stress

    cells, controllers, rows = comparison
    parts = [render_all(cells, controllers, rows, metrics, marks), legend(cells)]
    if not metrics:
        parts.append(render_stress(store))
    return "\n\n".join(p for p in parts if p) or "no measurements stored yet"
