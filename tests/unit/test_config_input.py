"""The input boundary: any file gives an error naming file, line and key, or loads."""

from pathlib import Path

import pytest

from sdnbench.config.loader import load_experiment, parse_experiment
from sdnbench.config.source import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES
from sdnbench.errors import ConfigError
from sdnbench.config.limits import MAX_FLOW_RUNS, MAX_TRIALS
from sdnbench.runner.plan import expand

GOOD = """\
name: t
controllers:
  - kind: osken
topologies:
  - kind: single
    hosts: 3
workloads:
  - name: cbr
    flows:
      - {rate_pps: 100, duration_s: 2}
"""


def parse(text):
    return parse_experiment(text, Path("exp.yaml"))


def error(text) -> str:
    with pytest.raises(ConfigError) as info:
        parse(text)
    return str(info.value)


def test_yaml_syntax_error_names_line_column_and_problem():
    msg = error(GOOD.replace("  - kind: osken", "  - kind: osken\n kind: x"))
    assert msg.startswith("exp.yaml:4:2: not valid YAML: ")


def test_tab_indentation_is_explained():
    assert "not tabs" in error("name: t\ncontrollers:\n\t- kind: osken\n")


@pytest.mark.parametrize("value, tag", [
    ("!!python/object/apply:os.system ['true']", "!!python/object/apply:os.system"),
    ("!foo bar", "!foo"), ("!!binary aGVsbG8=", "!!binary"), ("!!set {a, b}", "!!set"),
    ("!!timestamp 2001-12-14", "!!timestamp"), ("!!int 5", "!!int"),
])
def test_yaml_tags_are_refused_with_line_and_key(value, tag):
    msg = error(GOOD.replace("hosts: 3", f"hosts: {value}"))
    assert msg.startswith("exp.yaml:6:12: topologies[0].hosts: ")
    assert f"YAML tag {tag} is not accepted" in msg


def test_str_tag_keeps_a_value_text():
    assert parse(GOOD.replace("name: t", "name: !!str 1.5")).name == "1.5"


@pytest.mark.parametrize("key, words", [
    ("[a, b]", "a list used as a key"), ("{a: 1}", "a mapping used as a key"), ("~", "an empty (null) key"),
    ("1", "1 is a number used as a key"), ("1.5", "1.5 is a number used as a key"),
    ("true", "true is a boolean used as a key"), ("<<", "merge keys (<<) are not supported"),
    ("k" * 300, "a key of 300 characters"),
])
def test_keys_must_be_names(key, words):
    msg = error(GOOD.replace("    hosts: 3", f"    {key}: 3"))
    assert msg.startswith("exp.yaml:6:5: topologies[0]: ") and words in msg


def test_alias_key_and_undefined_alias():
    assert "an alias (*x) used as a key" in error(GOOD + "x: &x a\n*x : 1\n")
    msg = error(GOOD.replace("hosts: 3", "hosts: *nowhere"))
    assert msg.startswith("exp.yaml:6:12: topologies[0].hosts: alias *nowhere has no anchor")


def test_aliases_may_reuse_a_value():
    text = GOOD.replace("    flows:\n", "    flows: &flows\n") + "  - name: again\n    flows: *flows\n"
    exp = parse(text)
    assert exp.workloads[1]["flows"] == exp.workloads[0]["flows"]


def test_alias_bomb_is_refused():
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]" for k in range(1, 10)]
    msg = error("\n".join(lines) + "\n" + GOOD)
    assert f"expands the file past {MAX_NODES:,} values" in msg and msg.startswith("exp.yaml:5:")


def test_recursive_and_redefined_anchors_are_refused():
    assert "refers to a value that contains it" in error(GOOD + "x: &x [*x]\n")
    assert "anchor &x is defined twice" in error(GOOD + "x: &x 1\ny: &x 2\n")


def test_deep_nesting_is_refused_quickly():
    msg = error(GOOD.replace("hosts: 3", "hosts: " + "[" * 1_000_000))
    assert f"nested more than {MAX_DEPTH} levels deep" in msg and msg.startswith("exp.yaml:6:")


def test_second_document_is_refused():
    assert "exp.yaml:11:1: a second YAML document" in error(GOOD + "---\nname: u\n")


def test_control_characters_in_text_and_escapes():
    assert error(GOOD.replace("name: t", "name: t\x00")).startswith("exp.yaml:1:8: control character U+0000")
    msg = error(GOOD.replace("name: t", 'name: "a\\x1bb"'))
    assert msg.startswith("exp.yaml:1:7: name: a control character")


def test_not_utf8_names_line_and_column(tmp_path):
    f = tmp_path / "e.yaml"
    f.write_bytes(GOOD.replace("name: t", "name: caf\xe9").encode("latin-1"))
    with pytest.raises(ConfigError, match=r"e\.yaml:1:10: not UTF-8 text: byte 0xe9"):
        load_experiment(f)


