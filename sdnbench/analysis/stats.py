"""Summary statistics over repetitions: mean, sd, 95% CI (Student t, from scipy), median, min, max.

The one implementation of these statistics in sdnbench; everything that reports
a confidence interval calls summarize().
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with df degrees of freedom (two-sided 95%)."""
    from scipy import stats   # imported on first use: it costs half a second at CLI start-up

    if df < 1:
        raise ValueError("need at least one degree of freedom")
    return float(stats.t.ppf(0.975, df))


@dataclass(frozen=True)
class Summary:
    """Statistics of one metric over n repetitions."""

    n: int
    mean: float
    sd: float
    ci95: float        # half-width of the 95% confidence interval of the mean
    median: float
    min: float
    max: float

    def as_dict(self) -> dict:
        """Plain dict for JSON/CSV."""
        return {k: getattr(self, k) for k in ("n", "mean", "sd", "ci95", "median", "min", "max")}


def summarize(values: list[float]) -> Summary | None:
    """Summary of values (None when there are none)."""
    vals = [float(v) for v in values if v is not None and not math.isnan(v)]
    if not vals:
        return None
    n = len(vals)
    mean = statistics.fmean(vals)
    sd = statistics.stdev(vals) if n > 1 else 0.0
    ci = t975(n - 1) * sd / math.sqrt(n) if n > 1 else float("nan")
    return Summary(n, mean, sd, ci, statistics.median(vals), min(vals), max(vals))
