"""Statistics against independently known values."""

import math

import pytest

from sdnbench.analysis.stats import summarize, t975


def test_t_quantiles_match_tables():
    # published tables round to three decimals
    assert t975(1) == pytest.approx(12.706, abs=5e-4)
    assert t975(9) == pytest.approx(2.262, abs=5e-4)
    assert t975(50) == pytest.approx(2.009, abs=0.003)
    assert t975(10_000) == pytest.approx(1.960, abs=0.002)


def test_summary_of_known_sample():
    s = summarize([2, 4, 4, 4, 5, 5, 7, 9])
    assert s.mean == 5 and s.median == 4.5 and (s.min, s.max) == (2, 9)
    assert s.sd == pytest.approx(math.sqrt(32 / 7))
    assert s.ci95 == pytest.approx(2.365 * math.sqrt(32 / 7) / math.sqrt(8), rel=1e-3)


def test_single_value_has_no_interval_and_none_is_skipped():
    s = summarize([3.0, None])
    assert s.n == 1 and s.sd == 0 and math.isnan(s.ci95)
    assert summarize([]) is None
