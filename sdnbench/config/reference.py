"""The experiment format as Markdown, generated from the schema (docs/experiment-format.md)."""

from __future__ import annotations

from ..faults import FAULT
from ..media import MEDIA
from ..topology.kind import MAX_HOSTS, MAX_SWITCHES
from ..workloads.types import WORKLOAD_TYPES
from . import limits, source
from .fields import MAX_NAME_CHARS, REQUIRED, ListOf, Mapping, Number, Record, Tagged, Type
from .sweep import MAX_SWEEP_POINTS
from .cluster import CLUSTER
from .schema import CONTROLLER, EXPERIMENT, LINK, NETWORK, TOPOLOGY


def _type_name(t: Type) -> str:
    js = t.jsonschema()
    if isinstance(t, ListOf):
        most = f" (at most {t.max_items:,})" if t.max_items is not None else ""
        return f"list of {_type_name(t.item)}{most}"
    if isinstance(t, Number):
        return t.expected().removeprefix("an ").removeprefix("a ")
    if isinstance(t, Record):
        return t.name
    if isinstance(t, Mapping):
        return f"mapping of names to {_type_name(t.value)}"
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


def _nested(title: str, record: Record) -> list[tuple[str, Record]]:
    """A record's section, then one for each record inside it (a mapping's or list's items)."""
    out = [(title, record)]
    for key, f in record.fields.items():
        inner = f.type.value if isinstance(f.type, Mapping) else f.type.item if isinstance(f.type, ListOf) else f.type
        if isinstance(inner, Record):
            suffix = ".NAME" if isinstance(f.type, Mapping) else "[]" if isinstance(f.type, ListOf) else ""
            out += _nested(f"{title.split(',')[0]}.{key}{suffix}", inner)
    return out


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
    sections.append(("workloads[].faults[]", FAULT))
    for name, medium in MEDIA.items():
        if medium.record:
            sections += _nested(f"network.{name}, topologies[].{name}", medium.record)
    sections += _nested("cluster", CLUSTER)
    for title, record in sections:
        out += [f"## {title}", ""]
        if record.doc:
            out += [record.doc, ""]
        out += _table(record) + [""]
    out += ["## topologies[]", "", "Each topology names its builder with `kind`.", ""]
    for kind, record in TOPOLOGY.variants.items():
        out += [f"### kind: {kind}", "", record.doc, ""] + _table(record) + [""]
    out += ["## workloads[].sweep", "",
            f"A mapping of fields to lists of values; every combination is a trial row "
            f"(at most {MAX_SWEEP_POINTS:,} combinations)."]
    out += [t.sweep_doc for t in WORKLOAD_TYPES.values() if t.sweep_doc] + [""]
    return "\n".join(out + _limits())


def _limits() -> list[str]:
    """The bounds of a whole file, which no single key shows."""
    return ["## Limits", "",
            "Bounds turn a typo into an error naming its line, well above what published studies use;",
            "each field's own bounds are in its type above.", "",
            f"- A file is at most {source.MAX_FILE_BYTES >> 20} MiB of UTF-8 text without control characters, "
            f"one YAML document, nested at most {source.MAX_DEPTH} levels, with at most "
            f"{source.MAX_NODES:,} values once aliases are expanded.",
            "- YAML tags are refused except `!!str`; keys are text (not numbers, booleans, null, lists or "
            f"mappings), at most {source.MAX_KEY_CHARS} characters; merge keys (`<<`) are not supported.",
            f"- Names and labels: at most {MAX_NAME_CHARS} characters, no `/` (they become file names).",
            f"- A topology has at most {MAX_SWITCHES:,} switches and {MAX_HOSTS:,} hosts.",
            f"- An experiment expands to at most {limits.MAX_TRIALS:,} trials and "
            f"{limits.MAX_FLOW_RUNS:,} flows over all trials.", ""]