def test_large_files_and_devices_are_refused(tmp_path):
    f = tmp_path / "big.yaml"
    f.write_text(GOOD + "description: " + "x" * MAX_FILE_BYTES + "\n")
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        load_experiment(f)
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        load_experiment("/dev/zero")
    with pytest.raises(ConfigError, match="cannot read the experiment file: Is a directory"):
        load_experiment(tmp_path)


def test_byte_order_mark_is_ignored(tmp_path):
    f = tmp_path / "e.yaml"
    f.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert load_experiment(f).name == "t"


@pytest.mark.parametrize("value, got", [
    (".nan", "got nan"), (".inf", "got inf"), ("1.0e+309", "got inf"), ("9" * 5000, "(5,000 characters)"),
    ("0b_", "got str '0b_'"), ("2001-13-45", "got str '2001-13-45'"),
])
def test_odd_numbers_are_clean_errors(value, got):
    msg = error(GOOD.replace("rate_pps: 100", f"rate_pps: {value}"))
    assert msg.startswith("exp.yaml:10: workloads[0].flows[0].rate_pps: expected") and got in msg
    assert len(msg) < 300


def test_dates_are_text():
    assert parse(GOOD.replace("name: t", "name: 2024-01-05")).name == "2024-01-05"


def test_duplicate_keys_in_free_mappings():
    msg = error(GOOD.replace("  - kind: osken", "  - kind: osken\n    options: {a: 1, a: 2}"))
    assert "exp.yaml:4: controllers[0].options.a: key given twice" in msg
    msg = error(GOOD.replace("duration_s: 2}", "duration_s: 2}\n    sweep: {size_bytes: [1], size_bytes: [2]}"))
    assert "workloads[0].sweep.size_bytes: key given twice" in msg


def test_tag_key_given_a_list():
    msg = error(GOOD.replace("kind: single", "kind: [single]"))
    assert "exp.yaml:5: topologies[0].kind: expected one of single" in msg and "got a list" in msg


@pytest.mark.parametrize("name, words", [("a/b", "holds a slash"), ("..", "expected a name"),
                                         ("x" * 101, "at most 100")])
def test_names_become_file_names(name, words):
    assert words in error(GOOD.replace("name: cbr", f"name: '{name}'"))


def test_sweep_and_trial_grid_are_bounded():
    values = "[" + ", ".join(map(str, range(1, 201))) + "]"
    msg = error(GOOD + f"    sweep: {{size_bytes: {values}, count: {values}}}\n")
    assert msg.startswith("exp.yaml:11: workloads[0].sweep: 200 x 200 = 40,000 combinations; at most 10,000")
    exp = parse(GOOD.replace("name: t", "name: t\nrepetitions: 1000") + f"    sweep: {{count: {values}}}\n")
    with pytest.raises(ConfigError) as info:
        expand(exp)
    msg = str(info.value)
    assert msg.startswith("exp.yaml:12: workloads[0].sweep: the experiment expands to 200,000 trials")
    assert f"at most {MAX_TRIALS:,}" in msg
    flows = "    flows: [" + ", ".join(["{count: 1}"] * 100) + "]\n"
    text = GOOD.replace("    flows:\n      - {rate_pps: 100, duration_s: 2}\n", flows)
    exp = parse(text.replace("name: t", "name: t\nrepetitions: 1000") + "    sweep: {size_bytes: [1, 2, 3]}\n")
    with pytest.raises(ConfigError, match=f"exp.yaml:11: workloads.0..sweep: the experiment has more than "
                                          f"{MAX_FLOW_RUNS:,} flows"):
        expand(exp)


def test_plan_errors_name_the_flow():
    with pytest.raises(ConfigError, match=r"^exp\.yaml:10: workloads\[0\]\.flows\[0\]\.dst: flow 0 on topology "
                                          r"'single-3': no host 'h9'; hosts are h1, h2, h3$"):
        expand(parse(GOOD.replace("{rate_pps", "{dst: h9, rate_pps")))
    with pytest.raises(ConfigError, match=r"^exp\.yaml:10: workloads\[0\]\.flows\[0\]: .* both h1"):
        expand(parse(GOOD.replace("{rate_pps", "{dst: first, rate_pps")))


