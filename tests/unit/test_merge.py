"""Merging shards' stores: one campaign's shards combine; anything else is refused with the reason."""

from __future__ import annotations

import sqlite3

import pytest

from sdnbench.cli import main
from sdnbench.results.merge import MergeRefused, merge
from sdnbench.results.shards import ShardRecord, save_shard, shard_records
from sdnbench.results.store import ResultStore, TrialRecord
from sdnbench.workloads.base import FlowResult

ENV = {"kernel": "6.1.0-18-amd64", "os": "Linux-6.1.0-18-amd64-x86_64-with-glibc2.36", "cpu_count": 2,
       "cpus_usable": 2, "cpu_model": "AMD EPYC 7B13", "ovs_version": "3.1.0", "kernel_datapath_available": False,
       "netem_available": False, "sdnbench_version": "0.1.0", "python": "3.11.2", "switch": "ovs",
       "datapath": "netdev", "links": "veth_tc", "controller_version": "1.4.1"}
#: Two shards of 2 controllers x 2 topologies, 2 repetitions: 4 groups, 8 trials.
GROUPS = {0: [("osken", "linear-2"), ("ryu", "linear-2")], 1: [("osken", "single-3"), ("ryu", "single-3")]}


def keys(index):
    return [f"{c}|{t}|udp|{{}}|{rep}" for c, t in GROUPS[index] for rep in (1, 2)]


def shard_store(rundir, index, count=2, experiment="e" * 64, env=None, host="node-a", trials=None):
    """A shard's run directory as `run --shard` leaves it, its trials ok with one metric each."""
    rundir.mkdir(parents=True)
    store = ResultStore.in_rundir(rundir)
    store.save_campaign("grid", "grid.yaml", "name: grid\n", "0.1.0")
    planned = keys(index)
    for i, key in enumerate(planned if trials is None else trials):
        controller, topology, _, _, rep = key.split("|")
        env_of = {**ENV, **(env or {})}
        rec = TrialRecord(key, controller, topology, "udp", {}, int(rep), index * 4 + i, "ok",
                          environment=env_of)
        store.save_trial(rec, [FlowResult("f1", "native", metrics={"loss_pct": 0.0})])
    save_shard(store.conn, ShardRecord(index, count, experiment, "p" * 64, 8,
                                       [f"{c}|{t}|network" for c, t in GROUPS[index]], planned, host=host))
    store.close()
    return rundir


def trial_keys(rundir):
    with sqlite3.connect(rundir / "results.db") as db:
        return sorted(r[0] for r in db.execute("SELECT key FROM trial"))


def test_two_shards_merge_into_the_whole_campaign(tmp_path, capsys):
    a, b = shard_store(tmp_path / "s0", 0), shard_store(tmp_path / "s1", 1, host="node-b")
    result = merge([a, b], tmp_path / "merged")
    assert result.complete and result.trials == 8 and result.shards == [0, 1]
    assert trial_keys(tmp_path / "merged") == sorted(keys(0) + keys(1))
    merged = ResultStore.in_rundir(tmp_path / "merged")
    assert [r.index for r in shard_records(merged.conn)] == [0, 1]
    assert merged.metrics(keys(1)[0]) == {"f1": {"loss_pct": 0.0}}
    assert merged.campaign()["name"] == "grid"
    assert "shard 0 on node-a, shard 1 on node-b" in " ".join(result.notes)     # hosts differ: reported only
    # the merged store reads like a run's
    assert main(["results", str(tmp_path / "merged"), "--format", "json"]) == 0


@pytest.mark.parametrize("change, message", [
    ({"experiment": "f" * 64}, "are not shards of one campaign"),
    ({"count": 3}, "are not shards of one campaign"),
    ({"env": {"kernel": "6.5.0"}}, "kernel: {a}=6.1.0-18-amd64, {b}=6.5.0"),
    ({"env": {"cpu_model": "Intel Xeon"}}, "cpu_model"),
    ({"env": {"sdnbench_version": "0.2.0"}}, "sdnbench_version"),
    ({"env": {"ovs_version": "3.3.0"}}, "ovs_version"),
])
def test_shards_of_other_experiments_or_machines_are_refused(tmp_path, change, message):
    a = shard_store(tmp_path / "s0", 0)
    b = shard_store(tmp_path / "s1", 1, **change)
    with pytest.raises(MergeRefused) as err:
        merge([a, b], tmp_path / "merged")
    assert message.format(a=a, b=b) in str(err.value)
    assert not (tmp_path / "merged").exists()                # nothing written


