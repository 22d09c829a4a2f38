"""Northbound API load: runs sdnbench-apiload and returns its per-second series and summary.

The binary does the timing (open-loop schedule, latency from intended send
times); this module only builds its command line, reads its JSON Lines and
hands back numbers. Exit code 1 (a threshold not met) is a result, not an
error: an overloaded controller is what a stress test is for.
"""

from __future__ import annotations

import json
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ToolError
from ..paths import build_hint, native_tool
from ..procs import OwnedProcess, finish_by, spawn_in
from .jsonlines import read_output
from .nbi_presets import preset, preset_requests

TOOL = "sdnbench-apiload"


@dataclass(frozen=True)
class NbiSpec:
    """One northbound load run; units are in the values (`500rps`, `5m`, `200ms`)."""

    url: str                                   # http://127.0.0.1:8080 (loopback unless allow_targets)
    stages: tuple[str, ...] = ()               # e.g. ("ramp:0rps:1000rps:5m", "const:1000rps:1m")
    preset: str | None = None                  # a key of nbi_presets.PRESETS
    variables: dict[str, Any] = field(default_factory=dict)   # placeholder values for the preset
    requests: tuple[dict[str, Any], ...] = ()  # explicit templates (added to the preset's)
    basic_auth: str | None = None              # USER:PASS; defaults to the preset's
    expect_body: str | None = None             # defaults to the preset's
    max_in_flight: int = 200
    overflow: str = "late"                     # late | drop
    timeout: str = "5s"
    keep_alive: bool = True
    quickack: bool = False
    ok_status: str = "200-299"
    allow_targets: tuple[str, ...] = ()        # e.g. ("10.0.0.0/8",) for the emulated network
    min_achieved: float = 0.99
    max_error_rate: float | None = None
    continuous_run: int = 20
    continuous_span: str = "100ms"
    extra_args: tuple[str, ...] = ()


@dataclass
class NbiResult:
    """What a run produced: a row per second, the summary, and where the raw output is."""

    exit_code: int
    passed: bool
    series: list[dict[str, float]]
    summary: dict[str, Any]
    raw_path: Path | None = None


def templates_for(spec: NbiSpec) -> list[dict[str, Any]]:
    """The request templates of a spec: the preset's (filled in) plus explicit ones."""
    out = preset_requests(spec.preset, **spec.variables) if spec.preset else []
    out.extend(spec.requests)
    if not out:
        raise ValueError("northbound load needs a preset or at least one request template")
    return out


def build_argv(binary: Path | str, spec: NbiSpec, requests_file: Path) -> list[str]:
    """The command line for one run; the templates are read from requests_file."""
    p = preset(spec.preset) if spec.preset else {}
    if not spec.stages:
        raise ValueError("northbound load needs at least one stage, e.g. const:100rps:30s")
    argv = [str(binary), "--url", spec.url, "--requests", str(requests_file),
            "--max-in-flight", str(spec.max_in_flight), "--overflow", spec.overflow,
            "--timeout", spec.timeout, "--ok-status", spec.ok_status,
            "--min-achieved", repr(spec.min_achieved),
            "--continuous-run", str(spec.continuous_run), "--continuous-span", spec.continuous_span]
    for stage in spec.stages:
        argv += ["--stage", stage]
    auth = spec.basic_auth or p.get("basic_auth")
    if auth:
        argv += ["--basic-auth", auth]
    expect = spec.expect_body or p.get("expect_body")
    if expect:
        argv += ["--expect-body", expect]
    if not spec.keep_alive:
        argv.append("--no-keepalive")
    if spec.quickack:
        argv.append("--quickack")
    if spec.max_error_rate is not None:
        argv += ["--max-error-rate", repr(spec.max_error_rate)]
    for cidr in spec.allow_targets:
        argv += ["--allow-target", cidr]
    return argv + list(spec.extra_args)


def flatten_interval(data: dict[str, Any]) -> dict[str, float]:
    """One `interval` record as a flat row (latency_p50_ms, failed_http_500, …)."""
    row: dict[str, float] = {k: v for k, v in data.items() if isinstance(v, (int, float))}
    for k, v in data["latency_ms"].items():
        row[f"latency_{k}_ms" if k != "count" else "latency_count"] = v
    for reason, n in data["failed_by_reason"].items():
        row[f"failed_{reason}"] = n
    return row


def parse_output(text: str) -> tuple[list[dict[str, float]], dict[str, Any]]:
    """Reads JSON Lines into (per-second rows, summary); raises ToolError on errors."""
    out = read_output(text, TOOL)
    if out.errors:
        raise ToolError(f"{TOOL}: {out.errors[0]}")
    if not out.summaries:
        raise ToolError(f"{TOOL}: no summary line in its output")
    return [flatten_interval(d) for d in out.intervals], out.summaries[-1]


def run_nbi(spec: NbiSpec, workdir: Path, binary: Path | None = None, host: Any = None,
            timeout_s: float | None = None) -> NbiResult:
    """Runs one load (on `host`, e.g. a Mininet host, or locally) and parses its output."""
    binary = binary or native_tool(TOOL)
    if binary is None:
        raise ToolError(f"{TOOL} is not built: {build_hint(TOOL)}")
    workdir.mkdir(parents=True, exist_ok=True)
    req_file = workdir / "nbi-requests.json"
    req_file.write_text(json.dumps(templates_for(spec), indent=1))
    argv = build_argv(binary, spec, req_file)
    raw = workdir / "nbi.jsonl"
    err = workdir / "nbi.stderr"
    how = {"stdout": raw, "stderr": err}
    proc = spawn_in(host, argv, TOOL, **how) if host is not None else OwnedProcess.spawn(argv, TOOL, **how)
    # Past the deadline SIGTERM: the tool still prints its summary.
    [code] = finish_by([proc], None if timeout_s is None else time.monotonic() + timeout_s, signal.SIGTERM, 10.0)
    if code not in (0, 1):
        detail = err.read_text(errors="replace").strip().splitlines()
        raise ToolError(f"{TOOL} exited {code}: {detail[-1] if detail else 'no message'}")
    series, summary = parse_output(raw.read_text())
    return NbiResult(exit_code=code, passed=code == 0, series=series, summary=summary, raw_path=raw)


def headline(summary: dict[str, Any]) -> dict[str, Any]:
    """The numbers a northbound load table shows, from a summary."""
    lat = summary["latency_ms"]
    fp = summary["failure_pattern"]
    return {
        "target_rps": summary["target_rps"],
        "achieved_rps": summary["achieved_rps"],
        "throughput_rps": summary["throughput_rps"],
        "error_rate_pct": round(100.0 * summary["error_rate"], 4),
        "latency_p50_ms": lat["p50"],
        "latency_p99_ms": lat["p99"],
        "failure_pattern": fp["pattern"],
        "longest_failure_run": fp["longest_run"],
        "longest_failure_run_start_s": fp["longest_run_start_s"],
    }


def overload_stage(load_summary: dict[str, Any], multiple: float, duration: str) -> str:
    """A constant stage at `multiple` × the throughput a stored load run measured (stress phase)."""
    if multiple <= 0:
        raise ValueError("overload multiple must be positive")
    base = float(load_summary["throughput_rps"])
    if base <= 0:
        raise ValueError("the load run measured no successful throughput; nothing to overload")
    return f"const:{max(1.0, round(base * multiple, 1)):g}rps:{duration}"
