"""Stress outcome labels on synthetic per-second series whose labels are known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdnbench.analysis.stress import (Baseline, StressThresholds, classify, failing_stretch, outcome_table,
                                      weighted_median)

BASE = Baseline(throughput_rps=1000.0, latency_p50_ms=4.0)


def row(t, ok, failed=0, p50=4.0, target=1000, **extra):
    """One flattened apiload interval row; failures are timeouts (no response, no latency)."""
    r = {"t_s": t, "dur_s": 1.0, "target": target,
         "sent": ok + failed, "succeeded": ok, "failed": failed, "throughput_rps": float(ok),
         "latency_p50_ms": p50, "latency_count": ok, **extra}   # failures here are timeouts: no latency
    if failed:
        r["failed_timeout"] = failed
    return r


def series(n, ok, failed=0, p50=4.0, target=1000, start=0):
    return [row(start + t, ok, failed, p50, target) for t in range(n)]


def test_healthy_run_has_no_label():
    out = classify(series(10, 990), BASE)
    assert out.codes == [] and out.text() == "none"
    assert out.metrics["throughput_rps"] == 990


def test_partial_failure_scattered_errors():
    rows = series(10, 990, failed=10)
    out = classify(rows, BASE)
    assert out.codes == ["PF"]
    ev = out.labels[0].evidence
    assert ev["failed"] == 100 and ev["error_rate"] == pytest.approx(0.01)


def test_continuous_failure_from_consecutive_failing_seconds_with_sdt():
    rows = series(5, 1000) + series(4, 0, failed=1000, start=5) + series(5, 1000, start=9)
    out = classify(rows, BASE)
    cf = out.labels[0].evidence["reasons"][0]
    assert (cf["seconds"], cf["from_s"], cf["to_s"], cf["failed"]) == (4, 5, 9, 4000)
    # 10 of 14 seconds succeed at the full rate: 714 rps, 71 % of the baseline -> DT, not SDT.
    assert out.codes == ["CF", "DT"]
    assert out.labels[1].evidence["ratio"] == pytest.approx(10000 / 14 / 1000, abs=1e-4)


def test_two_failing_seconds_are_not_continuous_by_default():
    rows = series(5, 1000) + series(2, 400, failed=600, start=5) + series(5, 1000, start=7)
    assert classify(rows, BASE).codes == ["PF"]
    assert classify(rows, BASE, StressThresholds(cf_seconds=2)).codes == ["CF"]


def test_silent_seconds_neither_break_nor_extend_a_failing_stretch():
    rows = [row(0, 0, 500), row(1, 0, 0, p50=None), row(2, 0, 500), row(3, 0, 500), row(4, 1000)]
    st = failing_stretch(rows, 0.5)
    assert (st["seconds"], st["from_s"], st["to_s"]) == (3, 0, 4)


def test_cf_from_the_tools_failure_pattern_and_long_run():
    rows = series(10, 995, failed=5)
    summary = {"failure_pattern": {"pattern": "continuous", "longest_run": 50, "longest_run_start_s": 5.0,
                                   "longest_run_span_s": 0.05, "continuous_min_run": 20,
                                   "continuous_min_span_s": 0.1}}
    out = classify(rows, BASE, summary=summary)
    assert out.codes == ["CF"]
    rules = [r["rule"] for r in out.labels[0].evidence["reasons"]]
    assert len(rules) == 2 and all(r["longest_run"] == 50 for r in out.labels[0].evidence["reasons"])
    # Outside the window of interest, the run does not count; the few errors inside do.
    assert classify(rows, BASE, summary=summary, window=(6, 10)).codes == ["PF"]
    partial = {"failure_pattern": {**summary["failure_pattern"], "pattern": "partial", "longest_run": 3}}
    assert classify(rows, BASE, summary=partial).codes == ["PF"]


def test_significantly_decreased_throughput_only():
    out = classify(series(10, 400), BASE)
    assert out.codes == ["SDT"]
    assert out.labels[0].evidence["ratio"] == pytest.approx(0.4)


def test_decreased_throughput_boundaries():
    assert classify(series(10, 899), BASE).codes == ["DT"]
    assert classify(series(10, 900), BASE).codes == []
    assert classify(series(10, 500), BASE).codes == ["DT"]
    assert classify(series(10, 499), BASE).codes == ["SDT"]


def test_expected_throughput_never_exceeds_what_the_run_asked_for():
    """A 300 rps attack-phase load fully served is not a throughput drop against a 1,000 rps baseline."""
    out = classify(series(10, 300, target=300), BASE)
    assert out.codes == []
    assert classify(series(10, 200, target=300), BASE).labels[0].evidence["expected_rps"] == 300


def test_high_response_time_needs_both_factor_and_floor():
    assert classify(series(10, 1000, p50=60.0), BASE).codes == ["HRT"]
    assert classify(series(10, 1000, p50=11.0), BASE).codes == []          # 2.75 x baseline
    assert classify(series(10, 1000, p50=40.0), BASE).codes == []          # 10 x, but under 50 ms
    slow_base = Baseline(1000.0, 30.0)
    assert classify(series(10, 1000, p50=80.0), slow_base).codes == []     # > 50 ms, but 2.7 x
    ev = classify(series(10, 1000, p50=95.0), slow_base).labels[0].evidence
    assert (ev["limit_ms"], ev["factor"]) == (90.0, pytest.approx(3.17, abs=0.01))


def test_everything_at_once_cf_sdt_hrt():
    rows = series(3, 200, p50=300.0) + series(5, 0, failed=800, start=3) + series(2, 200, p50=300.0, start=8)
    out = classify(rows, BASE)
    assert out.text() == "CF+SDT+HRT"
    assert out.to_dict()["labels"][0]["name"] == "continuous failure"


def test_window_limits_the_seconds_classified():
    rows = series(10, 1000) + series(10, 300, failed=700, start=10) + series(10, 1000, start=20)
    assert classify(rows, BASE, window=(0, 10)).codes == []
    assert classify(rows, BASE, window=(10, 20)).codes == ["CF", "SDT"]
    assert classify(rows, BASE, window=(10, 20)).metrics["seconds"] == 10


def test_failed_baseline_gives_only_failure_labels():
    dead = Baseline(throughput_rps=0.0, latency_p50_ms=None, error_rate=1.0)
    out = classify(series(5, 0, failed=1000), dead)
    assert out.codes == ["CF"] and "baseline" in out.metrics["note"]


def test_no_rows_no_label():
    out = classify(series(5, 1000), BASE, window=(50, 60))
    assert out.codes == [] and out.metrics["seconds"] == 0


def test_whole_run_median_from_summary_when_given():
    summary = {"latency_ms": {"count": 100, "p50": 120.0}, "failure_pattern": {"pattern": "none"}}
    assert classify(series(5, 1000, p50=4.0), BASE, summary=summary).codes == ["HRT"]


def test_baseline_from_summary_and_series():
    b = Baseline.from_summary({"throughput_rps": 812.5, "error_rate": 0.001,
                               "latency_ms": {"count": 10, "p50": 3.2}})
    assert (b.throughput_rps, b.latency_p50_ms, b.error_rate) == (812.5, 3.2, 0.001)
    s = Baseline.from_series([row(0, 100, p50=2.0), row(1, 300, p50=5.0), row(2, 100, p50=9.0)])
    assert s.throughput_rps == pytest.approx(500 / 3) and s.latency_p50_ms == 5.0


def test_weighted_median():
    assert weighted_median([(1.0, 1), (2.0, 1), (100.0, 1)]) == 2.0
    assert weighted_median([(1.0, 10), (100.0, 1)]) == 1.0
    assert weighted_median([(1.0, 0)]) is None


def test_outcome_table():
    table = outcome_table({"ryu": {"overload": classify(series(5, 400), BASE),
                                   "dos": classify(series(5, 1000), BASE)}})
    assert "| ryu | SDT | none | - |" in table
    assert "CF continuous failure" in table


# -- a recorded sdnbench-apiload run -------------------------------------------
# 100 rps for 12 s against a loopback server that answered 503 from second 3 to
# 6 and took 60 ms per answer from second 7 to 10 (its first request is t = 0).

RECORDED = Path(__file__).parent / "data" / "apiload-503-then-slow.jsonl"


def recorded_run() -> tuple[list[dict], dict]:
    """(rows, summary) of the recording, rows flattened as the nbi workload flattens them."""
    rows, summary = [], {}
    for line in RECORDED.read_text().splitlines():
        rec = json.loads(line)
        if rec["type"] == "interval":
            rows.append(flat(rec["data"]))
        elif rec["type"] == "summary":
            summary = rec["data"]
    return rows, summary


def flat(data: dict) -> dict:
    """Same as sdnbench.workloads.nbi.flatten_interval (checked below when that module exists)."""
    out = {k: v for k, v in data.items() if isinstance(v, (int, float))}
    out.update({(f"latency_{k}_ms" if k != "count" else "latency_count"): v for k, v in data["latency_ms"].items()})
    out.update({f"failed_{k}": v for k, v in data["failed_by_reason"].items()})
    return out


def test_local_flattening_matches_the_nbi_workload():
    nbi = pytest.importorskip("sdnbench.workloads.nbi")
    for line in RECORDED.read_text().splitlines():
        rec = json.loads(line)
        if rec["type"] == "interval":
            assert flat(rec["data"]) == nbi.flatten_interval(rec["data"])


def test_recorded_run_labels():
    rows, summary = recorded_run()
    base = Baseline.from_series([r for r in rows if r["t_s"] < 3])
    assert base.throughput_rps == 100 and base.latency_p50_ms < 1
    whole = classify(rows, base, summary=summary)
    assert whole.text() == "CF+DT"                     # 900 of 1,200 succeeded: 75 rps of 100
    rules = [r["rule"] for r in whole.labels[0].evidence["reasons"]]
    assert len(rules) == 3                             # 3 failing seconds, a 300-request run, the tool's pattern
    assert whole.labels[0].evidence["reasons"][0]["from_s"] == 3
    assert classify(rows, base, summary=summary, window=(0, 3)).text() == "none"
    assert classify(rows, base, summary=summary, window=(3, 6)).text() == "CF+SDT"
    slow = classify(rows, base, summary=summary, window=(7, 10))
    assert slow.text() == "HRT"
    assert slow.labels[0].evidence["latency_p50_ms"] == pytest.approx(60.5, abs=1)
