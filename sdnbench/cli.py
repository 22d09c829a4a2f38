"""The `sdnbench` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from . import __version__
from .errors import SdnbenchError
from .report import DEFAULT_REPORT

DESCRIPTION = """\
sdnbench measures SDN controllers and data planes on real emulated networks
(Mininet + Open vSwitch, real controllers, real traffic tools), from one
experiment file: controllers x topologies x workloads x parameters x
repetitions, with statistics.

typical use:
  sdnbench doctor                        what this machine can do, and fixes
  sdnbench check examples/quickstart.yaml    validate a file (no root needed)
  sdnbench plan examples/quickstart.yaml     list the trials and estimated time
  sdnbench run examples/quickstart.yaml      run it into runs/<timestamp>/
  sdnbench results runs/<timestamp>          comparison tables, CSV and JSON
  sdnbench report runs/<timestamp>           HTML report with figures (PNG, SVG)
  sdnbench compare runs/A runs/B             what changed between two runs (exit 1: a regression)
  sdnbench run FILE --dashboard              watch it at http://127.0.0.1:8765/ (or: sdnbench dashboard RUN)
  sdnbench clean                         remove what a killed run left behind
  sdnbench jobs FILE --shards 8 --slurm  run a campaign on 8 machines (or --kubernetes), then:
  sdnbench merge runs/<name>/shard-* --out runs/<name>/merged
"""


def _cmd_check(args) -> int:
    from .config.loader import load_experiment
    from .runner.plan import expand
    from .runner.preflight import notes, preflight

    exp = load_experiment(args.file)
    trials = expand(exp)
    problems = [] if args.offline else preflight(exp)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 2
    for note in notes(exp, args.offline):
        print(f"note: {note}")
    print(f"{args.file}: ok — {len(exp.controllers)} controllers, {len(exp.topologies)} topologies, "
          f"{len(exp.workloads)} workloads, {len(trials)} trials")
    return 0


def _cmd_plan(args) -> int:
    from .config.loader import load_experiment
    from .runner.plan import estimate_seconds, expand
    from .scaleout_cli import shard_of

    exp = load_experiment(args.file)
    trials = expand(exp)
    shard = shard_of(args)
    if shard is not None:
        from .runner.shard import select

        trials = select(trials, shard)
    if args.json:
        print(json.dumps([{"key": t.key, "controller": t.controller.label, "topology": t.topology,
                           "workload": t.workload["name"], "params": t.sweep_point, "repetition": t.repetition,
                           "flows": [f.__dict__ for f in t.flows]} for t in trials], indent=2))
        return 0
    for t in trials:
        point = " ".join(f"{k}={v}" for k, v in t.sweep_point.items())
        print(f"{t.seq + 1:4d}  {t.controller.label:<14} {t.topology:<16} {t.workload['name']:<14} "
              f"{point:<24} rep {t.repetition}  ~{t.expected_seconds():.0f} s traffic")
    est = estimate_seconds(trials, exp.restart, exp.cooldown_s)
    print(f"\n{len(trials)} trials; estimated {est / 60:.1f} min ({est:.0f} s)")
    return 0


def _cmd_run(args) -> int:
    from .analysis.compare import compare
    from .analysis.table import render_report
    from .config.loader import load_experiment
    from .dashboard.cli import watching
    from .runner.campaign import run_campaign
    from .runner.preflight import notes, preflight
    from .scaleout_cli import resume_options, shard_of

    exp = load_experiment(args.file)
    shard = shard_of(args)
    problems = preflight(exp, for_run=True)
    if problems:
        for p in problems:
            print(p, file=sys.stderr)
        return 2
    for note in notes(exp):
        print(f"note: {note}", file=sys.stderr)
    if args.resume and not args.out:
        print("--resume needs --out RUNDIR: the run directory to finish", file=sys.stderr)
        return 2
    suffix = f"-shard-{shard.index}" if shard else ""
    rundir = Path(args.out) if args.out else Path("runs") / (time.strftime("%Y%m%d-%H%M%S-") + exp.name + suffix)
    if rundir.exists() and any(rundir.iterdir()) and not args.resume:
        print(f"{rundir} already holds a run; use --resume to finish it or another --out", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    if args.calibrate:
        from .calibration_cli import calibrate_missing

        calibrate_missing(exp, rundir / "calibration")
    try:
        with watching(args, rundir) as observer:
            store = run_campaign(exp, rundir, resume=args.resume, observer=observer, shard=shard)
    except KeyboardInterrupt:
        print(f"\ninterrupted; measured trials are kept. Finish with: sdnbench run {args.file}"
              f"{resume_options(args)} --out {rundir} --resume", file=sys.stderr)
        return 130
    comparison = compare(store)
    print(render_report(store, comparison))
    _export(rundir, comparison[0])
    print(f"\nrun directory: {rundir}  ({time.monotonic() - t0:.0f} s)")
    return 0


def _export(rundir: Path, cells) -> None:
    """summary.csv and summary.json of a run's comparison cells."""
    from .analysis.compare import to_csv, to_json

    (rundir / "summary.csv").write_text(to_csv(cells))
    (rundir / "summary.json").write_text(to_json(cells))


