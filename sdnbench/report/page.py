"""What the HTML report shows besides figures: the run, its tables, marked cells, environment, experiment."""

from __future__ import annotations

import datetime as dt
import json

from ..analysis.table import fmt_cell, shown_metrics
from ..analysis.validity import CellHealth
from ..metrics import describe

#: Environment entries that change with every run without changing what was measured.
NOISY_ENVIRONMENT = ("controller_endpoints", "nbi_url")


def run_facts(store, comparison) -> list[tuple[str, str]]:
    """(what, value) lines about the run as a whole."""
    campaign = store.campaign() or {}
    trials = store.trials()
    ok = sum(t.status == "ok" for t in trials)
    started = [t.started_at for t in trials if t.started_at]
    ended = [t.ended_at for t in trials if t.ended_at]
    facts = [("experiment", campaign.get("name", "?")), ("file", campaign.get("experiment_path") or "?"),
             ("sdnbench", campaign.get("version", "?")),
             ("trials", f"{len(trials)} ({ok} ok, {len(trials) - ok} failed)"),
             ("controllers", ", ".join(comparison[1]))]
    if started and ended:
        start = dt.datetime.fromtimestamp(min(started)).isoformat(sep=" ", timespec="seconds")
        facts.append(("measured", f"{start}, {(max(ended) - min(started)) / 60:.1f} min"))
    return facts


def environment(store) -> list[tuple[str, list[str]]]:
    """(key, distinct values) of the trials' environment fingerprints, in the order first met."""
    values: dict[str, list[str]] = {}
    for t in store.trials():
        for key, value in (t.environment or {}).items():
            if key in NOISY_ENVIRONMENT:
                continue
            text = " ".join(map(str, value)) if isinstance(value, list) else (
                value if isinstance(value, str) else json.dumps(value))
            seen = values.setdefault(key, [])
            if text not in seen:
                seen.append(text)
    return list(values.items())


def metric_tables(comparison, health: dict[tuple, CellHealth], metrics: list[str] | None) -> list[dict]:
    """The terminal tables as data: per metric, header and rows of (text, reason of a mark or '')."""
    cells, controllers, rows = comparison
    out = []
    for metric in shown_metrics(cells, metrics):
        index = {(c.row, c.controller): c for c in cells if c.metric == metric}
        if not index:
            continue
        info = describe(metric)
        body = []
        for row in rows:
            if not any((row, ctrl) in index for ctrl in controllers):
                continue
            marks = [health.get((row, ctrl)) for ctrl in controllers]
            body.append({"row": list(row), "cells": [
                (fmt_cell(index.get((row, ctrl))), h.text() if h and h.marked else "")
                for ctrl, h in zip(controllers, marks)]})
        out.append({"metric": metric, "unit": info.unit, "description": info.description, "better": info.better,
                    "controllers": controllers, "body": body})
    return out


def marked_cells(health: dict[tuple, CellHealth]) -> list[tuple[str, str, str]]:
    """(row, controller, what went wrong) of every marked cell."""
    return [(" ".join(x for x in row if x and x != "-"), ctrl, h.text())
            for (row, ctrl), h in health.items() if h.marked]
