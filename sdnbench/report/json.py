"""The comparison cells as JSON, the long format of the CSV report."""

from __future__ import annotations

from ..analysis.compare import to_json
from .base import Report


class JsonReport(Report):
    name = "json"
    description = "the CSV report's rows as a JSON list"

    def render(self, store, comparison, metrics=None, marks=None) -> str:
        return to_json([c for c in comparison[0] if not metrics or c.metric in metrics], marks)


REPORT = JsonReport()
