#!/usr/bin/env python3
"""Soak: many consecutive trials across controllers, topologies and engines, checking for leaks.

After every controller x topology group (each repetition is its own group, so the network and
controller are built and removed every time) it compares the machine with how it was before the
campaign: processes descending from this one, network namespaces, interfaces, OVS bridges and
ports, temporary files, this process's open file descriptors; and it follows this process's
memory. Writes results.csv (one row per group) and results.md (the summary) beside itself, or
into --out. Run as root on a machine where nothing else builds networks meanwhile:

    .venv/bin/python benchmarks/soak/run.py                 # 108 trials, ~8 min on 2 cores
    .venv/bin/python benchmarks/soak/run.py --repetitions 1 --controllers osken,none
Exit code 0 when nothing leaked, 1 otherwise.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sdnbench.config.loader import parse_experiment  # noqa: E402
from sdnbench.leaks import Snapshot  # noqa: E402
from sdnbench.runner.campaign import run_campaign  # noqa: E402

EXPERIMENT = """\
name: soak
repetitions: {reps}
openflow: "1.3"
controllers: [{controllers}]
topologies:
  - {{kind: single, hosts: 3}}
  - {{kind: linear, switches: 3}}
  - {{kind: tree, depth: 2, fanout: 2}}
workloads:
  - name: udp
    flows: [{{proto: udp, rate_pps: 500, size_bytes: 256, duration_s: 1}}]
    sweep: {{engine: [{engines}]}}
restart: per_repetition
cooldown_s: 0
"""


def soak(controllers: list[str], engines: list[str], reps: int, out: Path) -> bool:
    """Run the soak; returns True when nothing leaked."""
    text = EXPERIMENT.format(reps=reps, controllers=", ".join(f"{{kind: {c}}}" for c in controllers),
                             engines=", ".join(engines))
    workdir = Path(tempfile.mkdtemp(prefix="sdnbench-soak-"))
    (workdir / "soak.yaml").write_text(text)
    exp = parse_experiment(text, workdir / "soak.yaml")
    before = Snapshot.take()
    rows: list[dict] = []
    fd_base: list[int] = []
    t0 = time.monotonic()

    def check(group) -> None:
        now = Snapshot.take()
        leaks = now.leaks_since(before)
        leaks["temp_files"] = [f for f in leaks["temp_files"] if not f.startswith("sdnbench-soak-")]
        # The store's database (and its WAL) stays open for the whole campaign: count fds from group 1 on.
        if not fd_base:
            fd_base.append(now.fds)
        leaks["fds"] = [f"{now.fds - fd_base[0]} more open file descriptors"] if now.fds > fd_base[0] else []
        rows.append({"group": len(rows) + 1, "controller": group[0].controller.label, "topology": group[0].topology,
                     "trials": len(group), "elapsed_s": round(time.monotonic() - t0, 1),
                     "rss_mb": round(now.rss_mb, 1), "fds": now.fds,
                     "leaks": "; ".join(f"{k}: {', '.join(v[:5])}" for k, v in leaks.items() if v)})
        print(f"group {len(rows)}: {rows[-1]['controller']} {rows[-1]['topology']}, rss {now.rss_mb:.1f} MB, "
              f"leaks: {rows[-1]['leaks'] or 'none'}", file=sys.stderr, flush=True)

    # On an error the run directory stays: its manifest is what `sdnbench clean` needs.
    store = run_campaign(exp, workdir / "run", progress_out=lambda line: None, after_group=check)
    trials = store.trials()
    store.close()
    shutil.rmtree(workdir, ignore_errors=True)
    failed = [t for t in trials if t.status != "ok"]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    leaky = [r for r in rows if r["leaks"]]
    rss = [r["rss_mb"] for r in rows]
    warm = rss[min(4, len(rss) - 1)]
    summary = [
        "# Soak", "",
        f"Command: `{' '.join(sys.argv)}`", "",
        f"- trials: {len(trials)} ({len(failed)} failed), groups (network + controller built and removed): "
        f"{len(rows)}, wall time {rows[-1]['elapsed_s']:.0f} s",
        f"- groups after which something was left: {len(leaky)}",
        f"- sdnbench's resident memory: {rss[0]:.1f} MB after group 1, {warm:.1f} MB after group "
        f"{min(5, len(rss))}, {rss[-1]:.1f} MB after the last (max {max(rss):.1f} MB)",
        f"- open file descriptors after each group: {min(r['fds'] for r in rows)}–{max(r['fds'] for r in rows)}",
    ]
    summary += [f"- failed trial: {t.controller} {t.topology} {t.params}: {t.error}" for t in failed[:10]]
    summary += [f"- leak after group {r['group']}: {r['leaks']}" for r in leaky[:10]]
    (out / "results.md").write_text("\n".join(summary) + "\n")
    print("\n".join(summary))
    return not leaky and not failed


def main() -> int:
    # A private temporary directory for this process and everything it starts, so the leak check
    # counts exactly the files this run left (other programs keep writing to /tmp).
    os.environ["TMPDIR"] = tempfile.mkdtemp(prefix="sdnbench-soak-tmp-")
    tempfile.tempdir = None
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--controllers", default="osken,ryu,faucet,none", help="comma-separated controller kinds")
    p.add_argument("--engines", default="native,ditg,iperf3", help="comma-separated traffic engines")
    p.add_argument("--repetitions", type=int, default=3, help="repetitions of every controller x topology")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="where results go")
    args = p.parse_args()
    return 0 if soak(args.controllers.split(","), args.engines.split(","), args.repetitions, args.out) else 1


if __name__ == "__main__":
    sys.exit(main())
