"""Stress outcome labels of a northbound run, derived from its stored per-second series.

A run under overload or attack is compared with a baseline (the load phase)
and labelled as published northbound stress studies do: CF continuous
failure, PF partial failure, SDT significantly decreased throughput, DT
decreased throughput, HRT high response time — or none. Every threshold is a
field of StressThresholds, and every label carries the numbers that raised it.

Rows are the flat rows of `sdnbench.workloads.nbi.flatten_interval`: t_s,
dur_s, target, sent, succeeded, failed, throughput_rps, latency_p50_ms,
latency_count, failed_<reason>, …; a summary is sdnbench-apiload's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping, Sequence

Row = Mapping[str, float]

NAMES = {"CF": "continuous failure", "PF": "partial failure", "SDT": "significantly decreased throughput",
         "DT": "decreased throughput", "HRT": "high response time"}


@dataclass(frozen=True)
class StressThresholds:
    """When each label applies; the defaults are the ones docs/attacks.md states."""

    cf_error_rate: float = 0.5    # a second is failing when failed / answered >= this
    cf_seconds: int = 3           # CF: at least this many consecutive failing seconds
    cf_min_run: int = 20          # CF: a run of at least this many consecutive failed requests
    cf_tool_pattern: bool = True  # CF: also when the tool's own failure_pattern is "continuous"
    pf_min_failed: int = 1        # PF: at least this many failed requests (and not CF)
    sdt_ratio: float = 0.5        # SDT: throughput < 50 % of the expected throughput
    dt_ratio: float = 0.9         # DT: throughput < 90 % of it (and not SDT)
    hrt_factor: float = 3.0       # HRT: median latency > 3 x the baseline median
    hrt_min_ms: float = 50.0      #      and > 50 ms


@dataclass(frozen=True)
class Baseline:
    """What the load phase achieved: successful requests/s, median latency, error rate."""

    throughput_rps: float
    latency_p50_ms: float | None
    error_rate: float = 0.0

    @classmethod
    def from_summary(cls, summary: Mapping[str, Any]) -> "Baseline":
        """From an sdnbench-apiload summary (the stored load result)."""
        lat = summary.get("latency_ms") or {}
        p50 = lat.get("p50") if lat.get("count", 1) else None
        return cls(float(summary["throughput_rps"]), p50, float(summary.get("error_rate", 0.0)))

    @classmethod
    def from_series(cls, rows: Sequence[Row]) -> "Baseline":
        """From per-second rows (e.g. the hold part of a load phase)."""
        w = window_totals(rows)
        return cls(w["throughput_rps"], w["latency_p50_ms"], w["error_rate"])


@dataclass(frozen=True)
class Label:
    """One outcome label and the evidence that raised it."""

    code: str
    evidence: dict[str, Any]

    @property
    def name(self) -> str:
        """The label's words, e.g. 'continuous failure'."""
        return NAMES[self.code]


