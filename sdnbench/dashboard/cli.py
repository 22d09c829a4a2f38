"""Command-line parts for watching runs: `run --dashboard/--influx`, `sdnbench dashboard`, `sdnbench export`."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

from .server import DEFAULT_LISTEN


def _listen_option(c) -> None:
    c.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                   help=f"where the dashboard listens (default {DEFAULT_LISTEN}; any other than loopback "
                        f"requires the token printed with the URL)")


def _influx_options(c, what: str) -> None:
    c.add_argument("--influx", metavar="URL", help=f"{what} (InfluxDB 1.x HTTP API, e.g. http://127.0.0.1:8086)")
    c.add_argument("--influx-db", default="sdnbench", metavar="NAME", help="InfluxDB database (default sdnbench)")


def add_run_options(c) -> None:
    """The run command's options for watching it."""
    c.add_argument("--dashboard", action="store_true",
                   help="serve a live page of the run (progress, current trial, series, cells) and /metrics")
    _listen_option(c)
    _influx_options(c, "write each trial to InfluxDB as it ends")


@contextmanager
def watching(args, rundir: Path):
    """The run's observer (dashboard and/or InfluxDB, or None) while the campaign runs."""
    from ..runner.observer import Observers

    dashboard = influx = None
    if args.influx:
        from ..report.influx import InfluxObserver, InfluxWriter

        influx = InfluxObserver(InfluxWriter(args.influx, args.influx_db))
    if args.dashboard:
        from .server import Dashboard

        dashboard = Dashboard(rundir, args.listen).start()
        print(f"dashboard: {dashboard.url}  (metrics: {dashboard.url.split('?')[0]}metrics)", file=sys.stderr,
              flush=True)
    try:
        yield Observers(dashboard.live if dashboard else None, influx) if dashboard or influx else None
    finally:
        if dashboard is not None:
            dashboard.stop()


def _cmd_dashboard(args) -> int:
    from ..cli import _open_store
    from .server import Dashboard

    rundir = Path(args.rundir)
    _open_store(rundir).close()   # a clear error when it is not a run directory
    dashboard = Dashboard(rundir, args.listen)
    print(f"dashboard of {rundir}: {dashboard.url}  (Ctrl-C stops it)", flush=True)
    dashboard.serve_forever()
    return 0


def _cmd_export(args) -> int:
    from ..cli import _open_store
    from ..report.influx import InfluxWriter, run_lines

    rundir = Path(args.rundir)
    store = _open_store(rundir)
    lines = run_lines(store, args.run_name or rundir.resolve().name)
    if args.line_protocol:
        Path(args.line_protocol).write_text("\n".join(lines) + "\n")
        print(f"wrote {len(lines)} points to {args.line_protocol}", file=sys.stderr)
    if args.influx:
        writer = InfluxWriter(args.influx, args.influx_db)
        writer.create_database()
        print(f"wrote {writer.write(lines)} points to {args.influx} database {args.influx_db}", file=sys.stderr)
    if not (args.influx or args.line_protocol):
        sys.stdout.write("\n".join(lines) + "\n")
    return 0


def add_commands(sub) -> None:
    """`dashboard` and `export` subcommands."""
    c = sub.add_parser("dashboard", help="serve the dashboard of a run (finished, or being written by another run)",
                       description="Serve the live page of RUNDIR: progress, per-second series and cells, "
                                   "following the store while a campaign writes it; /metrics for Prometheus.")
    c.add_argument("rundir")
    _listen_option(c)
    c.set_defaults(func=_cmd_dashboard)

    c = sub.add_parser("export", help="a run in InfluxDB line protocol: to an InfluxDB, a file or stdout",
                       description="Every per-second point, trial, comparison cell and the progress of RUNDIR "
                                   "as InfluxDB line protocol (measurements sdnbench_series, sdnbench_trial, "
                                   "sdnbench_cell, sdnbench_progress; see docs/dashboard.md).")
    c.add_argument("rundir")
    _influx_options(c, "write the run to this InfluxDB")
    c.add_argument("--line-protocol", metavar="FILE", help="write the lines to FILE")
    c.add_argument("--run-name", help="the run tag (default: the run directory's name)")
    c.set_defaults(func=_cmd_export)
