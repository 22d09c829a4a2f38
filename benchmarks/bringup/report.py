"""The bring-up benchmark's results: results.json (every row) and results.md (tools side by side)."""

from __future__ import annotations

import json
import time
from pathlib import Path

COLUMNS = ("started_s", "connected_s", "checked_s", "teardown_s")


def _key(row: dict) -> tuple:
    return row["shape"], row["switches"], row["controller"], row["tool"]


def merge(old: list[dict], new: list[dict]) -> list[dict]:
    """old rows with those measured again replaced by new ones."""
    fresh = {_key(r) for r in new}
    return [r for r in old if _key(r) not in fresh] + new


def _cell(row: dict | None, col: str) -> str:
    if row is None:
        return "–"
    if row["exit"] == "timeout" and row.get(col) is None:
        return f"> {row['total_s']:.0f} (timeout)" if col == "total_s" else "–"
    value = row.get(col)
    if value is not None and col == "checked_s" and row.get("unreachable"):
        return f"{value:.1f}, no answer"   # the check's timeout ran out
    return "–" if value is None else f"{value:.1f}"


def table(rows: list[dict]) -> str:
    """Markdown: one line per topology and controller, each tool's phases, and the ratios to mn."""
    tools = sorted({r["tool"] for r in rows}, key=lambda t: (t == "mn", t))
    head = ["topology", "switches", "controller"]
    for tool in tools:
        head += [f"{tool} {c.removesuffix('_s').replace('checked', 'ready')} (s)" for c in COLUMNS]
    others = [t for t in tools if t != "mn"]
    head += [f"{t}/mn ready" for t in others] + [f"{t}/mn total" for t in others]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    groups = sorted({(r["shape"], r["switches"], r["controller"]) for r in rows})
    by = {_key(r): r for r in rows}
    for shape, n, ctl in groups:
        cells = [shape, str(n), ctl]
        for tool in tools:
            cells += [_cell(by.get((shape, n, ctl, tool)), c) for c in COLUMNS]
        mn = by.get((shape, n, ctl, "mn"))
        for col in ("checked_s", "total_s"):
            for tool in others:
                mine = by.get((shape, n, ctl, tool))
                ok = mine and mn and mine.get(col) and mn.get(col) and mn["exit"] == 0 and not mine.get("unreachable")
                cells.append(f"{mine[col] / mn[col]:.2f}" if ok else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def notes(rows: list[dict]) -> str:
    """Rows that did not end cleanly, and the load average before each measurement."""
    out = []
    for r in rows:
        what = f"{r['tool']} {r['shape']} {r['switches']} {r['controller']}"
        if r["exit"] != 0:
            tail = " / ".join(line[:60] for line in r.get("tail") or [])
            out.append(f"- {what}: exit {r['exit']}; last lines: {tail}")
        if r.get("unreachable"):
            out.append(f"- {what}: the ends did not answer within the check's timeout (ready = when it gave up)")
        if r.get("leftovers_removed"):
            out.append(f"- {what}: {r['leftovers_removed']} leftover bridges/interfaces removed after it")
    loads = [r["load1_before"] for r in rows]
    out.append(f"- load average (1 min) before each measurement: {min(loads):.2f}–{max(loads):.2f}")
    return "\n".join(out)


def write(here: Path, rows: list[dict], keep: bool) -> None:
    """Write results.json and results.md (with --keep, merged into the rows already there)."""
    path = here / "results.json"
    if keep and path.exists():
        rows = merge(json.loads(path.read_text())["rows"], rows)
    path.write_text(json.dumps({"written": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows}, indent=1) + "\n")
    (here / "results.md").write_text(
        "# Bring-up at scale: sdnbench and `mn`\n\n"
        "Seconds from process spawn (`benchmarks/bringup/run.py`; what each phase includes is in its docstring). "
        "ready = built, started, connected and first host <-> last host answered.\n\n"
        + table(rows) + "\n\n" + notes(rows) + "\n")
