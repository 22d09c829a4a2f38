#!/usr/bin/env python3
"""Bring-up benchmark: sdnbench against Mininet's own `mn`, large linear and tree topologies, one run.

For each shape (linear: N switches with one host each; tree: a binary tree of
depth D, hosts at the leaves), size and controller (none: standalone
switches; osken: os-ken's l2_learning, started fresh for every measurement
and before the clock starts), each tool builds the topology on Open vSwitch's
userspace datapath, connects it and checks it, then tears it down:

* sdnbench: its Python API (one.py: EmulatedNetwork.start, attach_controller,
  reachability, stop), switch kind `ovs` (offloads off on every interface);
* mn: `mn --topo linear,N | tree,depth=D,fanout=2 --switch ovs,datapath=user
  [--controller remote,ip=127.0.0.1,port=P --wait (protocols=OpenFlow13) | --controller none
  (failMode=standalone)] --test ends`, through mn_safe.py (its error cleanup,
  `mn -c`, refused) with mn_tests.py's `ends` test.

Each measurement is a fresh process; times are from its spawn: `started` (built
and switches started), `connected` (every switch connected to the
controller; = started without one), `ready` (first host <-> last host
answered a ping both ways), `teardown` (from ready until the process exited,
everything removed). Both tools wait up to BRINGUP_CHECK_TIMEOUT_S for the
ping. The run holds the machine's network lock, so no other sdnbench network
runs meanwhile. Before each measurement it waits (up to --settle-max) for the
1-minute load average to drop below --settle-load, since a large teardown
leaves the next tool a loaded machine; the load then and the wait are recorded.
Writes results.json and results.md here. Needs root.

Usage: benchmarks/bringup/run.py [--sizes 10,100,1000] [--shapes linear,tree] [--controllers none,osken]
           [--tools sdnbench,mn] [--check ends|none] [--timeout 900] [--src DIR --label NAME] [--keep] [--no-lock]
           [--settle-load CORES] [--settle-max 300]
--src runs sdnbench from another checkout (e.g. an older revision) under --label.
--keep adds this run's rows to results.json (a row measured again replaces its old one).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from sdnbench.controllers import make_adapter  # noqa: E402
from sdnbench.controllers.base import ControllerSpec  # noqa: E402
from sdnbench.emulation import ovs  # noqa: E402
from sdnbench.emulation.lock import NetworkLock  # noqa: E402
from sdnbench.manifest import Manifest  # noqa: E402
from sdnbench.procs import ProcessTracker  # noqa: E402

#: Tree depth (binary) whose switch count is nearest each nominal size: 15, 127 and 1,023 switches.
TREE_DEPTH = {10: 4, 100: 7, 1000: 10}
PHASES = ("started", "connected", "checked")


def switch_count(shape: str, size: int) -> int:
    """Switches of a shape at a nominal size."""
    return size if shape == "linear" else 2 ** TREE_DEPTH[size] - 1


def leftovers(names: set[str]) -> list[str]:
    """Bridges and root-namespace interfaces named after these switches that exist now."""
    found = sorted(names & ovs.existing_bridges())
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        ifname = line.split(":")[1].strip().split("@")[0]
        if ifname.split("-eth")[0] in names and "-eth" in ifname:
            found.append(ifname)
    return found


def remove(found: list[str], names: set[str]) -> None:
    """Delete leftovers of a killed measurement (only the measured topology's names)."""
    ovs.delete_bridges([f for f in found if f in names])
    for ifname in (f for f in found if f not in names):
        subprocess.run(["ip", "link", "del", ifname], capture_output=True)


def descendants(pid: int) -> list[int]:
    """Every process below pid (Mininet's host shells detach into their own sessions)."""
    kids = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            kids.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for kid in kids.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


def measure(argv: list[str], timeout_s: float, env: dict) -> dict:
    """Run one measured process; stamps of its phases, relative to its spawn, and how it ended."""
    t0 = time.time()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    lines: list[tuple[float, str]] = []
    reader = threading.Thread(target=lambda: lines.extend((time.time(), ln.rstrip("\n")) for ln in proc.stdout),
                              daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        stuck = descendants(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        for pid in stuck:   # the measured tool's own children (host shells), nothing else
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
    finally:
        if proc.poll() is None:   # interrupted: never leave the measured tool running alone
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait()
    reader.join(5)
    total = time.time() - t0
    stamps = {}
    for at, line in lines:
        parts = line.split()
        if line.startswith("BRINGUP ") and len(parts) == 3 and parts[1] in (*PHASES, "stopped"):
            stamps[parts[1]] = float(parts[2]) - t0
        elif "*** Waiting for switches to connect" in line:
            stamps.setdefault("started", at - t0)
    stamps.setdefault("started", stamps.get("connected"))
    row = {f"{p}_s": round(stamps[p], 2) if stamps.get(p) is not None else None for p in PHASES}
    row["total_s"] = round(total, 2)
    row["teardown_s"] = round(total - stamps["checked"], 2) if "checked" in stamps and not timed_out else None
    row["exit"] = "timeout" if timed_out else proc.returncode
    row["unreachable"] = any(line.startswith("BRINGUP unreachable") for _, line in lines)
    row["tail"] = [line for _, line in lines[-5:]] if (timed_out or proc.returncode) else []
    return row


def mn_argv(shape: str, size: int, endpoint: str | None, check: str) -> list[str]:
    """`mn` (through mn_safe.py) for this shape, size and controller."""
    topo = f"linear,{size}" if shape == "linear" else f"tree,depth={TREE_DEPTH[size]},fanout=2"
    switch = "ovs,datapath=user" + (",protocols=OpenFlow13" if endpoint else ",failMode=standalone")
    ctl = ["--controller", f"remote,ip={endpoint.split(':')[1]},port={endpoint.split(':')[2]}", "--wait"] \
        if endpoint else ["--controller", "none"]
    return ["/usr/bin/python3", str(HERE / "mn_safe.py"), "--topo", topo, "--switch", switch, *ctl,
            "--custom", str(HERE / "mn_tests.py"), "--test", "ends" if check == "ends" else "stamp"]


def sdnbench_argv(shape: str, size: int, endpoint: str | None, check: str, rundir: Path, src: str | None) -> list:
    """one.py for this shape, size and controller."""
    depth_or_n = size if shape == "linear" else TREE_DEPTH[size]
    return [sys.executable, str(HERE / "one.py"), shape, str(depth_or_n), str(rundir), "--check", check,
            *(["--controller", endpoint] if endpoint else []), *(["--src", src] if src else [])]


def one_row(tool, label, shape, size, controller, args, workdir: Path, env) -> dict:
    """Measure one tool on one topology with one controller (started fresh, before the clock)."""
    names = {f"s{i}" for i in range(1, switch_count(shape, size) + 1)}
    if leftovers(names):
        raise SystemExit(f"switches of the topology exist already: {leftovers(names)[:5]}; not measuring")
    rundir = Path(tempfile.mkdtemp(dir=workdir))
    tracker = ProcessTracker(Manifest(rundir))
    endpoint = None
    load, settled_s = settle(args.settle_load, args.settle_max)
    try:
        if controller != "none":
            spec = ControllerSpec(kind=controller, label=controller, port=free_port())
            adapter = make_adapter(spec, tracker)
            adapter.start(rundir)
            endpoint = adapter.endpoints()["openflow"]
        argv = mn_argv(shape, size, endpoint, args.check) if tool == "mn" else \
            sdnbench_argv(shape, size, endpoint, args.check, rundir, args.src)
        row = measure(argv, args.timeout, env)
    finally:
        tracker.stop_all()
    left = leftovers(names)
    if left:
        remove(left, names)
    from sdnbench.clean import clean_rundir
    clean_rundir(rundir, say=lambda m: None)   # a killed sdnbench measurement's manifest
    return {"tool": label, "shape": shape, "size": size, "switches": len(names), "controller": controller,
            "check": args.check, "load1_before": load, "settle_s": settled_s, "leftovers_removed": len(left), **row}


def load1() -> float:
    """The 1-minute load average."""
    return float(Path("/proc/loadavg").read_text().split()[0])


def settle(below: float, max_s: float) -> tuple[float, float]:
    """Wait until the 1-minute load average is under `below` or `max_s` passed: a 1,000-switch
    teardown leaves a load of about 40 (thousands of shells ending) that would slow the next tool.
    Returns the load then and the seconds waited."""
    t0 = time.monotonic()
    while load1() >= below and time.monotonic() - t0 < max_s:
        time.sleep(5)
    return load1(), round(time.monotonic() - t0, 1)


def free_port() -> int:
    """A TCP port nothing listens on now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--shapes", default="linear,tree")
    parser.add_argument("--controllers", default="none,osken")
    parser.add_argument("--tools", default="sdnbench,mn")
    parser.add_argument("--check", choices=("ends", "none"), default="ends")
    parser.add_argument("--timeout", type=float, default=900.0, help="per measurement, seconds")
    parser.add_argument("--src", help="run sdnbench from this checkout instead")
    parser.add_argument("--label", help="tool name for sdnbench rows (default: sdnbench)")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--no-lock", action="store_true", help="the caller holds the machine's network lock")
    parser.add_argument("--settle-load", type=float, default=float(os.cpu_count() or 1),
                        help="before each measurement, wait until the 1-minute load average is below this "
                             "(default: the number of cores)")
    parser.add_argument("--settle-max", type=float, default=300.0, help="wait at most this long for it, seconds")
    args = parser.parse_args()
    from report import write

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    lock = None if args.no_lock else NetworkLock()
    if lock:
        lock.acquire()
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="bringup-") as work:
            for size in map(int, args.sizes.split(",")):
                for shape in args.shapes.split(","):
                    for controller in args.controllers.split(","):
                        for tool in args.tools.split(","):
                            label = (args.label or "sdnbench") if tool == "sdnbench" else "mn"
                            row = one_row(tool, label, shape, size, controller, args, Path(work), env)
                            print(json.dumps(row), flush=True)
                            rows.append(row)
                            write(HERE, rows, args.keep)
    finally:
        if lock:
            lock.release()


if __name__ == "__main__":
    main()
