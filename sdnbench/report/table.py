"""The terminal report: one table per metric, then the stress outcomes of northbound phases."""

from __future__ import annotations

from ..analysis.table import render_report
from .base import Report


class TableReport(Report):
    name = "table"
    description = "one text table per metric, controllers as columns (the default)"

    def render(self, store, comparison, metrics=None, marks=None) -> str:
        return render_report(store, comparison, metrics, marks)


REPORT = TableReport()
