"""What a report is: a named rendering of one run's store and comparison."""

from __future__ import annotations

from abc import ABC, abstractmethod


class Report(ABC):
    """Renders a run; `comparison` is analysis.compare.compare(store), computed once by the caller."""

    #: The name `--format` takes.
    name: str = ""
    #: One line for `--help`.
    description: str = ""

    @abstractmethod
    def render(self, store, comparison, metrics: list[str] | None = None, marks: dict | None = None) -> str:
        """The report as text; metrics limits it to those metrics (None: the catalog's default ones).

        marks: analysis.significance.against_baseline(...), each cell against a baseline column, or None.
        """
