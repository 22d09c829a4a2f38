"""The testbed knows its limits: calibration measures them, and a trial offered more is marked."""

from __future__ import annotations

import pytest

from sdnbench import calibration
from sdnbench.config.loader import parse_experiment
from sdnbench.runner.campaign import run_campaign

pytestmark = pytest.mark.netns

EXP = """\
name: sat
repetitions: 1
controllers: [{kind: none}]
topologies: [{kind: linear, switches: 2}]
workloads:
  - name: udp
    flows: [{proto: udp, size_bytes: 128, rate_pps: 1000, duration_s: 2}]
    sweep: {rate_pps: [1000, 20000]}
cooldown_s: 0
"""


@pytest.fixture
def calibration_file(tmp_path, monkeypatch):
    path = tmp_path / "calibration.json"
    monkeypatch.setattr(calibration, "CALIBRATION_FILE", path)
    return path


def test_calibration_finds_a_rate_that_passes_and_stores_it(tmp_path, calibration_file):
    exp = parse_experiment(EXP, tmp_path / "sat.yaml")
    lines = []
    [(label, graph)] = calibration.targets(exp)
    [env] = calibration.calibrate(label, graph, exp.network, [128], tmp_path / "cal", duration_s=1.0,
                                  say=lines.append)
    assert env.zero_loss_pps >= calibration.START_PPS and env.topology == "linear-2" and env.size_bytes == 128
    assert env.first_lossy_pps is None or env.first_lossy_pps / env.zero_loss_pps <= calibration.RESOLUTION
    assert any("-> pass" in line for line in lines)
    assert calibration.missing(exp) == [] and calibration.load() == [env]


def test_an_overloaded_trial_is_marked_with_its_reason_and_a_light_one_is_valid(tmp_path, calibration_file):
    (tmp_path / "sat.yaml").write_text(EXP)
    exp = parse_experiment(EXP, tmp_path / "sat.yaml")
    # A stated envelope of 5,000 packets/s for this machine and data plane (measuring it is the test above).
    plane = calibration.data_plane_of(exp, calibration.targets(exp)[0][1])
    calibration.save(calibration.Envelope(calibration.machine_key(), plane, "linear-2", 128, 5000.0, 5500.0, 0.0))
    store = run_campaign(exp, tmp_path / "run", progress_out=lambda line: None)
    by_rate = {t.params["rate_pps"]: t for t in store.trials()}
    assert by_rate[1000].status == "ok" and by_rate[1000].valid, by_rate[1000].invalid
    heavy = by_rate[20000]
    assert heavy.status == "ok" and not heavy.valid
    assert any("offered 20,000 packets/s, above this testbed's zero-loss envelope of 5,000" in r for r in heavy.invalid)