def _open_store(rundir: Path):
    """The store of a run directory; SdnbenchError when there is none."""
    from .results.store import DB_NAME, ResultStore

    if not (rundir / DB_NAME).exists():
        raise SdnbenchError(f"{rundir}: no {DB_NAME} here (is it a run directory?)")
    return ResultStore.in_rundir(rundir)


def _test_options(args) -> dict:
    """alpha, threshold and correction of a significance test, from the command line."""
    if not 0 < args.alpha < 1 or args.threshold < 0:
        raise SdnbenchError("--alpha must lie between 0 and 1 and --threshold must not be negative")
    return {"alpha": args.alpha, "threshold": args.threshold / 100, "correction": args.correction}


def _cmd_results(args) -> int:
    from .analysis.compare import compare
    from .report import REPORTS

    rundir = Path(args.rundir)
    store = _open_store(rundir)
    metrics = args.metric or None
    if args.series:
        _export_series(store, Path(args.series), metrics)
        print(f"wrote {args.series}", file=sys.stderr)
        return 0
    comparison = compare(store, hide_invalid=args.hide_invalid)
    marks = _baseline_marks(args, comparison, metrics) if args.baseline else None
    print(REPORTS[args.format].render(store, comparison, metrics, marks))
    if marks is not None and args.format == DEFAULT_REPORT:
        from .analysis.significance import method

        print(f"\n▲ better, ▼ worse, ◆ different (no better direction) than {args.baseline}: "
              f"{method(**_test_options(args))}")
    if args.format == DEFAULT_REPORT:   # the terminal view also leaves the exports beside the run
        _export(rundir, comparison[0])
        print(f"\nexported {rundir / 'summary.csv'} and {rundir / 'summary.json'}")
    return 0


def _baseline_marks(args, comparison, metrics):
    """Each cell against the baseline column, tested over the cells the chosen format shows."""
    from .analysis.significance import against_baseline
    from .analysis.table import shown_metrics

    cells, controllers, _ = comparison
    if args.baseline not in controllers:
        raise SdnbenchError(f"--baseline {args.baseline}: no such controller in this run "
                            f"(controllers: {', '.join(controllers)})")
    tested = shown_metrics(cells, metrics) if args.format == DEFAULT_REPORT else metrics
    return against_baseline(cells, args.baseline, tested, **_test_options(args))


def _cmd_report(args) -> int:
    from .analysis.compare import compare
    from .report.html import REPORT

    rundir = Path(args.rundir)
    store = _open_store(rundir)
    page = REPORT.write(store, compare(store), Path(args.out) if args.out else rundir / "report", args.metric)
    print(f"report: {page}")
    return 0


def _cmd_compare(args) -> int:
    from .analysis.compare import compare
    from .analysis.significance import REGRESSION, compare_runs, method
    from .report.diff import render_json, render_text

    stores = [_open_store(Path(d)) for d in (args.run_a, args.run_b)]
    test = _test_options(args)
    changes = compare_runs(compare(stores[0])[0], compare(stores[1])[0], args.metric or None, **test)
    if not changes:
        raise SdnbenchError("no cell (row x controller x metric) is present in both runs: nothing to compare")
    names = (args.run_a, args.run_b)
    yaml_a, yaml_b = ((s.campaign() or {}).get("experiment_yaml") for s in stores)
    notes = [] if yaml_a == yaml_b else ["note: the two runs' experiment files differ"]
    print(render_json(changes, names, method(**test)) if args.format == "json"
          else render_text(changes, names, method(**test), args.all, notes))
    return 1 if any(c.verdict == REGRESSION for c in changes.values()) else 0


def _add_test_options(c) -> None:
    """--alpha, --threshold and --correction of a significance test."""
    from .analysis.significance import ALPHA, CORRECTIONS, THRESHOLD

    c.add_argument("--alpha", type=float, default=ALPHA, help=f"significance level (default {ALPHA})")
    c.add_argument("--threshold", type=float, default=THRESHOLD * 100, metavar="PERCENT",
                   help=f"smallest relative change of the mean that counts (default {THRESHOLD * 100:g} %%)")
    c.add_argument("--correction", choices=CORRECTIONS, default=CORRECTIONS[0],
                   help="adjust p-values for the number of cells tested: bh (Benjamini-Hochberg, default) or none")


