"""The comparison of a campaign: per row (topology x workload x sweep point) and
controller, statistics of each metric over repetitions.

A trial's value of a metric is the mean over its flows (as in published
multi-flow evaluations: average per flow, then over flows); the statistics are
then taken over the trial's repetitions.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass

from ..results.store import ResultStore
from .stats import Summary, summarize

# Parameters that identify the controller side, not the row.
_CONTROLLER_PARAMS = {"openflow", "controller_kind", "fail_mode"}


@dataclass(frozen=True)
class Cell:
    """One metric of one controller in one row."""

    row: tuple[str, str, str]       # topology, workload, sweep point as text
    controller: str
    metric: str
    summary: Summary
    failed: int                     # repetitions that failed
    values: tuple[float, ...] = ()  # one per measured repetition (significance tests need them)
    invalid: int = 0                # measured repetitions in which the testbed saturated
    invalid_reasons: tuple[str, ...] = ()   # why, distinct, in the order met


def params_text(params: dict) -> str:
    """A trial's row parameters as 'k=v k=v' (controller-side settings are columns, not rows)."""
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in _CONTROLLER_PARAMS)


def row_key(topology: str, workload: str, params: dict) -> tuple[str, str, str]:
    """The row a trial belongs to."""
    return (topology, workload, params_text(params))


def compare(store: ResultStore, hide_invalid: bool = False) -> tuple[list[Cell], list[str], list[tuple[str, str, str]]]:
    """All cells, plus controllers and rows in plan order.

    Repetitions in which the testbed saturated (TrialRecord.invalid) count in a cell, and the cell
    says how many and why; with hide_invalid they are left out of its statistics instead.
    """
    from ..runner.monitor import MONITOR_METRICS as testbed

    values: dict[tuple, list[float]] = {}
    failed: dict[tuple, int] = {}
    invalid: dict[tuple, list[str]] = {}
    controllers: list[str] = []
    rows: list[tuple[str, str, str]] = []
    for trial in store.trials():
        row = row_key(trial.topology, trial.workload, trial.params)
        if trial.controller not in controllers:
            controllers.append(trial.controller)
        if row not in rows:
            rows.append(row)
        if trial.status != "ok":
            failed[(row, trial.controller)] = failed.get((row, trial.controller), 0) + 1
            continue
        if trial.invalid:
            invalid.setdefault((row, trial.controller), []).append("; ".join(trial.invalid))
            if hide_invalid:
                continue
        per_metric: dict[str, list[float]] = {}
        for flow_metrics in store.metrics(trial.key).values():
            for name, value in flow_metrics.items():
                per_metric.setdefault(name, []).append(value)
        for name, vals in per_metric.items():
            values.setdefault((row, trial.controller, name), []).append(sum(vals) / len(vals))
        for name, value in (trial.timings or {}).items():
            if name in testbed and value is not None:   # the monitor's metrics, kept with the timings
                values.setdefault((row, trial.controller, name), []).append(value)
    cells = []
    for (row, ctrl, name), vals in values.items():
        s = summarize(vals)
        if s:
            finite = tuple(v for v in vals if v is not None and math.isfinite(v))
            why = invalid.get((row, ctrl), [])
            cells.append(Cell(row, ctrl, name, s, failed.get((row, ctrl), 0), finite, len(why),
                              tuple(dict.fromkeys(why))))
    return cells, controllers, rows


def metrics_present(cells: list[Cell]) -> list[str]:
    """Metric names that have data, in a stable order."""
    return sorted({c.metric for c in cells})


def finite_or_none(value):
    """value, or None where it is NaN or infinite (JSON has no NaN; CSV readers disagree on it)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def to_rows(cells: list[Cell], marks: dict | None = None) -> list[dict]:
    """Long format: one dict per cell, for CSV and JSON; the unit and better direction from the catalog.

    marks (analysis.significance.against_baseline) adds each cell's verdict against the baseline column,
    the ratio of the means and the test's adjusted p-value.
    """
    from ..metrics import describe

    out = []
    for c in cells:
        topology, workload, point = c.row
        info = describe(c.metric)
        stats = {k: finite_or_none(v) for k, v in c.summary.as_dict().items()}
        out.append({"topology": topology, "workload": workload, "params": point, "controller": c.controller,
                    "metric": c.metric, "unit": info.unit, "better": info.better, **stats,
                    "failed_repetitions": c.failed, "valid": c.invalid == 0,
                    "invalid_repetitions": c.invalid, "invalid_reasons": " / ".join(c.invalid_reasons)})
        if marks is not None:
            m = marks.get((c.row, c.controller, c.metric))
            out[-1].update({"vs_baseline": m.verdict if m else "", "ratio_to_baseline": m.ratio if m else None,
                            "q_value": m.q_value if m else None})
    return out


def to_csv(cells: list[Cell], marks: dict | None = None) -> str:
    """CSV text of the long format (an empty field where a statistic has no value)."""
    rows = to_rows(cells, marks)
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return buf.getvalue()


def to_json(cells: list[Cell], marks: dict | None = None) -> str:
    """JSON text of the long format: null instead of NaN, and why under "null_reasons"."""
    rows = to_rows(cells, marks)
    for row in rows:
        if row["ci95"] is None and row["n"] == 1:
            row["null_reasons"] = {"ci95": "one repetition: no confidence interval"}
    return json.dumps(rows, indent=2, allow_nan=False)
