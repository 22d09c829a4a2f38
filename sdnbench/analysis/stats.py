"""Summary statistics over repetitions: mean, sd, 95% CI (Student t), median, min, max."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

# Two-sided 95% quantiles of Student's t (0.975) for 1..30 degrees of freedom.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
         2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
         2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
_T975_TAIL = [(40, 2.021), (60, 2.000), (120, 1.980)]


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with df degrees of freedom."""
    if df < 1:
        raise ValueError("need at least one degree of freedom")
    if df <= 30:
        return _T975[df - 1]
    prev_df, prev_t = 30, _T975[-1]
    for d, t in _T975_TAIL:
        if df <= d:  # interpolate in 1/df, which is close to linear for t quantiles
            w = (1 / df - 1 / d) / (1 / prev_df - 1 / d)
            return t + w * (prev_t - t)
        prev_df, prev_t = d, t
    w = (1 / df) / (1 / 120)
    return 1.960 + w * (1.980 - 1.960)


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