def test_the_data_plane_of_one_topology_and_a_controller_version_must_agree(tmp_path):
    a = shard_store(tmp_path / "s0", 0)
    # linear-2 (shard 0's topology) built on another datapath by a trial of shard 1
    b = shard_store(tmp_path / "s1", 1, env={"datapath": "system"}, trials=['osken|linear-2|udp|{"x": 1}|1'])
    with pytest.raises(MergeRefused, match=r"datapath \(topology linear-2\): .*=netdev, .*=system"):
        merge([a, b], tmp_path / "m1")
    c = shard_store(tmp_path / "s2", 1, env={"controller_version": "2.0"})
    with pytest.raises(MergeRefused, match=r"controller_version \(controller osken\)"):
        merge([a, c], tmp_path / "m2")
    # another topology may run on another link realisation (linkemu where tc cannot shape its links)
    d = shard_store(tmp_path / "s3", 1, env={"links": "linkemu"})
    assert merge([a, d], tmp_path / "m3").complete


def test_a_field_can_be_left_out_of_the_match(tmp_path):
    a, b = shard_store(tmp_path / "s0", 0), shard_store(tmp_path / "s1", 1, env={"python": "3.11.9", "os": "x"})
    with pytest.raises(MergeRefused, match="python"):
        merge([a, b], tmp_path / "m1")
    result = merge([a, b], tmp_path / "m2", ignore_env={"python"})
    assert any(n.startswith("os: ") for n in result.notes)     # reported, not refused


def test_a_shard_or_trial_given_twice_is_refused(tmp_path):
    a, b = shard_store(tmp_path / "s0", 0), shard_store(tmp_path / "s0-again", 0)
    with pytest.raises(MergeRefused, match="shard 0/2 is in both"):
        merge([a, b], tmp_path / "m1")
    c = shard_store(tmp_path / "s1", 1, trials=keys(1) + [keys(0)[0]])    # one trial of shard 0 as well
    with pytest.raises(MergeRefused, match=r"trial osken\|linear-2\|udp\|\{\}\|1 is stored in both"):
        merge([a, c], tmp_path / "m2")
    with pytest.raises(MergeRefused, match="given twice"):
        merge([a, tmp_path / "s0"], tmp_path / "m3")


def test_an_incomplete_campaign_is_merged_only_when_allowed(tmp_path, capsys):
    a = shard_store(tmp_path / "s0", 0, trials=keys(0)[:3])       # killed before its last trial
    with pytest.raises(MergeRefused) as err:
        merge([a], tmp_path / "m1")
    text = str(err.value)
    assert "shard 1 missing" in text and "5 planned trials in no store" in text and keys(0)[3] in text
    assert "--allow-incomplete" in text
    assert main(["merge", str(a), "--out", str(tmp_path / "m2"), "--allow-incomplete"]) == 0
    assert "warning: incomplete campaign: shard 1 missing" in capsys.readouterr().err
    assert trial_keys(tmp_path / "m2") == sorted(keys(0)[:3])


def test_only_shards_into_a_new_directory(tmp_path):
    a = shard_store(tmp_path / "s0", 0)
    plain = tmp_path / "plain"
    plain.mkdir()
    ResultStore.in_rundir(plain).save_campaign("grid", "grid.yaml", "name: grid\n", "0.1.0")
    with pytest.raises(MergeRefused, match="not a shard"):
        merge([a, plain], tmp_path / "m1")
    with pytest.raises(MergeRefused, match="no results.db"):
        merge([a, tmp_path / "nowhere"], tmp_path / "m2")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(MergeRefused, match="not empty"):
        merge([a], tmp_path / "full", allow_incomplete=True)
    assert main(["merge", str(plain), "--out", str(tmp_path / "m3")]) == 2


def test_a_merged_store_merges_again(tmp_path):
    part = merge([shard_store(tmp_path / "s0", 0)], tmp_path / "part", allow_incomplete=True)
    assert part.missing_shards == [1]
    whole = merge([tmp_path / "part", shard_store(tmp_path / "s1", 1)], tmp_path / "whole")
    assert whole.complete and trial_keys(tmp_path / "whole") == sorted(keys(0) + keys(1))
    with pytest.raises(MergeRefused, match="shard 0/2 is in both"):
        merge([tmp_path / "part", tmp_path / "s0"], tmp_path / "again", allow_incomplete=True)
