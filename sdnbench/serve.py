"""`sdnbench controller`: one controller, started and checked by its adapter, served
until Ctrl-C — for tools sdnbench does not drive itself (cbench, a hand-run
ofload, a packet generator of one's own).

The controller runs exactly as inside an experiment: same launcher, same
application, same generated configuration. Its process is recorded in a run
directory's manifest, so `sdnbench clean` can remove it after a SIGKILL.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Callable

from .controllers import ControllerSpec, make_adapter
from .errors import ControllerError
from .manifest import Manifest
from .procs import ProcessTracker
from .runner import registry
from .runner.campaign import Terminated, raise_terminated
from .workloads.sbi import OFLOAD_DEFAULT_PORTS, OFLOAD_FIRST_DPID


def serve_controller(spec: ControllerSpec, rundir: Path, switches: int = 0, ports: int = OFLOAD_DEFAULT_PORTS,
                     duration_s: float | None = None, say: Callable[[str], None] = print) -> int:
    """Start spec's controller, print one JSON line once it listens, keep it up until
    Ctrl-C/SIGTERM, `duration_s` or its death; returns the exit code (0, or 1 if it died).

    `switches` > 0 tells the controller about datapaths 1..switches with `ports` ports
    each — the switches sdnbench-ofload emulates by default."""
    if spec.kind in ("remote", "none"):
        raise ControllerError(f"{spec.kind!r} has no process for sdnbench to start")
    if switches:
        spec.options["datapaths"] = {OFLOAD_FIRST_DPID + i: ports for i in range(switches)}
        spec.options["southbound"] = True  # emulated switches: Faucet's benchmark settings (docs/controllers.md)
    rundir.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(rundir)
    try:
        registry.register(rundir)
    except OSError:  # not root: the state directory is not ours; clean by run directory instead
        pass
    adapter = make_adapter(spec, ProcessTracker(manifest))
    old_term = signal.signal(signal.SIGTERM, raise_terminated)
    code = 0
    try:
        version = adapter.version()
        adapter.start(rundir)
        say(json.dumps({"ready": True, "controller": spec.kind, "version": version, "openflow": spec.openflow,
                        "endpoints": adapter.endpoints(), "pids": adapter.pids(), "rundir": str(rundir)}))
        deadline = None if duration_s is None else time.monotonic() + duration_s
        while deadline is None or time.monotonic() < deadline:
            if not adapter.listening():
                say(json.dumps({"ready": False, "error": f"{spec.kind} stopped listening; "
                                                         f"its log is in {rundir}"}))
                code = 1
                break
            time.sleep(0.5)
    except (KeyboardInterrupt, Terminated):
        pass
    finally:
        adapter.stop()
        signal.signal(signal.SIGTERM, old_term)
        if not manifest.outstanding():
            registry.unregister(rundir)
    return code
