"""Is a difference between two cells real? Welch's t-test over repetitions, a false discovery rate, a minimum effect.

Each pair of cells (two runs, or a column and the baseline column) is tested
with Welch's t-test (scipy, unequal variances). A comparison tests many cells
at once, so by default the p-values are adjusted with Benjamini-Hochberg
(scipy): at alpha 0.05, two runs of the same setup are reported as equal in at
least 95 of 100 comparisons however many cells they have, where unadjusted
tests call some noisy cell different in about every other comparison
(docs/report.md). A change must
also be at least `threshold` relative to the reference mean; the catalog's
better direction then makes it a regression or an improvement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..metrics import HIGHER, LOWER, describe
from .compare import Cell

ALPHA = 0.05
THRESHOLD = 0.05      # 5 % relative difference of the means
CORRECTIONS = ("bh", "none")

REGRESSION, IMPROVEMENT, CHANGED, SAME, UNTESTED = "regression", "improvement", "changed", "same", "untested"
#: How a table marks a cell against the baseline column.
SYMBOLS = {IMPROVEMENT: "▲", REGRESSION: "▼", CHANGED: "◆"}

CellKey = tuple[tuple[str, str, str], str, str]   # row, controller, metric


@dataclass(frozen=True)
class Change:
    """How cell b differs from cell a (the reference) in one metric."""

    metric: str
    mean_a: float
    mean_b: float
    n_a: int
    n_b: int
    p_value: float | None     # Welch's test; None with fewer than two repetitions on a side
    q_value: float | None     # p adjusted for the number of cells tested (the p-value without correction)
    verdict: str              # regression, improvement, changed (no better direction), same, untested

    @property
    def ratio(self) -> float | None:
        """mean_b / mean_a (None when mean_a is 0)."""
        return self.mean_b / self.mean_a if self.mean_a else None

    @property
    def relative(self) -> float | None:
        """(mean_b - mean_a) / |mean_a|, e.g. 0.2 for 20 % more (None when mean_a is 0)."""
        return _relative(self.mean_a, self.mean_b) if self.mean_a else None

    @property
    def significant(self) -> bool:
        """Whether the test and the threshold both found a difference."""
        return self.verdict in (REGRESSION, IMPROVEMENT, CHANGED)


def welch_p(a: tuple[float, ...], b: tuple[float, ...]) -> float | None:
    """Two-sided p-value of Welch's t-test; None with fewer than two values on a side.

    Two constant samples (sd 0 on both sides) have no t statistic: p is 0 when their means
    differ and 1 when they are equal (a deterministic metric either moved or did not).
    """
    if len(a) < 2 or len(b) < 2:
        return None
    if max(a) == min(a) and max(b) == min(b):
        return 1.0 if a[0] == b[0] else 0.0
    import warnings

    from scipy import stats   # imported on first use: it costs half a second at CLI start-up

    with warnings.catch_warnings():   # nearly equal samples: scipy warns of precision, the p-value stands
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def _relative(mean_a: float, mean_b: float) -> float:
    if mean_a == 0:
        return 0.0 if mean_b == 0 else math.inf
    return (mean_b - mean_a) / abs(mean_a)


def _adjusted(ps: list[float | None], correction: str) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values of the tested cells (None stays None)."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}")
    tested = [i for i, p in enumerate(ps) if p is not None]
    if correction == "none" or not tested:
        return list(ps)
    from scipy import stats

    out = list(ps)
    for i, q in zip(tested, stats.false_discovery_control([ps[i] for i in tested])):
        out[i] = float(q)
    return out


def _verdict(metric: str, rel: float, q: float | None, alpha: float, threshold: float) -> str:
    if q is None:
        return UNTESTED
    if q >= alpha or abs(rel) < threshold:
        return SAME
    better = describe(metric).better
    if better == LOWER:
        return REGRESSION if rel > 0 else IMPROVEMENT
    if better == HIGHER:
        return REGRESSION if rel < 0 else IMPROVEMENT
    return CHANGED


def method(alpha: float = ALPHA, threshold: float = THRESHOLD, correction: str = "bh") -> str:
    """How significance was decided, in one line."""
    adjusted = ", p adjusted for the number of cells (Benjamini-Hochberg)" if correction == "bh" else ""
    return (f"Welch's t-test over repetitions at alpha {alpha:g}{adjusted}, "
            f"and a difference of at least {threshold * 100:g} % of the reference mean")


def judge(pairs: list[tuple[CellKey, Cell, Cell]], alpha: float = ALPHA, threshold: float = THRESHOLD,
          correction: str = "bh") -> dict[CellKey, Change]:
    """The Change from a to b of every pair, the p-values adjusted over all pairs together."""
    ps = [welch_p(a.values, b.values) for _, a, b in pairs]
    qs = _adjusted(ps, correction)
    out = {}
    for (key, a, b), p, q in zip(pairs, ps, qs):
        rel = _relative(a.summary.mean, b.summary.mean)
        out[key] = Change(a.metric, a.summary.mean, b.summary.mean, a.summary.n, b.summary.n, p, q,
                          _verdict(a.metric, rel, q, alpha, threshold))
    return out


def compare_runs(cells_a: list[Cell], cells_b: list[Cell], metrics: list[str] | None = None,
                 **test) -> dict[CellKey, Change]:
    """Per cell present in both runs (row x controller x metric), b against a; in a's order."""
    index_b = {(c.row, c.controller, c.metric): c for c in cells_b}
    pairs = [((a.row, a.controller, a.metric), a, index_b[(a.row, a.controller, a.metric)]) for a in cells_a
             if (a.row, a.controller, a.metric) in index_b and (not metrics or a.metric in metrics)]
    return judge(pairs, **test)


def against_baseline(cells: list[Cell], baseline: str, metrics: list[str] | None = None,
                     **test) -> dict[CellKey, Change]:
    """Per cell of another controller, that cell against the baseline controller's cell of its row."""
    base = {(c.row, c.metric): c for c in cells if c.controller == baseline}
    pairs = [((c.row, c.controller, c.metric), base[(c.row, c.metric)], c) for c in cells
             if c.controller != baseline and (c.row, c.metric) in base and (not metrics or c.metric in metrics)]
    return judge(pairs, **test)
