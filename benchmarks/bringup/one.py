#!/usr/bin/env python3
"""One sdnbench bring-up, timed the way mn_tests.py times `mn`: prints `BRINGUP <phase> <epoch>`.

Builds and starts the topology with sdnbench's Python API (EmulatedNetwork,
userspace datapath), points every switch at the controller endpoint when one
is given and waits until all are connected, pings the first host <-> the last
(`--check ends`), then stops the network. The caller holds the machine's
network lock and starts the controller.

Usage: one.py SHAPE SWITCHES RUNDIR [--controller tcp:IP:PORT] [--switch ovs] [--check ends|none]
                                     [--openflow 1.3] [--src DIR] [--profile FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

CHECK_TIMEOUT_S = float(os.environ.get("BRINGUP_CHECK_TIMEOUT_S", "60"))
CONNECT_TIMEOUT_S = float(os.environ.get("BRINGUP_CONNECT_TIMEOUT_S", "600"))


def stamp(phase: str) -> None:
    """Say when a phase ended, on the clock mn_tests.py uses."""
    print(f"BRINGUP {phase} {time.time():.6f}", flush=True)


def topology(shape: str, size: int) -> dict:
    """The sdnbench topology spec of a shape at a size (tree: size is the depth of a binary tree)."""
    if shape == "linear":
        return {"kind": "linear", "switches": size, "hosts_per_switch": 1}
    return {"kind": "tree", "depth": size, "fanout": 2}


def bring_up(args) -> None:
    """Start, connect, check and stop one network, stamping each phase."""
    from sdnbench.emulation.network import EmulatedNetwork
    from sdnbench.manifest import Manifest
    from sdnbench.topology import build_topology

    graph = build_topology(topology(args.shape, args.size))
    net = EmulatedNetwork(graph, Manifest(Path(args.rundir)), datapath="user", openflow=args.openflow,
                          fail_mode="secure" if args.controller else "standalone", lock=False, switch=args.switch)
    try:
        net.start()
        stamp("started")
        if args.controller:
            net.attach_controller(args.controller, timeout_s=CONNECT_TIMEOUT_S)
        stamp("connected")
        if args.check == "ends":
            first, last = graph.hosts[0].name, graph.hosts[-1].name
            missing = net.reachability([(first, last), (last, first)], timeout_s=CHECK_TIMEOUT_S)
            if missing:
                print(f"BRINGUP unreachable {missing}", flush=True)
        stamp("checked")
    finally:
        net.stop()
    stamp("stopped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shape", choices=("linear", "tree"))
    parser.add_argument("size", type=int, help="switches of a line, depth of a binary tree")
    parser.add_argument("rundir")
    parser.add_argument("--controller")
    parser.add_argument("--switch", default="ovs")
    parser.add_argument("--check", choices=("ends", "none"), default="ends")
    parser.add_argument("--openflow", default="1.3")
    parser.add_argument("--src", help="import sdnbench from this directory (e.g. an older revision)")
    parser.add_argument("--profile", help="write a cProfile of the whole bring-up here")
    args = parser.parse_args()
    sys.path.insert(0, args.src or str(Path(__file__).resolve().parents[2]))
    if args.profile:
        import cProfile

        cProfile.runctx("bring_up(args)", globals(), {"args": args}, args.profile)
    else:
        bring_up(args)


if __name__ == "__main__":
    main()
