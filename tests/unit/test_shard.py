"""Sharding a plan: the index from the scheduler, a deal every machine computes alike, the store's claim."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from sdnbench.cli import main
from sdnbench.config.loader import parse_experiment
from sdnbench.errors import SdnbenchError
from sdnbench.results.shards import ShardRecord, claim_shard, refuse_unsharded_resume, shard_records
from sdnbench.runner.plan import expand
from sdnbench.runner.shard import (INDEX_VARIABLES, Shard, ShardError, deal, experiment_hash, group_key, parse_shard,
                                   plan_hash, select)

EXP = """\
name: grid
repetitions: 2
controllers: [{kind: osken}, {kind: ryu}, {kind: none, label: no-sdn}]
topologies: [{kind: linear, switches: 2}, {kind: single, hosts: 3}]
workloads:
  - {name: udp, flows: [{proto: udp, rate_pps: 100, duration_s: 1}], sweep: {size_bytes: [64, 512]}}
  - {name: sb, type: sbi, loops: 3, ms_per_loop: 500, warmup_loops: 1, sweep: {switches: [1, 8]}}
"""


def plan(text=EXP):
    return expand(parse_experiment(text, Path("grid.yaml")))


def test_index_given_or_read_from_the_scheduler():
    assert parse_shard("1/4", environ={}) == Shard(1, 4)
    assert parse_shard("auto/4", environ={"SLURM_ARRAY_TASK_ID": "3"}) == Shard(3, 4, "SLURM_ARRAY_TASK_ID")
    assert parse_shard("auto/4", environ={"JOB_COMPLETION_INDEX": "0"}) == Shard(0, 4, "JOB_COMPLETION_INDEX")
    # Slurm first, as documented, when a pod happens to carry both
    both = {"SLURM_ARRAY_TASK_ID": "2", "JOB_COMPLETION_INDEX": "1"}
    assert parse_shard("auto/4", environ=both).source == INDEX_VARIABLES[0]
    assert parse_shard("auto/4", "MY_INDEX", {"MY_INDEX": "1", **both}) == Shard(1, 4, "MY_INDEX")
    assert "index from JOB_COMPLETION_INDEX=0" in parse_shard("auto/2", environ={"JOB_COMPLETION_INDEX": "0"}
                                                              ).describe()


@pytest.mark.parametrize("text, env, var, message", [
    ("auto/4", {}, None, "SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are not set"),
    ("auto/4", {"SLURM_ARRAY_TASK_ID": "1"}, "MY_INDEX", "MY_INDEX is not set"),
    ("auto/4", {"SLURM_ARRAY_TASK_ID": "4"}, None, "SLURM_ARRAY_TASK_ID=4: index out of range for 4 shards; "
                                                   "expected 0 to 3 (a Slurm array must count from 0: --array=0-3)"),
    ("auto/2", {"JOB_COMPLETION_INDEX": "x"}, None, "JOB_COMPLETION_INDEX='x': the shard index must be"),
    ("auto/2", {"JOB_COMPLETION_INDEX": "-1"}, None, "must be a whole number from 0 to 1"),
    ("4/4", {}, None, "--shard 4/4: index out of range for 4 shards"),
    ("4", {}, None, "expected I/N"),
    ("1/0", {}, None, "N must lie between 1"),
    ("1/4", {}, "MY_INDEX", "give auto/4 to read the index from MY_INDEX"),
])
def test_bad_indices_are_refused_with_what_was_read(text, env, var, message):
    with pytest.raises(ShardError) as err:
        parse_shard(text, var, env)
    assert message in str(err.value)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 20])
def test_every_group_runs_in_exactly_one_shard(count):
    trials = plan()
    shards = [select(trials, Shard(i, count)) for i in range(count)]
    keys = [t.key for s in shards for t in s]
    assert sorted(keys) == sorted(t.key for t in trials) and len(set(keys)) == len(keys)
    for s in shards:
        assert [t.seq for t in s] == sorted(t.seq for t in s)     # plan order inside a shard
        for t in s:     # a group is never cut
            assert all(u in s for u in trials if group_key(u) == group_key(t))
    sizes = [len({group_key(t) for t in s}) for s in shards]
    assert max(sizes) - min(sizes) <= 1                          # dealt evenly


def test_the_deal_depends_on_group_keys_only():
    trials = plan()
    shuffled = trials[:]
    random.Random(7).shuffle(shuffled)
    assert deal(shuffled, 3) == deal(trials, 3)
    # 3 controllers x (2 topologies on a network + southbound load on none): 9 groups
    assert len(deal(trials, 3)) == 9
    assert "osken|linear-2|network" in deal(trials, 3) and "osken|-|no-network" in deal(trials, 3)


def test_hashes_name_the_experiment_not_its_layout():
    exp = parse_experiment(EXP, Path("a.yaml"))
    commented = parse_experiment("# a comment\n" + EXP.replace("repetitions: 2", "repetitions:   2"),
                                 Path("b.yaml"))
    other = parse_experiment(EXP.replace("repetitions: 2", "repetitions: 3"), Path("c.yaml"))
    assert experiment_hash(exp.raw) == experiment_hash(commented.raw) != experiment_hash(other.raw)
    assert plan_hash(expand(exp)) == plan_hash(expand(commented)) != plan_hash(expand(other))


def _record(index, count=2, experiment="e" * 64):
    return ShardRecord(index, count, experiment, "p" * 64, 10, [f"g{index}"], [f"k{index}"])


def test_a_store_holds_one_shard_and_resumes_only_as_it(tmp_path):
    conn = sqlite3.connect(tmp_path / "results.db")
    conn.execute("CREATE TABLE trial (key TEXT)")
    claim_shard(conn, _record(1), resume=False, rundir=tmp_path)
    claim_shard(conn, _record(1), resume=True, rundir=tmp_path)           # the same shard again: fine
    assert [r.index for r in shard_records(conn)] == [1]
    with pytest.raises(SdnbenchError, match="holds shard 1/2, not 0/2: resume it with --shard 1/2"):
        claim_shard(conn, _record(0), resume=True, rundir=tmp_path)
    with pytest.raises(SdnbenchError, match="another experiment"):
        claim_shard(conn, _record(1, experiment="f" * 64), resume=True, rundir=tmp_path)
    with pytest.raises(SdnbenchError, match="another experiment"):
        claim_shard(conn, _record(1, count=3), resume=True, rundir=tmp_path)
    with pytest.raises(SdnbenchError, match="resume it with --shard 1/2"):
        refuse_unsharded_resume(conn, tmp_path)


def test_an_unsharded_run_is_not_resumed_as_a_shard(tmp_path):
    conn = sqlite3.connect(tmp_path / "results.db")
    conn.execute("CREATE TABLE trial (key TEXT)")
    conn.execute("INSERT INTO trial VALUES ('k')")
    with pytest.raises(SdnbenchError, match="unsharded run; resume it without --shard"):
        claim_shard(conn, _record(0), resume=True, rundir=tmp_path)


def test_plan_lists_one_shards_trials(tmp_path, capsys):
    exp = tmp_path / "grid.yaml"
    exp.write_text(EXP)
    listed = []
    for i in range(4):
        assert main(["plan", str(exp), "--shard", f"{i}/4", "--json"]) == 0
        listed.append([t["key"] for t in json.loads(capsys.readouterr().out)])
        assert listed[-1] == [t.key for t in select(plan(), Shard(i, 4))]
    assert sorted(k for keys in listed for k in keys) == sorted(t.key for t in plan())
