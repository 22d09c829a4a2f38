"""The stress outcome table: per controller, what overload, DoS and DDoS did to its API.

Each stress phase of a northbound workload is labelled against the load phase
of the same repetition (sdnbench.analysis.stress: CF, PF, SDT, DT, HRT) from
the stored per-second series; repetitions that disagree are shown with counts.
"""

from __future__ import annotations

import json
from collections import Counter

from ..results.store import ResultStore
from ..runner.plan import trial_key

SCENARIOS = ("overload", "dos", "ddos")
TITLES = {"overload": "API overload", "dos": "DoS", "ddos": "DDoS"}


def stress_outcomes(store: ResultStore) -> dict[tuple[str, str], dict[str, dict[str, list]]]:
    """(topology, workload) -> controller -> scenario -> [StressOutcome per repetition]."""
    out: dict[tuple[str, str], dict[str, dict[str, list]]] = {}
    stressed = [t for t in store.trials() if t.status == "ok" and t.params.get("phase") in SCENARIOS]
    if not stressed:
        return out
    from ..workloads.nbi import parse_output
    from .stress import Baseline, classify

    for t in stressed:
        phase = t.params["phase"]
        load_raw = store.raw(trial_key(t.controller, t.topology, t.workload, {"phase": "load"}, t.repetition))
        raw = store.raw(t.key)
        if "nbi.summary.json" not in load_raw or "nbi.jsonl" not in raw:
            continue
        rows, summary = parse_output(raw["nbi.jsonl"])
        outcome = classify(rows, Baseline.from_summary(json.loads(load_raw["nbi.summary.json"])), summary=summary)
        out.setdefault((t.topology, t.workload), {}).setdefault(t.controller, {}).setdefault(phase, []).append(outcome)
    return out


def _cell(outcomes: list) -> str:
    texts = Counter(o.text() for o in outcomes)
    if len(texts) == 1:
        return next(iter(texts))
    return " / ".join(f"{text} ({n}/{len(outcomes)})" for text, n in texts.most_common())


def stress_tables(store: ResultStore) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, body rows) of each topology x workload with stress phases (text and HTML reports)."""
    tables = []
    for (topology, workload), by_ctrl in stress_outcomes(store).items():
        header = ["controller"] + [TITLES[s] for s in SCENARIOS]
        body = [[ctrl] + [_cell(by_ctrl[ctrl].get(s, [])) if by_ctrl[ctrl].get(s) else "-" for s in SCENARIOS]
                for ctrl in by_ctrl]
        tables.append((f"stress outcomes — {workload} on {topology} (against the load phase of each repetition)",
                       header, body))
    return tables


def legend() -> str:
    """What the outcome codes mean."""
    from .stress import NAMES

    return "; ".join(f"{k} {v}" for k, v in NAMES.items()) + "; thresholds in docs/attacks.md"


def render_stress(store: ResultStore) -> str:
    """Text tables of stress outcomes (empty when the run has no stress phases)."""
    blocks = []
    from .table import text_table

    for title, header, body in stress_tables(store):
        blocks.append("\n".join([title, *text_table(header, body), legend()]))
    return "\n\n".join(blocks)
