"""`sdnbench compare A B` as text or JSON: every cell's ratio and verdict, then the regressions."""

from __future__ import annotations

import json

from ..analysis.compare import finite_or_none
from ..analysis.significance import IMPROVEMENT, REGRESSION, CellKey, Change
from ..analysis.table import fmt_value, text_table
from ..metrics import describe


def _columns(key: CellKey, c: Change) -> list[str]:
    (topology, workload, point), controller, metric = key
    return [topology, workload, point, controller, metric, describe(metric).unit, fmt_value(c.mean_a),
            fmt_value(c.mean_b), "-" if c.ratio is None else f"{c.ratio:.3f}",
            "-" if c.q_value is None else f"{c.q_value:.2g}", f"{c.n_a}/{c.n_b}", c.verdict]


HEADER = ["topology", "workload", "params", "controller", "metric", "unit", "mean A", "mean B", "B/A", "p",
          "n A/B", "verdict"]


def render_text(changes: dict[CellKey, Change], names: tuple[str, str], how: str, show_all: bool,
                notes: list[str] = ()) -> str:
    """The comparison for a terminal: the cells (all, or those that changed), then the summary."""
    lines = [f"A = {names[0]}", f"B = {names[1]}", f"{len(changes)} cells in both runs; {how}.", *notes, ""]
    listed = [(k, c) for k, c in changes.items() if show_all or c.significant]
    if listed:
        lines += text_table(HEADER, [_columns(k, c) for k, c in listed]) + [""]
    regressions = [k for k, c in changes.items() if c.verdict == REGRESSION]
    improvements = sum(c.verdict == IMPROVEMENT for c in changes.values())
    untested = sum(c.p_value is None for c in changes.values())
    lines.append(f"{len(regressions)} regressions, {improvements} improvements"
                 + (f", {untested} cells untested (fewer than 2 repetitions)" if untested else "")
                 + ("" if show_all or listed else "; --all lists every cell"))
    for (row, controller, metric) in regressions:
        c = changes[(row, controller, metric)]
        where = " ".join(x for x in (*row, controller) if x and x != "-")
        lines.append(f"  regression: {metric} of {where}: {fmt_value(c.mean_a)} -> {fmt_value(c.mean_b)} "
                     f"{describe(metric).unit} ({describe(metric).better} is better)")
    return "\n".join(lines)


def render_json(changes: dict[CellKey, Change], names: tuple[str, str], how: str) -> str:
    """The comparison as JSON: the method, then one object per cell (null where a value is undefined)."""
    cells = []
    for ((topology, workload, point), controller, metric), c in changes.items():
        info = describe(metric)
        cells.append({"topology": topology, "workload": workload, "params": point, "controller": controller,
                      "metric": metric, "unit": info.unit, "better": info.better, "mean_a": finite_or_none(c.mean_a),
                      "mean_b": finite_or_none(c.mean_b), "n_a": c.n_a, "n_b": c.n_b,
                      "ratio": finite_or_none(c.ratio), "p_value": c.p_value, "q_value": c.q_value,
                      "verdict": c.verdict})
    return json.dumps({"a": names[0], "b": names[1], "method": how,
                       "regressions": sum(c.verdict == REGRESSION for c in changes.values()), "cells": cells},
                      indent=2, allow_nan=False)
