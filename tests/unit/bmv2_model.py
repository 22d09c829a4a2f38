"""A model of bmv2 simple_switch for the JSON subset sdnbench's programs use, to test them without bmv2.

It follows behavioral-model's docs/JSON_format.md and simple_switch's v1model
behaviour: parse, ingress, multicast replication or unicast, egress, deparse;
P4Runtime entities are mapped to JSON names by the p4info, as bmv2's server does.
"""

from __future__ import annotations

import copy
import json

DROP_PORT = 511


class Bmv2Model:
    """One switch: a program's JSON, its p4info, table entries, multicast groups and counters."""

    def __init__(self, program, cpu_port: int = 255):
        self.doc = json.loads(program.device_config)
        self.index, self.cpu_port = program.index, cpu_port
        types = {t["name"]: t["fields"] for t in self.doc["header_types"]}
        self.fields = {h["name"]: [(f[0], f[1]) for f in types[h["header_type"]]] for h in self.doc["headers"]}
        self.metadata = {h["name"] for h in self.doc["headers"] if h["metadata"]}
        self.actions = {a["id"]: a for a in self.doc["actions"]}
        self.entries: dict[str, dict[tuple, tuple[str, list[int]]]] = {}
        self.defaults: dict[str, tuple[str, list[int]]] = {}
        self.groups: dict[int, list[int]] = {}
        self.counters = {c["name"]: {} for c in self.doc["counter_arrays"]}

    # -- control plane (what bmv2's P4Runtime server does with a Write) ---------------------

    def apply(self, update) -> None:
        """Apply one P4Runtime Update (table entry or multicast group)."""
        entity = update.entity
        if entity.HasField("packet_replication_engine_entry"):
            group = entity.packet_replication_engine_entry.multicast_group_entry
            self.groups[group.multicast_group_id] = [r.egress_port for r in group.replicas]
            return
        entry = entity.table_entry
        table = self.index.by_id(entry.table_id).preamble.name
        key = tuple(int.from_bytes(m.exact.value, "big") for m in entry.match)
        if update.type == update.DELETE:
            del self.entries[table][key]
            return
        action = self.index.by_id(entry.action.action.action_id).preamble.name
        args = [int.from_bytes(p.value, "big") for p in sorted(entry.action.action.params, key=lambda p: p.param_id)]
        if entry.is_default_action:
            self.defaults[table] = (action, args)
        else:
            self.entries.setdefault(table, {})[key] = (action, args)

    # -- data plane ----------------------------------------------------------------------

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """(egress port, bytes) of every packet that leaves for one that comes in on `port`."""
        phv = {h: {f: 0 for f, _ in fs} for h, fs in self.fields.items()}
        valid = set(self.metadata)
        phv["standard_metadata"]["ingress_port"] = port
        phv["standard_metadata"]["packet_length"] = len(data)
        payload = self._parse(phv, valid, data)
        self._run(self.doc["pipelines"][0], phv, valid)
        meta = phv["standard_metadata"]
        if meta["mcast_grp"]:
            ports = self.groups.get(meta["mcast_grp"], [])
        elif meta["egress_spec"] == DROP_PORT:
            ports = []
        else:
            ports = [meta["egress_spec"]]
        out = []
        for egress_port in ports:
            copy_phv, copy_valid = copy.deepcopy(phv), set(valid)
            copy_phv["standard_metadata"]["egress_port"] = egress_port
            copy_phv["standard_metadata"]["egress_spec"] = 0
            self._run(self.doc["pipelines"][1], copy_phv, copy_valid)
            if copy_phv["standard_metadata"]["egress_spec"] != DROP_PORT:
                out.append((egress_port, self._deparse(copy_phv, copy_valid) + payload))
        return out

    def _parse(self, phv, valid, data: bytes) -> bytes:
        parser = self.doc["parsers"][0]
        states = {s["name"]: s for s in parser["parse_states"]}
        state, offset = states[parser["init_state"]], 0
        while state is not None:
            for op in state["parser_ops"]:
                assert op["op"] == "extract"
                header = op["parameters"][0]["value"]
                offset = self._extract(phv, header, data, offset)
                valid.add(header)
            key = b"".join(self._value(k, phv, valid).to_bytes((self._width(k) + 7) // 8, "big")
                           for k in state["transition_key"])
            nxt = None
            for transition in state["transitions"]:
                if transition["type"] == "default" or bytes.fromhex(transition["value"][2:]) == key:
                    nxt = transition["next_state"]
                    break
            state = states[nxt] if nxt else None
        return data[offset:]

    def _extract(self, phv, header, data, offset) -> int:
        width = sum(w for _, w in self.fields[header])
        bits = int.from_bytes(data[offset:offset + width // 8], "big")
        shift = width
        for name, w in self.fields[header]:
            shift -= w
            phv[header][name] = (bits >> shift) & ((1 << w) - 1)
        return offset + width // 8

    def _deparse(self, phv, valid) -> bytes:
        out = b""
        for header in self.doc["deparsers"][0]["order"]:
            if header in valid:
                bits, width = 0, 0
                for name, w in self.fields[header]:
                    bits, width = (bits << w) | phv[header][name], width + w
                out += bits.to_bytes(width // 8, "big")
        return out

    def _width(self, ref) -> int:
        header, name = ref["value"]
        return dict(self.fields[header])[name]

    def _run(self, pipeline, phv, valid) -> None:
        nodes = {n["name"]: n for kind in ("tables", "conditionals") for n in pipeline[kind]}
        name = pipeline["init_table"]
        while name is not None:
            node = nodes[name]
            if "expression" in node:
                name = node["true_next"] if self._value(node["expression"], phv, valid) else node["false_next"]
                continue
            key = tuple(phv[k["target"][0]][k["target"][1]] for k in node["key"])
            hit = self.entries.get(node["name"], {}).get(key) if node["key"] else None
            if hit is None:
                default = node["default_entry"]
                hit = self.defaults.get(node["name"]) or (
                    self.actions[default["action_id"]]["name"], [int(v, 16) for v in default["action_data"]])
            action = next(a for a in self.actions.values() if a["name"] == hit[0])
            self._execute(action, hit[1], phv, valid)
            name = node["next_tables"].get(hit[0], node["base_default_next"])

    def _execute(self, action, args, phv, valid) -> None:
        for primitive in action["primitives"]:
            op, params = primitive["op"], primitive["parameters"]
            if op == "assign":
                header, name = params[0]["value"]
                phv[header][name] = self._value(params[1], phv, valid, args) & ((1 << self._width(params[0])) - 1)
            elif op == "mark_to_drop":
                phv["standard_metadata"]["egress_spec"] = DROP_PORT
                phv["standard_metadata"]["mcast_grp"] = 0
            elif op == "count":
                cells = self.counters[params[0]["value"]]
                index = self._value(params[1], phv, valid, args)
                packets, octets = cells.get(index, (0, 0))
                cells[index] = (packets + 1, octets + phv["standard_metadata"]["packet_length"])
            elif op == "add_header":
                header = params[0]["value"]
                if header not in valid:
                    phv[header] = {f: 0 for f, _ in self.fields[header]}
                    valid.add(header)
            elif op == "remove_header":
                valid.discard(params[0]["value"])
            else:
                raise AssertionError(f"primitive {op} is not modelled")

    def _value(self, ref, phv, valid, args=()):
        kind, value = ref["type"], ref["value"]
        if kind == "field":
            return int(value[0] in valid) if value[1] == "$valid$" else phv[value[0]][value[1]]
        if kind == "hexstr":
            return int(value, 16)
        if kind == "runtime_data":
            return args[value]
        if kind == "bool":
            return bool(value)
        assert kind == "expression", kind
        expr = value if "op" in value else value["value"]
        left = None if expr["left"] is None else self._value(expr["left"], phv, valid, args)
        right = self._value(expr["right"], phv, valid, args)
        ops = {"d2b": lambda: bool(right), "b2d": lambda: int(right), "==": lambda: left == right,
               "!=": lambda: left != right, "&": lambda: left & right, "not": lambda: not right}
        return ops[expr["op"]]()
