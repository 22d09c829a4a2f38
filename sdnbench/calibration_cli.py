"""`sdnbench calibrate` and `run --calibrate`: measure and show the zero-loss envelopes of an experiment."""

from __future__ import annotations

import sys
import time
from pathlib import Path


def cmd_calibrate(args) -> int:
    """`sdnbench calibrate FILE`: measure what is missing (or everything with --force), then show it."""
    from . import calibration
    from .config.loader import load_experiment
    from .topology import topology_label

    exp = load_experiment(args.file)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    todo = ([(spec, sizes or calibration.experiment_sizes(exp)) for spec in exp.topologies] if args.force
            else calibration.missing(exp, sizes))
    if not todo:
        print("every topology and packet size of this experiment is calibrated here (--force measures again)")
    rundir = Path(args.dir) if args.dir else Path("runs") / time.strftime("%Y%m%d-%H%M%S-calibrate")
    for spec, spec_sizes in todo:
        calibration.calibrate(spec, exp.network, spec_sizes, rundir / topology_label(spec), args.duration,
                              say=lambda line: print(line, file=sys.stderr, flush=True), base_dir=exp.path.parent)
    print_envelopes(exp)
    return 0


def calibrate_missing(exp, workdir: Path) -> None:
    """Measure the envelopes exp's topologies and sizes lack here (run --calibrate)."""
    from . import calibration
    from .topology import topology_label

    for spec, sizes in calibration.missing(exp):
        print(f"calibrating {topology_label(spec)} ({', '.join(map(str, sizes))} B)", file=sys.stderr, flush=True)
        calibration.calibrate(spec, exp.network, sizes, workdir / topology_label(spec),
                              say=lambda line: print(line, file=sys.stderr, flush=True), base_dir=exp.path.parent)


def print_envelopes(exp) -> None:
    """The stored envelopes of exp's topologies on this machine and data plane."""
    from . import calibration
    from .analysis.table import text_table
    from .topology import topology_label

    stored, body = calibration.load(), []
    for spec in exp.topologies:
        plane = calibration.data_plane_of(exp, spec)
        for size in calibration.experiment_sizes(exp):
            e = calibration.lookup(plane, topology_label(spec), size, stored)
            body.append([topology_label(spec), str(size), f"{e.zero_loss_pps:,.0f}" if e else "not calibrated",
                         f"{e.first_lossy_pps:,.0f}" if e and e.first_lossy_pps else "-"])
    print("\n".join(["zero-loss envelope (< 0.1 % loss, no controller) on this machine and data plane",
                     *text_table(["topology", "payload B", "zero-loss packets/s", "first lossy packets/s"], body)]))
