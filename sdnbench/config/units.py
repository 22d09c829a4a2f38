"""Quantities with units in experiment files: durations ('30s', '5m') and load stages."""

from __future__ import annotations

import re

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(us|ms|s|m|h)$")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)(rps|krps)$")
_SCALE = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}

#: Highest request rate a stage may ask for. sdnbench-apiload held 25,000 requests/s
#: against nginx on this 2-core machine and published northbound studies stay in
#: the thousands; a million leaves room for faster machines and catches typos.
MAX_RPS = 1_000_000
#: Longest stage, or step of a step stage: a day (published load phases last minutes).
MAX_STAGE_S = 86_400
#: Most steps of one step stage (each holds its rate for the stage's duration).
MAX_STEPS = 10_000


def duration_s(text: str) -> float:
    """'500ms' -> 0.5; ValueError naming the accepted units otherwise."""
    m = _DURATION.match(text.strip())
    if not m:
        raise ValueError(f"{_cut(text)!r} is not a duration: write a number and us, ms, s, m or h (e.g. 30s)")
    return float(m.group(1)) * _SCALE[m.group(2)]


def rate_rps(text: str) -> float:
    """'2krps' -> 2000.0."""
    m = _RATE.match(text.strip())
    if not m:
        raise ValueError(f"{_cut(text)!r} is not a request rate: write a number and rps or krps (e.g. 500rps)")
    return float(m.group(1)) * (1000.0 if m.group(2) == "krps" else 1.0)


def stage_seconds(stage: str) -> float:
    """Length of an apiload stage: const:R:D, ramp:R1:R2:D or step:R1:R2:STEP:D (D per step).

    ValueError when the stage is malformed or passes MAX_RPS, MAX_STAGE_S or MAX_STEPS.
    """
    parts = stage.split(":")
    kind, args = parts[0], parts[1:]
    shapes = {"const": 2, "ramp": 3, "step": 4}
    if kind not in shapes or len(args) != shapes[kind]:
        raise ValueError(f"{_cut(stage)!r}: expected const:RATE:DURATION, ramp:FROM:TO:DURATION "
                         f"or step:FROM:TO:STEP:DURATION")
    rates = [rate_rps(a) for a in args[:-1]]
    seconds = duration_s(args[-1])
    if max(rates) > MAX_RPS:
        raise ValueError(f"{_cut(stage)!r}: a rate of {max(rates):,.0f} requests/s; at most {MAX_RPS:,} "
                         f"(apiload holds tens of thousands on a small machine)")
    if seconds > MAX_STAGE_S:
        raise ValueError(f"{_cut(stage)!r}: {seconds:,.0f} s; a stage lasts at most {MAX_STAGE_S:,} s (a day)")
    if kind == "step":
        low, high, step = rates
        if step <= 0 or high < low:
            raise ValueError(f"{_cut(stage)!r}: a step needs FROM <= TO and STEP > 0")
        steps = int((high - low) / step) + 1
        if steps > MAX_STEPS:
            raise ValueError(f"{_cut(stage)!r}: {steps:,} steps; at most {MAX_STEPS:,}")
        return seconds * steps
    return seconds


def check_stage(stage: str) -> str | None:
    """None when the stage is well formed, else the problem (for the schema)."""
    try:
        stage_seconds(stage)
    except ValueError as exc:
        return str(exc)
    return None


def _cut(text: str, limit: int = 60) -> str:
    """Text shortened for a message."""
    return text if len(text) <= limit else text[:limit] + "..."
