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


def params_text(params: dict) -> str:
    """A trial's row parameters as 'k=v k=v' (controller-side settings are columns, not rows)."""
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in _CONTROLLER_PARAMS)


def row_key(topology: str, workload: str, params: dict) -> tuple[str, str, str]:
    """The row a trial belongs to."""
    return (topology, workload, params_text(params))


def compare(store: ResultStore) -> tuple[list[Cell], list[str], list[tuple[str, str, str]]]:
    """All cells, plus controllers and rows in plan order."""
    from ..runner.monitor import MONITOR_METRICS as testbed

    values: dict[tuple, list[float]] = {}
    failed: dict[tuple, int] = {}
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
            cells.append(Cell(row, ctrl, name, s, failed.get((row, ctrl), 0)))
    return cells, controllers, rows


def metrics_present(cells: list[Cell]) -> list[str]:
    """Metric names that have data, in a stable order."""
    return sorted({c.metric for c in cells})


def to_rows(cells: list[Cell]) -> list[dict]:
    """Long format: one dict per cell, for CSV and JSON."""
    out = []
    for c in cells:
        topology, workload, point = c.row
        out.append({"topology": topology, "workload": workload, "params": point, "controller": c.controller,
                    "metric": c.metric, **c.summary.as_dict(), "failed_repetitions": c.failed})
    return out


def to_csv(cells: list[Cell]) -> str:
    """CSV text of the long format."""
    rows = to_rows(cells)
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return buf.getvalue()


def to_json(cells: list[Cell]) -> str:
    """JSON text of the long format."""
    return json.dumps(to_rows(cells), indent=2, default=lambda x: None)
