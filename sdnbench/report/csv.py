"""The comparison cells as CSV, one row per row x controller x metric (long format)."""

from __future__ import annotations

from ..analysis.compare import to_csv
from .base import Report


class CsvReport(Report):
    name = "csv"
    description = "long-format CSV: topology, workload, params, controller, metric, n, mean, sd, ci95, ..."

    def render(self, store, comparison, metrics=None, marks=None) -> str:
        return to_csv([c for c in comparison[0] if not metrics or c.metric in metrics], marks)


REPORT = CsvReport()
