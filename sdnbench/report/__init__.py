"""Reports of a run by name (`sdnbench results --format NAME`): one module each defining `REPORT`.

REPORT_MODULES is the registry; the first is the default format. A report
reads the store and the comparison computed from it, never tools' output.
"""

from __future__ import annotations

import importlib

from .base import Report

#: Modules of this package that define a report; the first is the default.
REPORT_MODULES = ("table", "csv", "json", "html")

REPORTS: dict[str, Report] = {
    r.name: r for r in (importlib.import_module(f"{__name__}.{m}").REPORT for m in REPORT_MODULES)}

DEFAULT_REPORT = REPORT_MODULES[0]

__all__ = ["DEFAULT_REPORT", "REPORTS", "Report"]
