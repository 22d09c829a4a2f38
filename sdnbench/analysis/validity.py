"""Which cells a reader must not trust as they stand: failed repetitions, and tools that said so.

A cell (row x controller) is marked when some of its repetitions failed, when
a repetition stored as ok carries an error its tools reported (a sender that
could not hold its rate, a southbound generator that was not valid), or when
the testbed saturated during it (runner/saturation.py).
Figures and tables mark such cells and give these reasons.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..results.store import ResultStore
from .compare import row_key


@dataclass
class CellHealth:
    """What went wrong in the repetitions of one row x controller."""

    repetitions: int = 0
    failed: int = 0
    flagged: int = 0                                  # ok repetitions whose tools reported a problem
    invalid: int = 0                                  # ok repetitions in which the testbed saturated
    reasons: list[str] = field(default_factory=list)  # distinct, in the order met

    @property
    def marked(self) -> bool:
        """Whether figures and tables should mark the cell."""
        return bool(self.failed or self.flagged or self.invalid)

    @property
    def all_failed(self) -> bool:
        """No repetition measured anything."""
        return self.repetitions > 0 and self.failed == self.repetitions

    def text(self) -> str:
        """One line: counts, then the reasons."""
        parts = []
        if self.failed:
            parts.append(f"{self.failed} of {self.repetitions} repetitions failed")
        if self.flagged:
            parts.append(f"{self.flagged} of {self.repetitions} with tool errors")
        if self.invalid:
            parts.append(f"{self.invalid} of {self.repetitions} on a saturated testbed")
        return "; ".join(parts) + (": " + " / ".join(self.reasons) if self.reasons else "")


def cell_health(store: ResultStore) -> dict[tuple[tuple[str, str, str], str], CellHealth]:
    """(row, controller) -> its health, for every row x controller with a trial."""
    out: dict[tuple[tuple[str, str, str], str], CellHealth] = {}
    for t in store.trials():
        h = out.setdefault((row_key(t.topology, t.workload, t.params), t.controller), CellHealth())
        h.repetitions += 1
        if t.status != "ok":
            h.failed += 1
        elif t.error:
            h.flagged += 1
        if t.status == "ok" and t.invalid:
            h.invalid += 1
        reasons = ([t.error.splitlines()[0][:160]] if t.error else []) + [r[:160] for r in t.invalid or []]
        h.reasons += [r for r in reasons if r not in h.reasons]
    return out