def _export_series(store, path: Path, metrics: list[str] | None) -> None:
    """Per-interval series of every trial, one CSV row per point; a trial's events (faults,
    reconnections) follow as rows with flow 'event', the event in `metric` and its detail in `value`."""
    import csv

    from .analysis.compare import params_text
    from .metrics import describe

    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["controller", "topology", "workload", "params", "repetition", "flow", "t_s", "metric", "unit",
                    "value"])
        for ctrl, topo, wl, params, rep, flow, t_s, name, value in store.all_series():
            if metrics and name not in metrics:
                continue
            w.writerow([ctrl, topo, wl, params_text(json.loads(params)), rep, flow, t_s, name, describe(name).unit,
                        value])
        for ctrl, topo, wl, params, rep, t_s, kind, detail in store.all_events():
            w.writerow([ctrl, topo, wl, params_text(json.loads(params)), rep, "event", t_s, kind, "", detail])


def _cmd_controller(args) -> int:
    from .controllers import ControllerSpec
    from .serve import serve_controller

    spec = ControllerSpec(kind=args.kind, label=args.kind, openflow=args.openflow, app=args.app, cpus=args.cpus,
                          host=args.host, port=args.port, rest_port=args.rest_port)
    rundir = Path(args.dir) if args.dir else Path("runs") / time.strftime(f"%Y%m%d-%H%M%S-controller-{args.kind}")
    return serve_controller(spec, rundir, switches=args.switches, ports=args.ports, duration_s=args.duration,
                            say=lambda line: print(line, flush=True))


def _cmd_doctor(args) -> int:
    from .doctor import report

    return 1 if report() else 0


def _cmd_clean(args) -> int:
    from .clean import clean

    clean([Path(d) for d in args.rundir] or None)
    return 0


def _cmd_calibrate(args) -> int:
    from .calibration_cli import cmd_calibrate

    return cmd_calibrate(args)


