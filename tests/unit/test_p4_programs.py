"""The shipped P4 programs: bmv2 JSON well formed, p4info and JSON agree, ids as p4c assigns them."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from sdnbench.p4.programs import PROGRAMS, program, read_p4info

TOP_LEVEL = ("header_types", "headers", "header_stacks", "parsers", "deparsers", "meter_arrays", "counter_arrays",
             "register_arrays", "calculations", "learn_lists", "actions", "pipelines", "checksums", "field_lists",
             "extern_instances", "field_aliases", "errors", "enums", "program", "__meta__")
PREFIXES = {"tables": 0x02, "actions": 0x01, "counters": 0x12, "controller_packet_metadata": 0x04}
PRIMITIVES = {"assign", "mark_to_drop", "count", "add_header", "remove_header"}


def jenkins(name: str) -> int:
    """p4c's name hash (control-plane/p4RuntimeSymbolTable.cpp)."""
    h = 0
    for byte in name.encode():
        h = (h + byte) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    return (h + (h << 15)) & 0xFFFFFFFF


def bmv2(name):
    return json.loads(program(name).device_config)


def field_widths(doc) -> dict[tuple[str, str], int]:
    """(header instance, field) -> bit width."""
    types = {t["name"]: t for t in doc["header_types"]}
    return {(h["name"], f[0]): f[1] for h in doc["headers"] for f in types[h["header_type"]]["fields"]}


@pytest.mark.parametrize("name", PROGRAMS)
def test_json_structure(name):
    doc = bmv2(name)
    for key in TOP_LEVEL:
        assert key in doc, key
    assert doc["__meta__"]["version"] == [2, 23]
    assert "not produced by p4c" in doc["__meta__"]["compiler"]
    assert doc["program"] == f"{name}.p4"
    assert [p["name"] for p in doc["pipelines"]] == ["ingress", "egress"]
    assert len(doc["parsers"]) == 1 and len(doc["deparsers"]) == 1
    for kind in ("header_types", "headers", "actions", "counter_arrays"):
        ids = [item["id"] for item in doc[kind]]
        assert len(ids) == len(set(ids)), kind
    nodes = [n for p in doc["pipelines"] for k in ("tables", "conditionals") for n in p[k]]
    for kind in ("tables", "conditionals"):
        ids = [n["id"] for p in doc["pipelines"] for n in p[kind]]
        assert len(ids) == len(set(ids)), kind
    assert len({n["name"] for n in nodes}) == len(nodes)
    types = {t["name"]: t for t in doc["header_types"]}
    for header in doc["headers"]:
        width = sum(f[1] for f in types[header["header_type"]]["fields"])
        assert header["metadata"] or width % 8 == 0, f"{header['name']} is {width} bits, not whole bytes"


@pytest.mark.parametrize("name", PROGRAMS)
def test_json_references_resolve(name):
    """Every name the JSON uses (next nodes, actions, headers, fields, counters, parse states) exists."""
    doc = bmv2(name)
    widths = field_widths(doc)
    headers = {h["name"] for h in doc["headers"]}
    counters = {c["name"] for c in doc["counter_arrays"]}
    actions = {a["id"]: a for a in doc["actions"]}

    def check_value(obj):
        if isinstance(obj, dict):
            kind, value = obj.get("type"), obj.get("value")
            if kind == "field":
                assert value[1] == "$valid$" and value[0] in headers or tuple(value) in widths, value
            elif kind == "header" or kind == "regular":
                assert value in headers, value
            elif kind == "counter_array":
                assert value in counters, value
            for item in obj.values():
                check_value(item)
        elif isinstance(obj, list):
            for item in obj:
                check_value(item)

    for action in doc["actions"]:
        for primitive in action["primitives"]:
            assert primitive["op"] in PRIMITIVES, primitive["op"]
            for parameter in primitive["parameters"]:
                if parameter["type"] == "runtime_data":
                    assert parameter["value"] < len(action["runtime_data"])
            check_value(primitive["parameters"])
    for pipeline in doc["pipelines"]:
        names = {n["name"] for k in ("tables", "conditionals") for n in pipeline[k]}
        assert pipeline["init_table"] in names
        for table in pipeline["tables"]:
            assert [actions[i]["name"] for i in table["action_ids"]] == table["actions"]
            assert table["default_entry"]["action_id"] in table["action_ids"]
            assert set(table["next_tables"]) == set(table["actions"])
            for nxt in [table["base_default_next"], *table["next_tables"].values()]:
                assert nxt is None or nxt in names, nxt
            for key in table["key"]:
                assert tuple(key["target"]) in widths
        for cond in pipeline["conditionals"]:
            assert {cond["true_next"], cond["false_next"]} <= names | {None}
            check_value(cond["expression"])
    states = {s["name"] for p in doc["parsers"] for s in p["parse_states"]}
    for parser in doc["parsers"]:
        assert parser["init_state"] in states
        for state in parser["parse_states"]:
            check_value(state["parser_ops"])
            check_value(state["transition_key"])
            for transition in state["transitions"]:
                assert transition["next_state"] is None or transition["next_state"] in states
    assert set(doc["deparsers"][0]["order"]) <= headers
    for _alias, target in doc["field_aliases"]:
        assert tuple(target) in widths


