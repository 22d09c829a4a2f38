"""`sdnbench calibrate` and `run --calibrate`: measure and show the zero-loss envelopes of an experiment."""

from __future__ import annotations

import sys
import time
from pathlib import Path


def cmd_calibrate(args) -> int:
    """`sdnbench calibrate FILE`: measure what is missing (or everything with --force), then show it."""
    from . import calibration
    from .config.loader import load_experiment

    exp = load_experiment(args.file)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    todo = ([(label, graph, sizes or calibration.experiment_sizes(exp)) for label, graph in calibration.targets(exp)]
            if args.force else calibration.missing(exp, sizes))
    if not todo:
        print("every topology and packet size of this experiment is calibrated here (--force measures again)")
    rundir = Path(args.dir) if args.dir else Path("runs") / time.strftime("%Y%m%d-%H%M%S-calibrate")
    for label, graph, label_sizes in todo:
        calibration.calibrate(label, graph, exp.network, label_sizes, rundir / label, args.duration,
                              say=lambda line: print(line, file=sys.stderr, flush=True))
    print_envelopes(exp)
    return 0


def calibrate_missing(exp, workdir: Path) -> None:
    """Measure the envelopes exp's topologies and sizes lack here (run --calibrate)."""
    from . import calibration

    for label, graph, sizes in calibration.missing(exp):
        print(f"calibrating {label} ({', '.join(map(str, sizes))} B)", file=sys.stderr, flush=True)
        calibration.calibrate(label, graph, exp.network, sizes, workdir / label,
                              say=lambda line: print(line, file=sys.stderr, flush=True))


def print_envelopes(exp) -> None:
    """The stored envelopes of exp's topologies on this machine and data plane."""
    from . import calibration
    from .analysis.table import text_table

    stored, body = calibration.load(), []
    for label, graph in calibration.targets(exp):
        plane = calibration.data_plane_of(exp, graph)
        for size in calibration.experiment_sizes(exp):
            e = calibration.lookup(plane, label, size, stored)
            body.append([label, str(size), f"{e.zero_loss_pps:,.0f}" if e else "not calibrated",
                         f"{e.first_lossy_pps:,.0f}" if e and e.first_lossy_pps else "-"])
    print("\n".join(["zero-loss envelope (< 0.1 % loss, no controller) on this machine and data plane",
                     *text_table(["topology", "payload B", "zero-loss packets/s", "first lossy packets/s"], body)]))
