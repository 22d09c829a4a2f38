"""The command line end to end: run, results, SIGKILL + clean, resume."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sdnbench.controllers import ADAPTERS
from sdnbench.emulation import ovs
from sdnbench.manifest import MANIFEST_NAME, outstanding
from sdnbench.manifest import process_start_time

pytestmark = pytest.mark.netns

EXPERIMENT = """\
name: cli
repetitions: {reps}
openflow: "1.3"
controllers:
  - kind: {controller}
  - kind: none
    label: no-sdn
topologies:
  - kind: linear
    switches: 2
workloads:
  - name: udp
    engine: ditg
    flows:
      - {{proto: udp, rate_pps: 200, count: {count}, size_bytes: 256}}
cooldown_s: 0
"""


def sdnbench(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "sdnbench", *args], capture_output=True, text=True,
                          timeout=300, **kwargs)


def write_experiment(tmp_path, reps=2, duration=1, controller="osken"):
    """An experiment of `reps` repetitions of a flow lasting `duration` s at 200 packets/s."""
    if not ADAPTERS[controller].availability().ok:
        pytest.skip(f"{controller} not installed (make controllers)")
    path = tmp_path / "exp.yaml"
    path.write_text(EXPERIMENT.format(reps=reps, count=200 * duration, controller=controller))
    return path


def trials_ok(rundir: Path) -> int:
    db = rundir / "results.db"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return conn.execute("SELECT count(*) FROM trial WHERE status = 'ok'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_run_prints_comparison_and_exports(tmp_path):
    exp = write_experiment(tmp_path)
    rundir = tmp_path / "run"
    res = sdnbench("run", str(exp), "--out", str(rundir))
    assert res.returncode == 0, res.stderr
    assert "osken" in res.stdout and "no-sdn" in res.stdout and "loss_pct" in res.stdout
    rows = json.loads((rundir / "summary.json").read_text())
    loss = {r["controller"]: r for r in rows if r["metric"] == "loss_pct"}
    assert set(loss) == {"osken", "no-sdn"} and all(r["n"] == 2 for r in loss.values())
    assert all(r["mean"] == 0 for r in loss.values())            # idle network, modest rate
    rx = {r["controller"]: (r["min"], r["max"]) for r in rows if r["metric"] == "rx_pkts"}
    assert set(rx.values()) == {(200, 200)}                       # exactly the packets sent
    with sqlite3.connect(rundir / "results.db") as conn:
        envs = [json.loads(e) for (e,) in conn.execute("SELECT environment FROM trial")]
    assert {(e["switch"], e["links"], e["datapath"] in ("kernel", "user")) for e in envs} == {("ovs", "veth_tc", True)}
    assert outstanding(rundir / MANIFEST_NAME) == []
    res = sdnbench("results", str(rundir), "--format", "csv", "--metric", "loss_pct")
    assert res.returncode == 0 and res.stdout.startswith("topology,workload,params,controller,metric")


def kill_in_second_trial(exp: Path, rundir: Path, wait_s: float = 120) -> None:
    """Run exp and SIGKILL sdnbench a second into its second trial (after the first is stored)."""
    proc = subprocess.Popen([sys.executable, "-m", "sdnbench", "run", str(exp), "--out", str(rundir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + wait_s
        while trials_ok(rundir) < 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert trials_ok(rundir) >= 1, "first trial never finished"
        time.sleep(1.0)              # well inside the second trial's traffic
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_sigkill_mid_trial_then_clean_then_resume(tmp_path):
    exp = write_experiment(tmp_path, reps=3, duration=3)
    rundir = tmp_path / "run"
    kill_in_second_trial(exp, rundir)
    held = outstanding(rundir / MANIFEST_NAME)
    kinds = {r["kind"] for r in held}
    assert {"process", "bridge", "interface"} <= kinds, held
    res = sdnbench("clean")
    assert res.returncode == 0, res.stderr
    assert outstanding(rundir / MANIFEST_NAME) == []
    for rec in held:
        if rec["kind"] == "process":
            assert process_start_time(int(rec["name"])) != rec.get("start"), f"{rec} survived"
        elif rec["kind"] == "bridge":
            assert rec["name"] not in ovs.existing_bridges()
        else:
            assert not Path(f"/sys/class/net/{rec['name']}").exists()
    done_before = trials_ok(rundir)
    res = sdnbench("run", str(exp), "--out", str(rundir), "--resume")
    assert res.returncode == 0, res.stderr
    assert f"{done_before} already stored" in res.stderr
    assert trials_ok(rundir) == 6


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_cleans_up_and_says_how_to_resume(tmp_path, sig):
    exp = write_experiment(tmp_path, reps=3, duration=3)
    rundir = tmp_path / "run"
    # start_new_session: the signal goes to sdnbench alone, as `kill` would send it
    proc = subprocess.Popen([sys.executable, "-m", "sdnbench", "run", str(exp), "--out", str(rundir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while trials_ok(rundir) < 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err
    assert outstanding(rundir / MANIFEST_NAME) == []
    assert not ({"s1", "s2"} & ovs.existing_bridges())
