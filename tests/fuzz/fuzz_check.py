#!/usr/bin/env python3
"""Run mutated experiment files through `sdnbench check` and count how each one ends.

Every file must end as ok (exit 0) or as a clean error (sdnbench's own message,
exit 2): never a Python traceback, never longer than --slow seconds. Files go
through `sdnbench.cli.main(["check", FILE])` in this process (the same path as
the command, preflight included), and a sample of them through the real command
line (`python -m sdnbench check FILE`) to prove it prints no traceback.

Writes results/summary.json and keeps every traceback, slow and CLI-failing file
in results/cases/ with its seed, so `sdnbench check results/cases/<file>` replays it.

    tests/fuzz/fuzz_check.py --count 10000
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from experiment_mutations import examples, mutate  # noqa: E402

from sdnbench.cli import main as sdnbench_main  # noqa: E402

#: A file that takes this long is a hang; the run moves on (and counts it slow).
HARD_LIMIT_S = 60
#: Memory one check may use before it counts as a failure instead of exhausting the machine.
MEMORY_LIMIT = 4 << 30


class Hang(Exception):
    """The check ran past HARD_LIMIT_S."""


def _alarm(signum, frame):
    raise Hang()


def check_in_process(path: Path) -> tuple[str, float, str]:
    """('ok' | 'error' | 'traceback', seconds, output) of `sdnbench check path` in this process."""
    out = io.StringIO()
    signal.alarm(HARD_LIMIT_S)
    t0 = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = sdnbench_main(["check", str(path)])
        outcome = {0: "ok", 2: "error"}.get(code, "traceback")
        text = out.getvalue()
    except Hang:
        outcome, text = "traceback", f"still running after {HARD_LIMIT_S} s"
    except BaseException:  # noqa: BLE001 — anything escaping main() is what this run looks for
        outcome, text = "traceback", traceback.format_exc()
    finally:
        signal.alarm(0)
    return outcome, time.monotonic() - t0, text


def _where(text: str, path: Path) -> str:
    """'line' when an error message starts with file:line, 'line' missing or 'file' missing otherwise."""
    first = text.removeprefix("sdnbench: ")
    if not first.startswith(str(path)):
        return "file"
    return "line" if re.match(r":\d+", first[len(str(path)):]) else "line (file only)"


def check_cli(path: Path) -> tuple[bool, str]:
    """Whether the real command exits 0 or 2 without a traceback, and what it printed."""
    try:
        proc = subprocess.run([sys.executable, "-m", "sdnbench", "check", str(path)], cwd=ROOT,
                              capture_output=True, text=True, errors="replace", timeout=HARD_LIMIT_S)
    except subprocess.TimeoutExpired:
        return False, f"still running after {HARD_LIMIT_S} s"
    text = proc.stdout + proc.stderr
    return proc.returncode in (0, 2) and "Traceback" not in text, text


class Tally:
    """Outcomes of the run so far, and the files worth keeping."""

    def __init__(self, cases: Path, slow_s: float):
        self.cases, self.slow_s = cases, slow_s
        self.counts: Counter = Counter()
        self.by_mutation: dict[str, Counter] = {}
        self.worst: list[tuple[float, str, bytes]] = []   # the slowest files, kept for replay
        self.unplaced: Counter = Counter()                 # errors that name no line, by their words
        self.cli_failures: list[str] = []

    def add(self, path: Path, data: bytes, names: list[str], outcome: str, seconds: float, text: str) -> bool:
        """Count one file; True when it must be kept (traceback or slow)."""
        self.counts[outcome] += 1
        for m in set(names):
            self.by_mutation.setdefault(m, Counter())[outcome] += 1
        if outcome == "error" and (where := _where(text, path)) != "line":
            self.counts[f"error without {where}"] += 1
            self.unplaced[text.removeprefix(f"sdnbench: {path}: ").split(";")[0].strip()[:120]] += 1
        if seconds > self.slow_s:
            self.counts["slow"] += 1
        self.worst = sorted(self.worst + [(seconds, path.name, data)], reverse=True)[:10]
        return outcome == "traceback" or seconds > self.slow_s

    def add_cli(self, path: Path) -> bool:
        """Run one file through the real command line; True when it failed there."""
        self.counts["cli"] += 1
        ok, _ = check_cli(path)
        if not ok:
            self.cli_failures.append(path.name)
        return not ok

    def summary(self, args, seconds: float) -> dict:
        """Everything summary.json holds."""
        c = self.counts
        for _, name, data in self.worst:
            (self.cases / name).write_bytes(data)
        return {"count": args.count, "seed": args.seed, "seconds": round(seconds, 1),
                "ok": c["ok"], "clean_errors": c["error"], "tracebacks": c["traceback"],
                f"over_{args.slow:g}s": c["slow"], "errors_without_file": c["error without file"],
                "errors_naming_file_only": c["error without line (file only)"],
                "cli_checked": c["cli"], "cli_failures": self.cli_failures,
                "slowest": [{"file": n, "seconds": round(s, 3)} for s, n, _ in self.worst],
                "by_mutation": {k: dict(v) for k, v in sorted(self.by_mutation.items())},
                "errors_without_line": dict(self.unplaced.most_common(30))}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=10000, help="mutated files to check (default 10,000)")
    p.add_argument("--seed", default="sdnbench", help="seed of the mutations (same seed, same files)")
    p.add_argument("--slow", type=float, default=5.0, help="seconds above which a check counts as slow")
    p.add_argument("--cli", type=int, default=20, help="files also run through the real command line")
    p.add_argument("--out", type=Path, default=HERE / "results", help="results directory")
    args = p.parse_args()

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    signal.signal(signal.SIGALRM, _alarm)
    cases = args.out / "cases"
    cases.mkdir(parents=True, exist_ok=True)
    seeds = {p.name: p.read_bytes() for p in examples()}
    tally = Tally(cases, args.slow)
    cli_every = max(1, args.count // args.cli) if args.cli else 0
    t_start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.count):
            rnd = random.Random(f"{args.seed}:{i}")
            name = rnd.choice(sorted(seeds))
            data, names = mutate(seeds[name], rnd)
            path = Path(tmp) / f"{i:05d}-{name}"
            path.write_bytes(data)
            outcome, seconds, text = check_in_process(path)
            keep = tally.add(path, data, names, outcome, seconds, text)
            if cli_every and i % cli_every == 0:
                keep |= tally.add_cli(path)
            if keep:
                (cases / path.name).write_bytes(data)
                (cases / (path.name + ".txt")).write_text(
                    f"seed {args.seed}:{i} example {name} mutations {names}\n{seconds:.2f} s, {outcome}\n\n{text}")
            if (i + 1) % 500 == 0:
                print(f"{i + 1:6d} files  {dict(tally.counts)}", file=sys.stderr, flush=True)
    summary = tally.summary(args, time.monotonic() - t_start)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k not in ("by_mutation", "errors_without_line")}, indent=2))
    failed = summary["tracebacks"] or summary[f"over_{args.slow:g}s"] or summary["errors_without_file"]
    return 1 if failed or tally.cli_failures else 0


if __name__ == "__main__":
    sys.exit(main())
