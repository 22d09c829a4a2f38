"""The userspace link emulator in a real run: chosen automatically, stored with every trial, and
nothing of it left after SIGKILL plus `sdnbench clean`."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from sdnbench.manifest import MANIFEST_NAME, outstanding, process_start_time

from .helpers import skip_unless_built
from .test_cli_run import kill_in_second_trial, sdnbench

pytestmark = pytest.mark.netns

EXPERIMENT = """\
name: linkemu
repetitions: {reps}
controllers:
  - kind: none
topologies:
  - kind: linear
    switches: 2
    core_link: {{delay_ms: 5, jitter_ms: 0.5, loss_pct: 1}}
workloads:
  - name: udp
    flows:
      - {{proto: udp, rate_pps: 500, duration_s: {seconds}, size_bytes: 128}}
cooldown_s: 0
"""


def experiment(tmp_path, reps: int, seconds: int) -> Path:
    skip_unless_built("sdnbench-tgen", "sdnbench-linkemu")
    path = tmp_path / "exp.yaml"
    path.write_text(EXPERIMENT.format(reps=reps, seconds=seconds))
    return path


def interfaces() -> set[str]:
    """This run's interfaces in the root namespace: its switches' ports and the emulator's inner ends
    (other networks on the machine name theirs otherwise)."""
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    names = {ln.split(":")[1].strip().split("@")[0] for ln in out.splitlines()}
    return {n for n in names if n.startswith(("lk", "s1-eth", "s2-eth"))}


def test_trials_carry_the_emulators_accuracy(tmp_path):
    exp = experiment(tmp_path, reps=1, seconds=3)
    rundir = tmp_path / "run"
    res = sdnbench("run", str(exp), "--out", str(rundir))
    assert res.returncode == 0, res.stderr
    with sqlite3.connect(rundir / "results.db") as conn:
        (env, error), = conn.execute("SELECT environment, error FROM trial").fetchall()
        metrics = dict(conn.execute("SELECT name, value FROM metric WHERE flow_id = 'links'").fetchall())
        loss = conn.execute("SELECT value FROM metric WHERE name = 'loss_pct' AND flow_id != 'links'").fetchone()[0]
    env = json.loads(env)
    assert env["links"] == "linkemu" and env["link_shaping"] == "linkemu" and env["linkemu_links"] == 1
    assert set(metrics) == {"link_late_p50_us", "link_late_p99_us", "link_late_max_us", "link_emulator_drops",
                            "link_timing_valid"}
    # 1,500 probes at 1 % loss: the 99.9 % binomial interval is 3..29 lost.
    assert 0.2 <= loss <= 2.0
    assert (metrics["link_timing_valid"] == 1.0) == (error is None), (metrics, error)
    assert outstanding(rundir / MANIFEST_NAME) == []
    assert interfaces() == set()


def test_sigkill_mid_trial_then_clean_leaves_nothing(tmp_path):
    exp = experiment(tmp_path, reps=3, seconds=4)
    rundir = tmp_path / "run"
    kill_in_second_trial(exp, rundir, wait_s=600)   # other networks on the machine may hold the lock first
    held = outstanding(rundir / MANIFEST_NAME)
    emulators = [r for r in held if r["kind"] == "process" and r.get("role") == "linkemu"]
    assert len(emulators) == 1, held
    assert {r["name"] for r in held if r["kind"] == "interface"} >= {"lk0a", "lk0b"}
    res = sdnbench("clean")
    assert res.returncode == 0, res.stderr
    assert outstanding(rundir / MANIFEST_NAME) == []
    assert process_start_time(int(emulators[0]["name"])) != emulators[0]["start"], "the emulator survived"
    # Its namespace went with it, and the veth pairs of its links with that.
    deadline = time.monotonic() + 10
    while interfaces() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert interfaces() == set()
