"""The experiment format as Markdown, generated from the schema (docs/experiment-format.md)."""

from __future__ import annotations

from ..workloads.types import WORKLOAD_TYPES
from .fields import REQUIRED, ListOf, Record, Tagged, Type
from .schema import CONTROLLER, EXPERIMENT, LINK, NETWORK, TOPOLOGY


def _type_name(t: Type) -> str:
    js = t.jsonschema()
    if isinstance(t, ListOf):
        return f"list of {_type_name(t.item)}"
    if isinstance(t, Record):
        return t.name
    if isinstance(t, Tagged):
        return "topology" if t.tag == "kind" else "workload"
    if "enum" in js:
        return " \\| ".join(f"`{v}`" for v in js["enum"])
    return js.get("type", "any")


def _table(record: Record) -> list[str]:
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, f in record.fields.items():
        default = "**required**" if f.default is REQUIRED else ("—" if f.default in (None, {}, "") else f"`{f.default}`")
        lines.append(f"| `{key}` | {_type_name(f.type)} | {default} | {f.doc} |")
    return lines


def markdown_reference() -> str:
    """The whole reference."""
    out = ["# Experiment file format", "",
           "Generated from `sdnbench/config/schema.py` by `make schema`; the same definitions",
           "validate files (`sdnbench check`) and produce `schemas/experiment.schema.json`.",
           "Unknown keys are errors. Units are part of key names (`_ms`, `_pps`, `_mbps`).", ""]
    sections = [("Experiment (top level)", EXPERIMENT), ("controllers[]", CONTROLLER), ("network", NETWORK),
                ("link, edge_link, core_link", LINK)]
    for name, wtype in WORKLOAD_TYPES.items():
        sections.append((f"workloads[] (type: {name})", wtype.record))
        sections += list(wtype.doc_records)
    for title, record in sections:
        out += [f"## {title}", ""]
        if record.doc:
            out += [record.doc, ""]
        out += _table(record) + [""]
    out += ["## topologies[]", "", "Each topology names its builder with `kind`.", ""]
    for kind, record in TOPOLOGY.variants.items():
        out += [f"### kind: {kind}", "", record.doc, ""] + _table(record) + [""]
    out += ["## workloads[].sweep", "",
            "A mapping of fields to lists of values; every combination is a trial row."]
    out += [t.sweep_doc for t in WORKLOAD_TYPES.values() if t.sweep_doc] + [""]
    return "\n".join(out)
