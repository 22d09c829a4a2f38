"""sdnbench's own P4Runtime controller (sdnbench/p4/controller_app.py) for P4 switches (`network.switch: p4`).

P4Runtime turns the OpenFlow direction round: each bmv2 switch runs a gRPC
server and the controller dials it. So start() only checks the spec; the
process starts in connect(), once the network is up and its switches'
addresses and device ids are known (EmulatedNetwork.switch_endpoints()). It
gets them, with the flood ports of a spanning tree and (proactive) every
switch's shortest-path entries, in a JSON file; connect() returns once it
has programmed every switch and the switches report their pipeline.

spec.app (or options.mode) is the mode: `learning` (program l2_learning,
reactive MAC learning from packet-ins) or `proactive` (program forwarding,
entries computed here from the topology). The process runs with sdnbench's
own interpreter and is stopped by PID like every controller.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path

import sdnbench

from ..emulation.network import port_plan
from ..errors import ControllerError
from ..forwarding.p4rt import PROGRAM_OF_MODE, flood_ports, proactive_entries
from ..procs import ProcessTracker
from .base import Availability
from .process import ProcessAdapter

MODES = tuple(PROGRAM_OF_MODE)
STATUS = "p4rt-status.json"
FIX = "pip install -e . in sdnbench's virtualenv (grpcio and the p4runtime bindings; see docs/p4.md)"


class P4rtAdapter(ProcessAdapter):
    """python -m sdnbench.p4.controller_app CONFIG: arbitration, pipeline push, learning or proactive entries."""

    kind = "p4rt"
    southbound = ("p4runtime",)
    apps = MODES
    default_app = "learning"

    def __init__(self, spec, tracker=None):
        super().__init__(spec, tracker)
        self.rundir: Path | None = None
        self.switches: dict[str, dict] = {}

    @classmethod
    def availability(cls) -> Availability:
        """The P4Runtime client and the shipped programs import in sdnbench's interpreter."""
        try:
            importlib.import_module("sdnbench.p4.runtime")
            importlib.import_module("sdnbench.p4.programs")
        except Exception as exc:   # a missing module, or bindings that refuse the installed protobuf
            return Availability(False, f"sdnbench's P4Runtime client does not import: {exc}", FIX)
        return Availability(True, f"sdnbench P4Runtime controller {sdnbench.__version__} ({sys.executable})")

    def usable(self) -> Availability:
        """As availability(): the controller is part of sdnbench."""
        return self.availability()

    def app(self) -> str:
        """The mode: spec.app, else options.mode, else learning."""
        return self.spec.app or self.spec.options.get("mode") or self.default_app

    def start(self, rundir: Path, timeout_s: float = 30.0) -> None:
        """Nothing runs yet (the switches are not up to be dialled): check the spec, keep the directory."""
        self.check_spec()
        avail = self.usable()
        if not avail.ok:
            raise ControllerError(f"{self.spec.label}: {avail.detail}; fix: {avail.fix}")
        self.rundir = Path(rundir)
        self.rundir.mkdir(parents=True, exist_ok=True)

    def config(self, net) -> dict:
        """What the app is told: mode, program, every switch with its flood ports, the proactive entries."""
        plan = port_plan(net.graph)
        flood = flood_ports(net.graph, plan)
        self.switches = {name: {**end, "flood_ports": flood[name]} for name, end in net.switch_endpoints().items()}
        if not self.switches:
            raise ControllerError(f"{self.spec.label}: the network's switches take no P4Runtime connection "
                                  f"({net.switch.name} switches speak {net.switch.southbound})")
        mode = self.app()
        return {"mode": mode, "program": PROGRAM_OF_MODE[mode], "switches": self.switches,
                "entries": proactive_entries(net.graph, plan) if mode == "proactive" else {},
                "status": str(self.rundir / STATUS)}

    def command(self, rundir: Path) -> list[str]:
        """sdnbench's interpreter running the app on the config written in rundir."""
        return [sys.executable, "-m", "sdnbench.p4.controller_app", str(rundir / "p4rt-config.json")]

    def environment(self, rundir: Path) -> dict[str, str]:
        """This sdnbench on the app's import path (a source tree that is not the installed one)."""
        source = str(Path(sdnbench.__file__).resolve().parent.parent)
        path = os.environ.get("PYTHONPATH")
        return {**os.environ, "PYTHONPATH": f"{source}{os.pathsep}{path}" if path else source}

    def connect(self, net, timeout_s: float) -> None:
        """Start the app on net's switches, wait until it has programmed them all, then until every
        switch reports its pipeline."""
        if self.rundir is None:
            raise ControllerError(f"{self.spec.label}: connect() before start()")
        if self.proc is not None:
            self.stop()
        (self.rundir / STATUS).unlink(missing_ok=True)
        config = self.config(net)
        (self.rundir / "p4rt-config.json").write_text(json.dumps(config, indent=1))
        self.log_path = self.rundir / f"{self.spec.label}.log"
        tracker = self.tracker or ProcessTracker()
        self.proc = tracker.spawn(self.command(self.rundir), role=f"controller:{self.spec.label}",
                                  log_path=self.log_path, env=self.environment(self.rundir))
        t0 = time.monotonic()
        self.wait_until(lambda: self.status() is not None, "ready (every switch programmed)", timeout_s)
        net.wait_connected("p4runtime", max(1.0, timeout_s - (time.monotonic() - t0)))

    def status(self) -> dict | None:
        """What the app reported once every switch was programmed, None before."""
        try:
            return json.loads((self.rundir / STATUS).read_text()) if self.rundir else None
        except (OSError, ValueError):
            return None

    def network_ready(self, net) -> dict:
        """Mode, program and how long programming the switches took, for the trial environment."""
        status = self.status() or {}
        return {f"p4rt_{key}": status[key] for key in ("mode", "program", "programming_s",
                                                         "programming_max_switch_s", "entries") if key in status}

    def listening(self) -> bool:
        """True while the app runs and has programmed its switches."""
        return self.proc is not None and self.proc.alive() and self.status() is not None

    def health(self) -> str | None:
        """The app's end if it ended; None while it serves."""
        problem = super().health()
        if problem and self.proc is not None and self.proc.alive():
            return "the P4Runtime controller has not programmed its switches"
        return problem

    def endpoints(self) -> dict[str, str]:
        """The switches' gRPC servers it dials ('p4runtime'), once connected."""
        return {"p4runtime": ",".join(f"{n}={s['address']}" for n, s in self.switches.items())}

    def query_version(self) -> str:
        """sdnbench's version and the P4Runtime bindings'."""
        try:
            from importlib.metadata import version

            bindings = f", p4runtime {version('p4runtime')}"
        except Exception:
            bindings = ""
        return f"sdnbench-p4rt {sdnbench.__version__}{bindings}"


#: The adapter this module registers (sdnbench.controllers.ADAPTER_MODULES).
ADAPTER = P4rtAdapter
