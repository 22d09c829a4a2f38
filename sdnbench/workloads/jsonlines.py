"""Reading the native tools' output: JSON Lines in sdnbench's envelope.

Every line is `{"type": "interval" | "summary" | "error", "schema": 1, "data": {...}}`
(schemas/*.schema.json); a tool's own event types (sdnbench-ofload's `connected`
and `flow_mod`) are kept in `records`. One reader for all tools, so a malformed line is
reported the same way whichever tool printed it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import ToolError

SCHEMA_VERSION = 1


@dataclass
class ToolOutput:
    """A tool's records split by type, in the order printed."""

    intervals: list[dict] = field(default_factory=list)
    summaries: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)


def read_records(text: str, tool: str) -> list[dict]:
    """Every envelope of the output; ToolError naming the tool and line for anything else."""
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ToolError(f"{tool}: line {n} is not JSON ({exc}): {line[:120]!r}") from None
        if not isinstance(rec, dict) or rec.get("schema") != SCHEMA_VERSION:
            got = rec.get("schema") if isinstance(rec, dict) else type(rec).__name__
            raise ToolError(f"{tool}: line {n} has schema {got!r}, expected {SCHEMA_VERSION}")
        records.append(rec)
    return records


def read_output(text: str, tool: str) -> ToolOutput:
    """Split a tool's output into intervals, summaries and error messages."""
    out = ToolOutput(records=read_records(text, tool))
    for rec in out.records:
        kind, data = rec.get("type"), rec.get("data", {})
        if kind == "interval":
            out.intervals.append(data)
        elif kind == "summary":
            out.summaries.append(data)
        elif kind == "error":
            out.errors.append(str(data.get("message", data)))
    return out