@dataclass
class StressOutcome:
    """The labels of one run (possibly empty) and the measured numbers behind them."""

    labels: list[Label] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def codes(self) -> list[str]:
        """Label codes in a fixed order, e.g. ['CF', 'SDT']."""
        return [lab.code for lab in self.labels]

    def text(self) -> str:
        """'CF+SDT+HRT', or 'none'."""
        return "+".join(self.codes) or "none"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for the results store."""
        return {"outcome": self.text(), "labels": [{"code": lab.code, "name": lab.name, **asdict(lab)}
                                                    for lab in self.labels], "metrics": self.metrics}


def in_window(rows: Iterable[Row], window: tuple[float, float] | None) -> list[Row]:
    """Rows whose second starts inside [start, end) of the window (all rows without one)."""
    if window is None:
        return list(rows)
    start, end = window
    return [r for r in rows if start <= r.get("t_s", 0) < end]


def weighted_median(values: Sequence[tuple[float, float]]) -> float | None:
    """Median of (value, weight) pairs: the value at half the total weight."""
    pairs = sorted((v, w) for v, w in values if w > 0)
    total = sum(w for _, w in pairs)
    if total <= 0:
        return None
    acc = 0.0
    for v, w in pairs:
        acc += w
        if acc >= total / 2:
            return v
    return pairs[-1][0]


def window_totals(rows: Sequence[Row]) -> dict[str, Any]:
    """Totals and rates over rows: throughput, offered rate, error rate, median latency."""
    dur = sum(r.get("dur_s", 1.0) for r in rows)
    ok = sum(r.get("succeeded", 0) for r in rows)
    failed = sum(r.get("failed", 0) for r in rows)
    answered = ok + failed
    # The median of per-second medians, each weighted by its responses: the series keeps no histogram.
    p50 = weighted_median([(r["latency_p50_ms"], r.get("latency_count", 0)) for r in rows
                           if r.get("latency_p50_ms") is not None])
    return {"seconds": len(rows), "duration_s": dur, "succeeded": ok, "failed": failed,
            "throughput_rps": ok / dur if dur else 0.0,
            "target_rps": sum(r.get("target", 0) for r in rows) / dur if dur else 0.0,
            "error_rate": failed / answered if answered else 0.0, "latency_p50_ms": p50}


def failing_stretch(rows: Sequence[Row], min_rate: float) -> dict[str, Any]:
    """Longest run of consecutive seconds with error rate >= min_rate.

    Seconds with no answered request are skipped: they neither break nor extend a run.
    """
    best = {"seconds": 0, "from_s": None, "to_s": None, "failed": 0, "min_error_rate": None}
    cur = dict(best)
    for r in sorted(rows, key=lambda r: r.get("t_s", 0)):
        answered = r.get("succeeded", 0) + r.get("failed", 0)
        if not answered:
            continue
        rate = r.get("failed", 0) / answered
        if rate >= min_rate:
            if not cur["seconds"]:
                cur = {"seconds": 0, "from_s": r.get("t_s"), "failed": 0, "min_error_rate": rate}
            cur["seconds"] += 1
            cur["to_s"] = r.get("t_s", 0) + r.get("dur_s", 1.0)
            cur["failed"] += r.get("failed", 0)
            cur["min_error_rate"] = min(cur["min_error_rate"], rate)
            if cur["seconds"] > best["seconds"]:
                best = dict(cur)
        else:
            cur = {"seconds": 0}
    if best["min_error_rate"] is not None:
        best["min_error_rate"] = round(best["min_error_rate"], 4)
    return best


def _failure_labels(rows: Sequence[Row], totals: dict[str, Any], th: StressThresholds,
                    summary: Mapping[str, Any] | None, window: tuple[float, float] | None) -> list[Label]:
    """CF, else PF, else nothing."""
    reasons: list[dict[str, Any]] = []
    stretch = failing_stretch(rows, th.cf_error_rate)
    if stretch["seconds"] >= th.cf_seconds:
        reasons.append({"rule": f">= {th.cf_seconds} consecutive seconds with error rate >= "
                                f"{th.cf_error_rate:.0%}", **stretch})
    fp = (summary or {}).get("failure_pattern") or {}
    start = fp.get("longest_run_start_s")
    run_in_window = window is None or (start is not None and window[0] <= start < window[1])
    if fp and run_in_window:
        run = {"longest_run": fp.get("longest_run", 0), "longest_run_start_s": start,
               "longest_run_span_s": fp.get("longest_run_span_s")}
        if fp.get("longest_run", 0) >= th.cf_min_run:
            reasons.append({"rule": f"a run of >= {th.cf_min_run} consecutive failed requests", **run})
        if th.cf_tool_pattern and fp.get("pattern") == "continuous":
            reasons.append({"rule": "sdnbench-apiload failure_pattern is continuous", **run,
                            "tool_min_run": fp.get("continuous_min_run"),
                            "tool_min_span_s": fp.get("continuous_min_span_s")})
    if reasons:
        return [Label("CF", {"failed": totals["failed"], "error_rate": round(totals["error_rate"], 4),
                             "reasons": reasons})]
    if totals["failed"] >= th.pf_min_failed:
        return [Label("PF", {"failed": totals["failed"], "error_rate": round(totals["error_rate"], 4),
                             "longest_failing_seconds": stretch["seconds"], "rule":
                             f">= {th.pf_min_failed} failed requests, no continuous failure"})]
    return []


def _throughput_label(totals: dict[str, Any], base: Baseline, th: StressThresholds) -> list[Label]:
    """SDT, else DT, else nothing; expected = min(baseline throughput, this run's own target rate)."""
    expected = base.throughput_rps
    if 0 < totals["target_rps"] < expected:
        expected = totals["target_rps"]     # no run can succeed more often than it asks
    if expected <= 0:
        return []
    ratio = totals["throughput_rps"] / expected
    ev = {"throughput_rps": round(totals["throughput_rps"], 3), "expected_rps": round(expected, 3),
          "baseline_rps": round(base.throughput_rps, 3), "target_rps": round(totals["target_rps"], 3),
          "ratio": round(ratio, 4)}
    if ratio < th.sdt_ratio:
        return [Label("SDT", {**ev, "rule": f"throughput < {th.sdt_ratio:.0%} of expected"})]
    if ratio < th.dt_ratio:
        return [Label("DT", {**ev, "rule": f"throughput < {th.dt_ratio:.0%} of expected"})]
    return []


def _latency_label(p50: float | None, base: Baseline, th: StressThresholds) -> list[Label]:
    """HRT when the median is both hrt_factor x the baseline median and above hrt_min_ms."""
    if p50 is None or base.latency_p50_ms is None:
        return []
    limit = max(th.hrt_factor * base.latency_p50_ms, th.hrt_min_ms)
    if p50 > limit:
        return [Label("HRT", {"latency_p50_ms": p50, "baseline_p50_ms": base.latency_p50_ms,
                              "factor": round(p50 / base.latency_p50_ms, 2) if base.latency_p50_ms else None,
                              "limit_ms": limit, "rule": f"median > {th.hrt_factor:g} x baseline "
                                                         f"and > {th.hrt_min_ms:g} ms"})]
    return []


def classify(rows: Sequence[Row], baseline: Baseline, thresholds: StressThresholds | None = None,
             summary: Mapping[str, Any] | None = None,
             window: tuple[float, float] | None = None) -> StressOutcome:
    """Label a run (or the seconds of `window`, e.g. an attack) against the baseline."""
    th = thresholds or StressThresholds()
    picked = in_window(rows, window)
    if not picked:   # nothing measured: no label, rather than a throughput of zero
        return StressOutcome([], {"seconds": 0, "window": list(window) if window else None,
                                  "note": "no per-second rows to classify"})
    totals = window_totals(picked)
    p50 = totals["latency_p50_ms"]
    if window is None and summary and (summary.get("latency_ms") or {}).get("count"):
        p50 = summary["latency_ms"]["p50"]   # the whole run: the exact HDR median
    labels = (_failure_labels(picked, totals, th, summary, window) + _throughput_label(totals, baseline, th)
              + _latency_label(p50, baseline, th))
    metrics = {**totals, "latency_p50_ms": p50, "window": list(window) if window else None,
               "baseline": asdict(baseline), "thresholds": asdict(th)}
    if baseline.throughput_rps <= 0:
        metrics["note"] = "the baseline has no successful request: no throughput or latency label"
    return StressOutcome(labels, metrics)


def outcome_table(outcomes: Mapping[str, Mapping[str, StressOutcome]],
                  scenarios: Sequence[str] = ("overload", "dos", "ddos")) -> str:
    """Markdown table: one row per controller, one column per scenario, cells like 'CF+SDT'."""
    lines = ["| controller | " + " | ".join(scenarios) + " |", "|---" * (len(scenarios) + 1) + "|"]
    for ctl, row in outcomes.items():
        cells = [row[s].text() if s in row else "-" for s in scenarios]
        lines.append(f"| {ctl} | " + " | ".join(cells) + " |")
    legend = ", ".join(f"{k} {v}" for k, v in NAMES.items())
    return "\n".join(lines) + f"\n\n{legend}."
