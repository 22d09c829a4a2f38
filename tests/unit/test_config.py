"""Experiment file validation: every error names file, line, key and what was expected."""

from pathlib import Path

import pytest

from sdnbench.config.loader import ExperimentErrors, parse_experiment
from sdnbench.config.schema import experiment_jsonschema
from sdnbench.errors import ConfigError

GOOD = """\
name: t
repetitions: 2
controllers:
  - kind: osken
  - kind: ryu
    openflow: "1.0"
topologies:
  - kind: single
    hosts: 3
workloads:
  - name: udp
    flows:
      - {proto: udp, rate_pps: 100, duration_s: 2}
    sweep: {size_bytes: [64, 512]}
"""


def parse(text):
    return parse_experiment(text, Path("exp.yaml"))


def errors_of(text):
    with pytest.raises(ConfigError) as info:
        parse(text)
    return str(info.value)


def test_valid_file_fills_defaults():
    exp = parse(GOOD)
    assert exp.repetitions == 2
    assert [c.label for c in exp.controllers] == ["osken", "ryu"]
    assert exp.controllers[0].openflow == "1.3"          # experiment default
    assert exp.controllers[1].openflow == "1.0"          # per-controller override
    assert exp.network["fail_mode"] == "secure"
    assert exp.workloads[0]["flows"][0]["src"] == "first"


def test_unknown_key_names_line_and_accepted_keys():
    msg = errors_of(GOOD.replace("    hosts: 3", "    hosts: 3\n    colour: red"))
    assert "exp.yaml:10: topologies[0].colour: unknown key" in msg
    assert "hosts" in msg


def test_wrong_type_and_impossible_values():
    msg = errors_of(GOOD.replace("rate_pps: 100", "rate_pps: -1").replace("repetitions: 2", "repetitions: two"))
    assert "exp.yaml:2: repetitions: expected an integer from 1 to 1,000, got str 'two'" in msg
    assert "exp.yaml:13: workloads[0].flows[0].rate_pps: expected a number > 0 and <= 10,000,000, got -1" in msg


def test_tree_depth_zero_is_refused():
    text = GOOD.replace("  - kind: single\n    hosts: 3", "  - kind: tree\n    depth: 0\n    fanout: 2")
    assert "topologies[0].depth: expected an integer from 1 to 64, got 0" in errors_of(text)


def test_unknown_controller_kind_lists_choices():
    msg = errors_of(GOOD.replace("kind: ryu", "kind: floodlight"))
    assert "exp.yaml:5: controllers[1].kind: expected one of osken, ryu" in msg


def test_missing_required_and_flow_consistency():
    msg = errors_of("name: x\ncontrollers: [{kind: osken}]\ntopologies: [{kind: single}]\n"
                    "workloads:\n  - name: w\n    flows: [{proto: tcp}]\n")
    assert "a TCP flow needs duration_s or volume_bytes" in msg
    msg = errors_of("name: x\ncontrollers: [{kind: osken}]\n")
    assert "workloads: required key missing" in msg
    msg = errors_of("name: x\ncontrollers: [{kind: osken}]\nworkloads: [{name: w, flows: [{count: 5}]}]\n")
    assert "exp.yaml:1: topologies: required by workloads w" in msg


def test_sbi_workload_needs_no_topology_and_sweeps_its_own_fields():
    exp = parse("name: sb\ncontrollers: [{kind: osken}]\nworkloads:\n"
                "  - {name: flows, type: sbi, mode: latency, sweep: {switches: [1, 16]}}\n")
    wl = exp.workloads[0]
    assert (wl["type"], wl["mode"], wl["macs_per_switch"], wl["sweep"]) == ("sbi", "latency", 1000, {"switches": [1, 16]})
    msg = errors_of("name: sb\ncontrollers: [{kind: osken}]\nworkloads:\n"
                    "  - {name: f, type: sbi, flows: []}\n")
    assert "workloads[0].flows: unknown key; sbi workload accepts" in msg
    msg = errors_of("name: sb\ncontrollers: [{kind: osken}]\nworkloads:\n"
                    "  - {name: f, type: sbi, sweep: {size_bytes: [1]}}\n")
    assert "cannot sweep 'size_bytes'; sweepable: mode, switches" in msg


def test_sbi_paths_need_a_topology_aware_workload():
    msg = errors_of("name: sb\ncontrollers: [{kind: osken}]\nworkloads:\n"
                    "  - {name: f, type: sbi, paths: true}\n")
    assert "exp.yaml:4: workloads[0].paths: needs topology_aware: true" in msg


def test_duplicate_labels_are_refused():
    msg = errors_of(GOOD.replace("  - kind: ryu\n", "  - kind: osken\n"))
    assert "'osken' is used by controllers[0] too" in msg


def test_sweep_only_of_flow_fields():
    assert "cannot sweep 'colour'" in errors_of(GOOD.replace("size_bytes: [64, 512]", "colour: [1]"))
    assert "sweep.size_bytes[1]: expected an integer from 1 to 65,507" in errors_of(GOOD.replace("[64, 512]", "[64, 0]"))


def test_yaml_syntax_error_has_line():
    msg = errors_of("name: x\ncontrollers: [\n")
    assert msg.startswith("exp.yaml:") and "not valid YAML" in msg


def test_all_problems_reported_at_once():
    with pytest.raises(ExperimentErrors) as info:
        parse(GOOD.replace("hosts: 3", "hosts: 0").replace("duration_s: 2", "duration_s: -2"))
    assert len(info.value.issues) == 2


def test_published_schema_matches_definitions():
    committed = Path(__file__).resolve().parents[2] / "schemas" / "experiment.schema.json"
    import json
    assert json.loads(committed.read_text()) == experiment_jsonschema(), \
        "schemas/experiment.schema.json is stale: run `make schema`"


def test_format_reference_is_current():
    from sdnbench.config.reference import markdown_reference
    committed = Path(__file__).resolve().parents[2] / "docs" / "experiment-format.md"
    assert committed.read_text() == markdown_reference() + "\n", "docs/experiment-format.md is stale: run `make schema`"


def test_examples_validate_against_published_schema():
    jsonschema = pytest.importorskip("jsonschema")
    import yaml
    root = Path(__file__).resolve().parents[2]
    for example in sorted((root / "examples").glob("*.yaml")):
        data = yaml.safe_load(example.read_text())
        jsonschema.validate(data, experiment_jsonschema())
        parse_experiment(example.read_text(), example)