@pytest.mark.parametrize("flow, key, words", [
    ("{rate_pps: 1.0e+8, duration_s: 2}", "rate_pps", "expected a number > 0 and <= 10,000,000, got 100,000,000"),
    ("{rate_bps: 1.0e+12, duration_s: 2}", "rate_bps", "<= 100,000,000,000"),
    ("{rate_pps: 1, duration_s: 100000}", "duration_s", "<= 86,400, got 100,000"),
    ("{count: 99999999999999999999}", "count", "from 1 to 10,000,000,000"),
    ("{count: 1, size_bytes: 65508}", "size_bytes", "from 1 to 65,507"),
    ("{proto: tcp, volume_bytes: 99999999999999999}", "volume_bytes", "from 1 to 10,000,000,000,000"),
])
def test_flow_values_are_bounded(flow, key, words):
    msg = error(GOOD.replace("{rate_pps: 100, duration_s: 2}", flow))
    assert msg.startswith(f"exp.yaml:10: workloads[0].flows[0].{key}: ") and words in msg


def test_lists_and_top_level_sizes_are_bounded():
    msg = error(GOOD.replace("name: t", "name: t\nrepetitions: 1001"))
    assert "exp.yaml:2: repetitions: expected an integer from 1 to 1,000, got 1,001" in msg
    msg = error(GOOD.replace("controllers:\n  - kind: osken",
                             "controllers: [" + ", ".join(f"{{kind: none, label: c{i}}}" for i in range(65)) + "]"))
    assert "exp.yaml:2: controllers: 65 items; at most 64 (each is a column and a process)" in msg
    flows = "    flows: [" + ", ".join(["{count: 1}"] * 1001) + "]\n"
    msg = error(GOOD.replace("    flows:\n      - {rate_pps: 100, duration_s: 2}\n", flows))
    assert "workloads[0].flows: 1,001 items; at most 1,000 (each is a sender and a receiver process)" in msg


NBI = """\
name: n
controllers: [{kind: ryu, rest_port: 8080}]
topologies: [{kind: linear, switches: 3}]
workloads:
  - name: api
    type: nbi
    stages: ["const:100rps:10s"]
"""


@pytest.mark.parametrize("stage, words", [
    ("ramp:0rps:99999999999999999999rps:60s", "a rate of 100,000,000,000,000,000,000 requests/s; at most 1,000,000"),
    ("ramp:0rps:" + "9" * 400 + "rps:1s", "a rate of inf requests/s"),
    ("const:1000rps:99999999999h", "a stage lasts at most 86,400 s"),
    ("step:0rps:1000krps:0.001rps:1s", "1,000,000,001 steps; at most 10,000"),
])
def test_stages_are_bounded(stage, words):
    msg = error(NBI.replace("const:100rps:10s", stage))
    assert msg.startswith("exp.yaml:7: workloads[0].stages[0]: ") and words in msg and len(msg) < 300


@pytest.mark.parametrize("extra, key, words", [
    ("max_in_flight: 100000", "max_in_flight", "from 1 to 65,535"),
    ("attack_duration_s: .inf", "attack_duration_s", "expected a finite number"),
    ("overload: {multiple: 1000}", "overload.multiple", "<= 100"),
    ("dos: {kind: syn, rate_pps: 1.0e+9}", "dos.rate_pps", "<= 10,000,000"),
    ("dos: {kind: syn, size_bytes: 70000}", "dos.size_bytes", "from 1 to 65,507"),
])
def test_northbound_values_are_bounded(extra, key, words):
    msg = error(NBI + f"    {extra}\n")
    assert msg.startswith(f"exp.yaml:8: workloads[0].{key}: ") and words in msg


def test_southbound_values_follow_the_generator():
    sbi = "name: s\ncontrollers: [{kind: osken}]\nworkloads:\n  - {name: sb, type: sbi, %s}\n"
    assert "workloads[0].switches: expected an integer from 1 to 65,535" in error(sbi % "switches: 70000")
    assert "from 1 to 16,777,214" in error(sbi % "macs_per_switch: 16777215")
    assert "workloads[0].ms_per_loop: expected an integer from 10 to 600,000, got 5" in error(sbi % "ms_per_loop: 5")
    msg = error(sbi % "loops: 2, warmup_loops: 2")
    assert "exp.yaml:4: workloads[0].warmup_loops: 2 warm-up loops leave none of 2 loops measured" in msg


def test_topology_builder_errors_name_the_topology(tmp_path):
    (tmp_path / "net.graphml").write_text("not xml")
    exp = parse_experiment(GOOD.replace("kind: single\n    hosts: 3", "kind: graphml\n    path: net.graphml"),
                           tmp_path / "exp.yaml")
    with pytest.raises(ConfigError, match=r"exp\.yaml:5: topologies\[0\]: .*net\.graphml is not a GraphML file"):
        expand(exp)


def test_flow_options_are_small():
    big = GOOD.replace("{rate_pps: 100, duration_s: 2}", "{rate_pps: 100, duration_s: 2, options: {a: &a [1, 2, 3]"
                       + ", b: *a" * 40 + "}}")
    assert "exp.yaml:10: workloads[0].flows[0].options: more than 100 values" in error(big)
