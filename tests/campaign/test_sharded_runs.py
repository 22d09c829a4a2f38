"""A campaign in shards, for real: each shard run with its scheduler's index variable, merged, equals the plan.

Southbound load (sdnbench-ofload's emulated switches against ovs-testcontroller) builds no network, so
these runs take seconds and need no network namespace; each test keeps its own state directory, so
they neither wait for nor block the machine's emulation lock.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sdnbench
from sdnbench.controllers import ADAPTERS
from sdnbench.manifest import MANIFEST_NAME, outstanding, process_start_time
from sdnbench.paths import native_tool

EXPERIMENT = """\
name: sharded
repetitions: 2
openflow: "1.0"
controllers:
  - {{kind: testcontroller, label: tc-a, port: {0}}}
  - {{kind: testcontroller, label: tc-b, port: {1}}}
  - {{kind: testcontroller, label: tc-c, port: {2}}}
workloads:
  - {{name: setup, type: sbi, switches: 2, macs_per_switch: 10, loops: {loops}, ms_per_loop: {ms}, warmup_loops: 1,
      sweep: {{mode: [throughput, latency]}}}}
cooldown_s: 0
"""


@pytest.fixture
def experiment(tmp_path):
    """Write the experiment (3 groups, 12 trials); loops and ms set how long each trial lasts."""
    if not ADAPTERS["testcontroller"].availability().ok:
        pytest.skip("ovs-testcontroller not installed (make system)")
    if native_tool("sdnbench-ofload") is None:
        pytest.skip("sdnbench-ofload not built (make build)")

    def write(loops=2, ms=100):
        path = tmp_path / "exp.yaml"
        path.write_text(EXPERIMENT.format(*free_ports(3), loops=loops, ms=ms))
        return path
    return write


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def sdnbench_cmd(tmp_path, *args, index=None, wait=True):
    """Run the CLI of this checkout with a private state directory; index: {variable: value}."""
    env = {k: v for k, v in os.environ.items() if k not in ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX")}
    env.update(index or {})
    env["SDNBENCH_STATE_DIR"] = str(tmp_path / "state")
    env["PYTHONPATH"] = str(Path(sdnbench.__file__).parents[1])
    argv = [sys.executable, "-m", "sdnbench", *map(str, args)]
    if not wait:
        return subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)


def stored(rundir):
    """(key, status) of every stored trial."""
    try:
        with sqlite3.connect(rundir / "results.db", timeout=1) as db:
            return db.execute("SELECT key, status FROM trial").fetchall()
    except sqlite3.OperationalError:
        return []


def plan_keys(tmp_path, exp):
    res = sdnbench_cmd(tmp_path, "plan", exp, "--json")
    assert res.returncode == 0, res.stderr
    return [t["key"] for t in json.loads(res.stdout)]


def test_every_shard_with_its_index_variable_then_merged_equals_the_plan(tmp_path, experiment):
    exp = experiment()
    runs = tmp_path / "runs"
    for i, var in enumerate(("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "JOB_COMPLETION_INDEX")):
        res = sdnbench_cmd(tmp_path, "run", exp, "--shard", "auto/3", "--out", runs / f"shard-{i}", "--resume",
                           index={var: str(i)})
        assert res.returncode == 0, res.stderr
        assert f"shard {i}/3 (index from {var}={i}): 1 of 3 groups, 4 of 12 trials" in res.stderr
        assert {k.split("|")[0] for k, _ in stored(runs / f"shard-{i}")} == {f"tc-{'abc'[i]}"}
    res = sdnbench_cmd(tmp_path, "merge", *sorted(runs.glob("shard-*")), "--out", runs / "merged")
    assert res.returncode == 0, res.stderr
    merged = stored(runs / "merged")
    assert sorted(k for k, _ in merged) == sorted(plan_keys(tmp_path, exp))      # the whole plan, once each
    assert {s for _, s in merged} == {"ok"}
    res = sdnbench_cmd(tmp_path, "results", runs / "merged", "--format", "json", "--metric", "responses_per_s_mean")
    assert res.returncode == 0, res.stderr
    cells = json.loads(res.stdout)
    assert {c["controller"] for c in cells} == {"tc-a", "tc-b", "tc-c"} and {c["n"] for c in cells} == {2}
    res = sdnbench_cmd(tmp_path, "compare", runs / "merged", runs / "merged")
    assert res.returncode == 0, res.stderr
    # an index the scheduler should not have given, and none at all
    res = sdnbench_cmd(tmp_path, "run", exp, "--shard", "auto/3", "--out", runs / "x",
                       index={"SLURM_ARRAY_TASK_ID": "3"})
    assert res.returncode == 2 and "SLURM_ARRAY_TASK_ID=3: index out of range for 3 shards" in res.stderr
    res = sdnbench_cmd(tmp_path, "run", exp, "--shard", "auto/3", "--out", runs / "x")
    assert res.returncode == 2 and "are not set" in res.stderr
    assert not (runs / "x").exists()


def test_a_killed_shard_resumes_and_the_merge_equals_the_plan(tmp_path, experiment):
    exp = experiment(loops=4, ms=250)          # about a second a trial: time to kill one mid-run
    runs = tmp_path / "runs"
    killed = runs / "shard-0"                  # 2 groups of 3 with 2 shards: 8 trials
    proc = sdnbench_cmd(tmp_path, "run", exp, "--shard", "auto/2", "--out", killed, "--resume",
                        index={"JOB_COMPLETION_INDEX": "0"}, wait=False)
    try:
        deadline = time.monotonic() + 120
        while len(stored(killed)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)                        # inside the third trial
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    before = stored(killed)
    assert 2 <= len(before) < 8, before
    held = outstanding(killed / MANIFEST_NAME)
    res = sdnbench_cmd(tmp_path, "clean", killed)        # what the killed shard left: its controller, ofload
    assert res.returncode == 0, res.stderr
    assert outstanding(killed / MANIFEST_NAME) == []
    for rec in held:
        if rec["kind"] == "process":
            assert process_start_time(int(rec["name"])) != rec.get("start"), f"{rec} survived"
    res = sdnbench_cmd(tmp_path, "run", exp, "--shard", "auto/2", "--out", killed, "--resume",
                       index={"JOB_COMPLETION_INDEX": "0"})
    assert res.returncode == 0, res.stderr
    assert f"8 trials, {len(before)} already stored" in res.stderr
    res = sdnbench_cmd(tmp_path, "merge", killed, "--out", runs / "early")
    assert res.returncode == 2 and "shard 1 missing" in res.stderr and "--allow-incomplete" in res.stderr
    res = sdnbench_cmd(tmp_path, "run", exp, "--shard", "1/2", "--out", runs / "shard-1")
    assert res.returncode == 0, res.stderr
    res = sdnbench_cmd(tmp_path, "run", exp, "--shard", "1/2", "--out", runs / "shard-1", "--resume")
    assert res.returncode == 0 and "4 trials, 4 already stored" in res.stderr
    res = sdnbench_cmd(tmp_path, "merge", killed, runs / "shard-1", "--out", runs / "merged")
    assert res.returncode == 0, res.stderr
    merged = stored(runs / "merged")
    assert sorted(k for k, _ in merged) == sorted(plan_keys(tmp_path, exp))
    assert len(merged) == len({k for k, _ in merged}) == 12


def test_merge_refuses_another_experiment_and_another_machine(tmp_path, experiment):
    exp = experiment()
    runs = tmp_path / "runs"
    assert sdnbench_cmd(tmp_path, "run", exp, "--shard", "0/3", "--out", runs / "a").returncode == 0
    other = tmp_path / "other.yaml"
    other.write_text(exp.read_text().replace("repetitions: 2", "repetitions: 1"))
    assert sdnbench_cmd(tmp_path, "run", other, "--shard", "1/3", "--out", runs / "b").returncode == 0
    res = sdnbench_cmd(tmp_path, "merge", runs / "a", runs / "b", "--out", runs / "m1")
    assert res.returncode == 2 and "are not shards of one campaign" in res.stderr
    assert sdnbench_cmd(tmp_path, "run", exp, "--shard", "1/3", "--out", runs / "c").returncode == 0
    with sqlite3.connect(runs / "c" / "results.db") as db:    # as if shard 1 ran on another kernel
        for key, env in db.execute("SELECT key, environment FROM trial").fetchall():
            db.execute("UPDATE trial SET environment = ? WHERE key = ?",
                       (json.dumps({**json.loads(env), "kernel": "0.0.0-other"}), key))
    res = sdnbench_cmd(tmp_path, "merge", runs / "a", runs / "c", "--out", runs / "m2", "--allow-incomplete")
    assert res.returncode == 2 and "different environments" in res.stderr and "0.0.0-other" in res.stderr
    assert not (runs / "m1").exists() and not (runs / "m2").exists()
