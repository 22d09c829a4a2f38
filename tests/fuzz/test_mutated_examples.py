"""Property: any mutation of a shipped example passes `sdnbench check` or fails with sdnbench's own error.

hypothesis drives the mutations of experiment_mutations.py (values turned to junk,
lines deleted, duplicated, re-indented, bytes changed, files truncated, alias
bombs, deep nesting) and shrinks a failure to the smallest damage that shows it.
tests/fuzz/fuzz_check.py runs the same mutations by the ten thousand, and large
files too.
"""

from __future__ import annotations

import contextlib
import io
import signal
import tempfile
from datetime import timedelta
from pathlib import Path

from experiment_mutations import LIGHT, examples, mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdnbench.cli import main

SEEDS = {p.name: p.read_bytes() for p in examples()}
#: A check that has not ended by now is hung; the test fails instead of waiting.
HANG_S = 30


def _hung(signum, frame):
    raise AssertionError(f"sdnbench check still running after {HANG_S} s")


@settings(max_examples=200, deadline=timedelta(seconds=5), suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(SEEDS)), rnd=st.randoms(use_true_random=False))
def test_mutated_example_checks_or_fails_cleanly(name, rnd):
    data, mutations = mutate(SEEDS[name], rnd, mutations=LIGHT)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        out = io.StringIO()
        previous = signal.signal(signal.SIGALRM, _hung)
        signal.alarm(HANG_S)
        try:
            # main() turns SdnbenchError into exit code 2; anything else escapes and fails the test.
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = main(["check", "--offline", str(path)])
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    assert code in (0, 2), (mutations, out.getvalue())
    if code == 2:
        assert out.getvalue().startswith(f"sdnbench: {path}"), (mutations, out.getvalue())