@pytest.mark.parametrize("name", PROGRAMS)
def test_p4info_matches_json(name):
    """What bmv2 maps by name and bit width: tables, match fields, actions, params, counters, controller headers."""
    prog, doc = program(name), bmv2(name)
    widths = field_widths(doc)
    tables = {t["name"]: t for p in doc["pipelines"] for t in p["tables"]}
    actions = {a["name"]: a for a in doc["actions"]}
    info = prog.p4info
    for table in info.tables:
        assert table.preamble.name in tables, table.preamble.name
        jtable = tables[table.preamble.name]
        assert table.size == jtable["max_size"]
        assert [f.name for f in table.match_fields] == [k["name"] for k in jtable["key"]]
        for field, key in zip(table.match_fields, jtable["key"]):
            assert field.bitwidth == widths[tuple(key["target"])]
            assert key["match_type"] == "exact" and field.match_type == field.EXACT
        refs = {prog.index.by_id(ref.id).preamble.name for ref in table.action_refs}
        assert refs == set(jtable["actions"])
        default = prog.index.by_id(table.initial_default_action.action_id).preamble.name
        assert actions[default]["id"] == jtable["default_entry"]["action_id"]
    for action in info.actions:
        assert action.preamble.name in actions, action.preamble.name
        runtime = actions[action.preamble.name]["runtime_data"]
        assert [(p.name, p.bitwidth) for p in action.params] == [(r["name"], r["bitwidth"]) for r in runtime]
    counters = {c["name"]: c for c in doc["counter_arrays"]}
    for counter in info.counters:
        assert counters[counter.preamble.name]["size"] == counter.size
        assert not counters[counter.preamble.name]["is_direct"]
    types = {t["name"]: t for t in doc["header_types"]}
    instances = {h["name"]: types[h["header_type"]] for h in doc["headers"]}
    for header in info.controller_packet_metadata:
        fields = instances[header.preamble.name]["fields"]
        assert [(m.name, m.bitwidth) for m in header.metadata] == [(f[0], f[1]) for f in fields]
        assert header.preamble.annotations == [f'@controller_header("{header.preamble.name}")']


@pytest.mark.parametrize("name", PROGRAMS)
def test_p4info_ids_as_p4c_assigns_them(name):
    info = program(name).p4info
    seen = set()
    for kind, prefix in PREFIXES.items():
        for entity in getattr(info, kind):
            pre = entity.preamble
            assert pre.id == (prefix << 24) | (jenkins(pre.name) & 0xFFFFFF), pre.name
            assert pre.alias == pre.name.rsplit(".", 1)[-1]
            seen.add(pre.id)
    assert len(seen) == sum(len(getattr(info, kind)) for kind in PREFIXES)
    for table in info.tables:
        assert [f.id for f in table.match_fields] == list(range(1, len(table.match_fields) + 1))
    for action in info.actions:
        assert [p.id for p in action.params] == list(range(1, len(action.params) + 1))


def test_programs_as_the_controller_uses_them():
    l2, fwd = program("l2_learning"), program("forwarding")
    for prog in (l2, fwd):
        assert prog.table_id("dmac") == prog.table_id("MyIngress.dmac")
        assert prog.field_bitwidth("dmac", "hdr.ethernet.dstAddr") == 48
        assert prog.param_bitwidth("forward", "port") == 9
        assert prog.source_path.exists() and prog.json_path.exists() and prog.p4info_path.exists()
        assert prog.counter_id("ingress_port_counter") >> 24 == 0x12
    assert {m.name: m.bitwidth for m in l2.index.metadata("packet_in")}["ingress_port"] == 9
    assert {m.name: m.bitwidth for m in l2.index.metadata("packet_out")}["egress_port"] == 9
    assert not fwd.p4info.controller_packet_metadata
    assert l2.cookie != fwd.cookie


def test_unknown_program():
    with pytest.raises(Exception, match="sdnbench ships l2_learning, forwarding"):
        program("router")


@pytest.mark.skipif(shutil.which("p4c") is None, reason="p4c is not on PATH: the shipped p4info cannot be "
                    "regenerated here (the JSON and p4info were written by the project)")
@pytest.mark.parametrize("name", PROGRAMS)
def test_p4c_regenerates_the_shipped_p4info(name, tmp_path):
    prog = program(name)
    out = tmp_path / f"{name}.p4info.txtpb"
    subprocess.run(["p4c", "--target", "bmv2", "--arch", "v1model", "--p4runtime-files", str(out),
                    "-o", str(tmp_path), str(prog.source_path)], check=True, capture_output=True, timeout=300)
    compiled = read_p4info(out)
    for kind in ("tables", "counters", "controller_packet_metadata"):
        assert sorted(getattr(compiled, kind), key=lambda e: e.preamble.id) == \
            sorted(getattr(prog.p4info, kind), key=lambda e: e.preamble.id), kind
    # Actions only called directly from a control may or may not be listed; those of tables must match.
    table_actions = {ref.id for t in compiled.tables for ref in t.action_refs}
    shipped = {a.preamble.id: a for a in prog.p4info.actions}
    for action in compiled.actions:
        if action.preamble.id in table_actions:
            assert action == shipped[action.preamble.id]
