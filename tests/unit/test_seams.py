"""The seams: kinds come from their registries, metrics from one catalog, workload types plug in."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sdnbench.config.loader import parse_experiment
from sdnbench.config.schema import CONTROLLER, TOPOLOGY, WORKLOAD, experiment_jsonschema
from sdnbench.controllers import ADAPTERS
from sdnbench.metrics import HIGHER, LOWER, NEITHER, Metric, catalog, default_shown, describe
from sdnbench.results.store import ResultStore, TrialRecord, UncataloguedMetric
from sdnbench.runner.plan import expand
from sdnbench.topology import KINDS
from sdnbench.workloads.base import FlowResult, WorkloadType, workload_record
from sdnbench.workloads.traffic.registry import engine_class, engine_names
from sdnbench.workloads.types import WORKLOAD_TYPES

SDNBENCH = Path(__file__).resolve().parents[2] / "sdnbench"


def test_schema_choices_are_the_registries():
    assert CONTROLLER.fields["kind"].type.choices == tuple(ADAPTERS)
    assert list(TOPOLOGY.variants) == list(KINDS)
    assert list(WORKLOAD.variants) == list(WORKLOAD_TYPES)
    assert all(ADAPTERS[k].kind == k for k in ADAPTERS)
    assert all(engine_class(n).name == n for n in engine_names())
    js = experiment_jsonschema()["properties"]
    assert js["controllers"]["items"]["properties"]["kind"]["enum"] == list(ADAPTERS)


def test_runner_never_compares_workload_type_strings():
    """The runner asks the workload's type; no `== "traffic"` or `in ("traffic", ...)` there."""
    names = set(WORKLOAD_TYPES)
    for path in (SDNBENCH / "runner").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                consts = [c.value for c in ast.walk(node) if isinstance(c, ast.Constant)]
                assert not names & set(consts), f"{path.name}:{node.lineno} compares a workload type string"


def test_catalog_entries_say_unit_meaning_and_direction():
    cat = catalog()
    assert len(cat) > 60
    for m in cat.values():
        assert m.unit and m.description and m.better in (LOWER, HIGHER, NEITHER), m
    assert cat["loss_pct"].better == LOWER and cat["throughput_rps"].better == HIGHER
    assert default_shown()[:2] == ["owd_mean_ms", "owd_p99_ms"]
    assert default_shown()[-2:] == ["host_cpu_max_pct", "ctrl_cpu_pct"]
    assert describe("no_such_metric").unit == ""


def test_a_metric_declared_twice_is_refused():
    from sdnbench.metrics import by_name

    with pytest.raises(ValueError, match="declared twice"):
        by_name(Metric("a_ms", "ms", "a"), Metric("a_ms", "ms", "b"))
    with pytest.raises(ValueError, match="better must be"):
        Metric("b_ms", "ms", "b", better="smaller")


def test_the_store_refuses_an_uncatalogued_metric(tmp_path):
    store = ResultStore.in_rundir(tmp_path)
    rec = TrialRecord("k", "c", "t", "w", {}, 1, 0, "ok", None, 0.0, 1.0, {}, {})
    with pytest.raises(UncataloguedMetric, match="latency_fortnights"):
        store.save_trial(rec, [FlowResult("f0", "x", {"loss_pct": 0.0, "latency_fortnights": 2.0})])
    assert store.trials() == []
    store.save_trial(rec, [FlowResult("f0", "x", {"loss_pct": 0.0})])
    assert store.metrics("k") == {"f0": {"loss_pct": 0.0}}


class _Idle(WorkloadType):
    """A workload type that needs no network and measures nothing: the smallest possible plug-in."""

    name = "idle"
    record = workload_record("idle", "do nothing", {}, doc="for tests")
    metrics = {}

    def needs_network(self, workload):
        return False

    def expected_seconds(self, trial):
        return 0.25

    def run(self, trial, ctx):
        return [], {}


def test_a_new_workload_type_plugs_in_without_runner_changes(monkeypatch):
    exp = parse_experiment("name: x\ncontrollers: [{kind: osken}, {kind: ryu}]\n"
                           "workloads: [{name: s, type: sbi}]\n", Path("e.yaml"))
    monkeypatch.setitem(WORKLOAD_TYPES, "idle", _Idle())
    exp.workloads.append({"name": "nothing", "type": "idle"})
    trials = [t for t in expand(exp) if t.workload["type"] == "idle"]
    assert len(trials) == 2 * 3 and not any(t.needs_network for t in trials)
    assert {t.expected_seconds() for t in trials} == {0.25} and trials[0].topology == "-"