def _cmd_schema(args) -> int:
    if args.markdown:
        from .config.reference import markdown_reference

        print(markdown_reference())
        return 0
    from .config.schema import experiment_jsonschema

    print(json.dumps(experiment_jsonschema(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    from . import scaleout_cli as scaleout
    from .dashboard import cli as live
    from .report import REPORTS

    p = argparse.ArgumentParser(prog="sdnbench", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"sdnbench {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    c = sub.add_parser("check", help="validate an experiment file (and that its parts are installed)")
    c.add_argument("file")
    c.add_argument("--offline", action="store_true", help="only the file itself: skip installed-controller checks")
    c.set_defaults(func=_cmd_check)

    c = sub.add_parser("plan", help="print the expanded trial list and the estimated duration")
    c.add_argument("file")
    c.add_argument("--json", action="store_true", help="machine-readable trial list")
    scaleout.add_plan_options(c)
    c.set_defaults(func=_cmd_plan)

    c = sub.add_parser("run", help="run every trial of an experiment (root)",
                       description="Run an experiment. Each trial is stored as soon as it ends; "
                                   "Ctrl-C cleans up and keeps what was measured.")
    c.add_argument("file")
    c.add_argument("--out", metavar="RUNDIR", help="run directory (default: runs/<timestamp>-<name>)")
    c.add_argument("--calibrate", action="store_true",
                   help="first measure the zero-loss envelope of any topology and packet size not yet calibrated "
                        "on this machine (see `sdnbench calibrate`)")
    c.add_argument("--resume", action="store_true", help="finish the run in --out: skip trials stored as ok")
    scaleout.add_run_options(c)
    live.add_run_options(c)
    c.set_defaults(func=_cmd_run)

    c = sub.add_parser("calibrate", help="measure this machine's zero-loss envelope for an experiment's "
                                         "topologies and packet sizes (no controller)",
                       description="For each topology of the experiment and each payload size its flows use, "
                                   "find the highest UDP packet rate from the first host to the last that loses "
                                   "under 0.1 %, with switches forwarding on their own, on the experiment's data "
                                   "plane. Trials that offer more are marked as measuring the testbed (†). "
                                   "Envelopes are kept per machine and data plane; `doctor` lists them.")
    c.add_argument("file")
    c.add_argument("--sizes", help="payload sizes in bytes, comma-separated (default: those of the flows)")
    c.add_argument("--duration", type=float, default=2.0, metavar="SECONDS", help="length of each step (default 2)")
    c.add_argument("--force", action="store_true", help="measure again what is already calibrated")
    c.add_argument("--dir", metavar="DIR", help="work directory (default runs/<time>-calibrate)")
    c.set_defaults(func=_cmd_calibrate)

    c = sub.add_parser("results", help="comparison tables of a run; exports summary.csv and summary.json")
    c.add_argument("rundir")
    c.add_argument("--metric", action="append", help="metric to show (repeatable), e.g. loss_pct")
    c.add_argument("--format", choices=list(REPORTS), default=DEFAULT_REPORT,
                   help="; ".join(f"{name}: {r.description}" for name, r in REPORTS.items()))
    c.add_argument("--hide-invalid", action="store_true",
                   help="leave repetitions in which the testbed saturated (marked †) out of the statistics")
    c.add_argument("--series", metavar="CSV", help="write every per-interval series point to CSV instead")
    c.add_argument("--baseline", metavar="CONTROLLER",
                   help="mark each cell that differs significantly from this controller's column")
    _add_test_options(c)
    c.set_defaults(func=_cmd_results)

    c = sub.add_parser("report", help="write an HTML report with figures (and each figure as PNG and SVG)",
                       description="Write RUNDIR/report/report.html (or --out DIR): one self-contained page, "
                                   "figures embedded, readable without network; figures/ beside it holds each "
                                   "figure as PNG and SVG.")
    c.add_argument("rundir")
    c.add_argument("--out", metavar="DIR", help="where to write (default RUNDIR/report)")
    c.add_argument("--metric", action="append", help="bar figures of these metrics only (repeatable)")
    c.set_defaults(func=_cmd_report)

    c = sub.add_parser(
        "compare", help="what changed from run A to run B, cell by cell, with significance",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare every cell (row x controller x metric) present in both runs: the ratio B/A of "
                    "the means and whether the difference is significant. The catalog's better direction "
                    "makes a significant change a regression or an improvement.",
        epilog="exit status: 0 no regression, 1 at least one regression, 2 error (e.g. no run directory, "
               "no cell in both runs)\n\nexample, in a controller's CI:\n"
               "  sdnbench compare runs/release runs/candidate --metric owd_mean_ms --threshold 10")
    c.add_argument("run_a", metavar="RUN_A", help="the reference run directory")
    c.add_argument("run_b", metavar="RUN_B", help="the run directory compared with it")
    c.add_argument("--metric", action="append", help="compare these metrics only (repeatable; default: all)")
    c.add_argument("--all", action="store_true", help="list every cell, not only those that changed")
    c.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    _add_test_options(c)
    c.set_defaults(func=_cmd_compare)

    scaleout.add_commands(sub)

    c = sub.add_parser(
        "controller", help="start one controller as experiments do and keep it up until Ctrl-C",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Start a controller through its sdnbench adapter (same launcher, app and generated "
                    "configuration as in an experiment), print one JSON line once its OpenFlow port "
                    "listens, and stop it on Ctrl-C or SIGTERM. For tools sdnbench does not drive itself.",
        epilog="examples:\n"
               "  sdnbench controller osken --port 6653 --openflow 1.0   then: cbench -c 127.0.0.1 -p 6653\n"
               "  sdnbench controller faucet --openflow 1.3 --switches 16   "
               "(Faucet must know its switches: dpids 1..16)\n"
               "  sdnbench controller ryu --rest-port 8080 --duration 60")
    c.add_argument("kind", help="osken, ryu, faucet, testcontroller or pox")
    c.add_argument("--openflow", choices=("1.0", "1.3"), default="1.3", help="OpenFlow version (default 1.3)")
    c.add_argument("--app", help="the adapter's application choice (see docs/controllers.md)")
    c.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    c.add_argument("--port", type=int, default=6653, help="OpenFlow TCP port (default 6653)")
    c.add_argument("--rest-port", type=int, help="northbound REST port, for controllers that have one")
    c.add_argument("--cpus", type=int, help="pin the controller to this many cores")
    c.add_argument("--switches", type=int, default=0,
                   help="datapaths 1..N the controller is told about in advance (Faucet needs them)")
    c.add_argument("--ports", type=int, default=4, help="ports per datapath given with --switches (default 4)")
    c.add_argument("--duration", type=float, metavar="SECONDS", help="stop after this long instead of waiting")
    c.add_argument("--dir", metavar="DIR", help="logs and manifest (default runs/<time>-controller-<kind>)")
    c.set_defaults(func=_cmd_controller)

    live.add_commands(sub)

    c = sub.add_parser("doctor", help="what this machine can do, with a fix for each gap")
    c.set_defaults(func=_cmd_doctor)

    c = sub.add_parser("clean", help="remove processes, bridges and interfaces left by killed runs")
    c.add_argument("rundir", nargs="*", help="run directories (default: every run registered as active)")
    c.set_defaults(func=_cmd_clean)

    c = sub.add_parser("schema", help="print the JSON Schema of experiment files")
    c.add_argument("--markdown", action="store_true", help="the format reference as Markdown instead")
    c.set_defaults(func=_cmd_schema)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point: errors become one clear message and exit code 2."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except SdnbenchError as exc:
        print(f"sdnbench: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `sdnbench results RUN | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
