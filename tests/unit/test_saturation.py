"""Saturated trials are marked with their reasons, and tables, exports and filters honour the mark."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdnbench import calibration
from sdnbench.analysis.compare import compare, to_rows
from sdnbench.analysis.table import render_report
from sdnbench.config.loader import parse_experiment
from sdnbench.results.store import ResultStore, TrialRecord
from sdnbench.runner.plan import expand
from sdnbench.runner.saturation import invalid_reasons
from sdnbench.workloads.base import FlowResult

EXP = """\
name: sat
controllers: [{kind: osken}]
topologies: [{kind: linear, switches: 7}]
workloads:
  - name: udp
    flows: [{proto: udp, size_bytes: 128, rate_pps: 1000, duration_s: 2},
            {proto: udp, size_bytes: 1024, rate_pps: 1000, duration_s: 2}]
    sweep: {rate_pps: [1000, 40000]}
"""
PLANE = '{"datapath": "user", "links": "veth_tc", "switch": "ovs"}'


def trials():
    return expand(parse_experiment(EXP, Path("sat.yaml")))


def envelope(pps: float, size: int = 128) -> calibration.Envelope:
    return calibration.Envelope(calibration.machine_key(), PLANE, "linear-7", size, pps, pps * 1.1, 0.0)


@pytest.mark.parametrize("limit", [37_000, 2_500, 600_000])
def test_search_brackets_the_limit_within_the_resolution(limit):
    steps = []
    low, high = calibration.search(lambda r: steps.append(r) or r <= limit)
    assert low <= limit < (high or float("inf"))
    assert high is None or high / low <= calibration.RESOLUTION
    assert len(steps) < 25


def test_search_below_the_start_and_above_the_top():
    assert calibration.search(lambda r: r <= 300)[0] > 250
    assert calibration.search(lambda r: True) == (calibration.MAX_PPS, None)


def test_offered_load_above_the_envelope_marks_the_trial_with_the_reason():
    light, heavy = [t for t in trials() if t.repetition == 1]
    stored = [envelope(25_000)]
    # two flows of the heavy trial offer 80,000 packets/s; the smaller payload's envelope applies
    [reason] = invalid_reasons(heavy, [], {"host_cpu_mean_pct": 40.0}, PLANE, stored)
    assert "offered 80,000 packets/s, above this testbed's zero-loss envelope of 25,000" in reason
    assert "linear-7, 128 B" in reason
    assert invalid_reasons(light, [], {"host_cpu_mean_pct": 40.0}, PLANE, stored) == []
    # another data plane's envelope says nothing about this one
    assert invalid_reasons(heavy, [], {}, '{"switch": "p4"}', stored) == []


def test_saturated_cpu_and_an_invalid_generator_are_reasons_too():
    light = trials()[0]
    reasons = invalid_reasons(light, [FlowResult("ofload", "x", errors=["not valid: generator saturated"])],
                              {"host_cpu_mean_pct": 99.0}, None)
    assert reasons == ["the machine's CPU was saturated (mean 99 % while measuring)", "not valid: generator saturated"]


def test_marked_repetitions_count_show_and_can_be_hidden(tmp_path):
    store = ResultStore.in_rundir(tmp_path)
    for rep, (loss, invalid) in enumerate([(0.0, None), (0.1, None), (35.0, ["offered 40,000 packets/s, above"])]):
        rec = TrialRecord(f"k{rep}", "osken", "linear-7", "udp", {"rate_pps": 40000}, rep + 1, rep, "ok",
                          invalid=invalid)
        store.save_trial(rec, [FlowResult("f0", "native", {"loss_pct": loss})])
    assert [t.valid for t in store.trials()] == [True, True, False]
    [cell] = compare(store)[0]
    assert cell.invalid == 1 and cell.summary.n == 3 and "offered 40,000" in cell.invalid_reasons[0]
    [row] = to_rows([cell])
    assert row["valid"] is False and row["invalid_repetitions"] == 1 and "offered" in row["invalid_reasons"]
    text = render_report(store, compare(store))
    assert "loss_pct" in text and "†1" in text and "measured the testbed, not the controller" in text
    [hidden] = compare(store, hide_invalid=True)[0]
    assert hidden.summary.n == 2 and hidden.summary.mean == pytest.approx(0.05) and hidden.invalid == 1


def test_envelopes_are_stored_per_machine_data_plane_topology_and_size(tmp_path):
    path = tmp_path / "cal.json"
    calibration.save(envelope(25_000), path)
    calibration.save(envelope(30_000), path)                  # replaces: same key
    calibration.save(envelope(9_000, size=1024), path)
    stored = calibration.load(path)
    assert len(stored) == 2
    assert calibration.lookup(PLANE, "linear-7", 128, stored).zero_loss_pps == 30_000
    assert calibration.lookup(PLANE, "linear-3", 128, stored) is None


def test_the_data_plane_key_is_the_same_before_and_after_the_link_emulator_starts():
    before = {"switch": "ovs", "links": "linkemu", "linkemu_links": 2, "link_shaping": "linkemu"}
    after = {**before, "linkemu_sched": "fifo", "linkemu_spin_us": 25}
    assert calibration.data_plane_key(before) == calibration.data_plane_key(after)
    assert calibration.data_plane_key(before) != calibration.data_plane_key({**before, "links": "veth_tc"})
