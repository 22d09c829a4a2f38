"""bmv2 P4 switches: one `simple_switch_grpc` process per switch, programmed by a controller over P4Runtime.

Each switch is a Mininet Switch whose start() runs
`simple_switch_grpc --device-id N -i P@sN-ethP ... --thrift-port T --no-p4 --
--grpc-server-addr 127.0.0.1:G --cpu-port 255`, so port P is interface sN-ethP
as on Open vSwitch and workloads, reachability and link faults work unchanged.
The process starts with no program (`--no-p4`): the controller dials its gRPC
server, arbitrates and pushes the pipeline, and the switch counts as connected
once a pipeline is installed. Every process goes into the run manifest before
it runs (OwnedProcess's gate) and is stopped by PID; `sdnbench clean` finds a
killed run's switches there.

bmv2 is in no registry sdnbench installs from: the binary is found through
SDNBENCH_BMV2 (the program or its directory), then PATH.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from functools import partial
from pathlib import Path

from ...errors import CapabilityError
from ...procs import OwnedProcess, wait_for
from ..capabilities import Capability
from ..offload import disable_offloads_root, offload_off_command
from .base import SwitchKind

ENV = "SDNBENCH_BMV2"
BINARY = "simple_switch_grpc"
CPU_PORT = 255
#: How long a new switch has to open its gRPC port (bmv2 takes 1-3 s on a busy 2-core machine).
START_TIMEOUT_S = 10.0
INSTALL = ("bmv2 is in neither Debian's nor PyPI's registries: on Ubuntu add the p4lang repository "
           "(https://build.opensuse.org/project/show/home:p4lang) and `apt-get install p4lang-bmv2`, or build "
           "https://github.com/p4lang/behavioral-model from source with PI (docs/p4.md); then put "
           f"{BINARY} on PATH or set {ENV}=/path/to/{BINARY}")


def bmv2_binary(given: str | None = None) -> Path | None:
    """simple_switch_grpc: given (a file or its directory), else $SDNBENCH_BMV2, else PATH; None if absent."""
    for choice in (given, os.environ.get(ENV)):
        if choice:
            path = Path(choice).expanduser()
            path = path / BINARY if path.is_dir() else path
            return path if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which(BINARY)
    return Path(found) if found else None


def bmv2_version(binary: Path) -> str:
    """`simple_switch_grpc --version`, or '?' when it does not answer."""
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else "?"


def switch_command(binary: Path, device_id: int, ports: dict[int, str], thrift_port: int, grpc_port: int) -> list[str]:
    """The argv of one switch: ports {number: interface}, no program until the controller pushes one."""
    argv = [str(binary), "--device-id", str(device_id)]
    for number, intf in sorted(ports.items()):
        argv += ["-i", f"{number}@{intf}"]
    return argv + ["--thrift-port", str(thrift_port), "--no-p4", "--",
                   "--grpc-server-addr", f"127.0.0.1:{grpc_port}", "--cpu-port", str(CPU_PORT)]


def free_ports(count: int) -> list[int]:
    """count distinct TCP ports nothing listens on now (all bound at once, so none repeats)."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def accepts(port: int) -> bool:
    """True when 127.0.0.1:port takes a TCP connection."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class P4Switch(SwitchKind):
    """bmv2 simple_switch_grpc processes; a P4Runtime controller dials them (endpoints(), device_ids())."""

    name = "p4"
    southbound = "p4runtime"

    def __init__(self, graph, manifest, openflow="1.3", fail_mode="secure", datapath="auto"):
        super().__init__(graph, manifest, openflow, fail_mode, datapath)
        self.datapath = "bmv2"
        self.binary = bmv2_binary()
        #: switch -> P4Runtime device id (its dpid, so tables and logs name switches alike)
        self.ids = {s.name: s.dpid for s in graph.switches}
        self.grpc: dict[str, int] = {}
        self.thrift: dict[str, int] = {}
        self.processes: dict[str, OwnedProcess] = {}

    @classmethod
    def availability(cls) -> Capability:
        """simple_switch_grpc is found ($SDNBENCH_BMV2 or PATH) and runs."""
        binary = bmv2_binary()
        if binary is None:
            where = f"{ENV}={os.environ[ENV]} is not an executable {BINARY}" if os.environ.get(ENV) else \
                f"{BINARY} (bmv2) not found on PATH"
            return Capability("bmv2", False, where, INSTALL)
        return Capability("bmv2", True, f"{bmv2_version(binary)} at {binary}")

    def mininet_switch(self):
        """A Mininet Switch whose start() runs this kind's process for it."""
        from mininet.node import Switch

        kind = self

        class Bmv2Switch(Switch):
            """One simple_switch_grpc process; its interfaces are Mininet's sN-ethP."""

            def start(self, controllers):
                kind.start_switch(self.name, {port: intf.name for intf, port in self.ports.items()
                                              if intf.name != "lo"})

            def stop(self, deleteIntfs=True):
                kind.stop_switch(self.name)
                super().stop(deleteIntfs)

        return partial(Bmv2Switch)

    def prepare(self) -> None:
        """Refuse when bmv2 is missing; choose each switch's gRPC and Thrift ports."""
        if self.binary is None:
            cap = self.availability()
            raise CapabilityError(f"{cap.detail}; fix: {cap.fix}")
        names = [s.name for s in self.graph.switches]
        ports = free_ports(2 * len(names))
        self.grpc = dict(zip(names, ports[:len(names)]))
        self.thrift = dict(zip(names, ports[len(names):]))

    def command(self, name: str, ports: dict[int, str]) -> list[str]:
        """The argv of switch name with its ports {number: interface}."""
        return switch_command(self.binary, self.ids[name], ports, self.thrift[name], self.grpc[name])

    def log_path(self, name: str) -> Path | None:
        """Where switch name's output goes: beside the run manifest."""
        if self.manifest is None:
            return None
        return self.manifest.path.parent / "switches" / f"{name}.log"

    def start_switch(self, name: str, ports: dict[int, str]) -> None:
        """Run one switch (recorded in the manifest before it runs); wait_listening() waits for it."""
        log = self.log_path(name)
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
        self.processes[name] = OwnedProcess.spawn(self.command(name, ports), f"switch:{name}", self.manifest,
                                                  log_path=log)

    def wait_listening(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Return once every started switch's gRPC port accepts; CapabilityError naming the first switch
        that exited or stayed closed, with its log. The switches start side by side, so a network of
        many waits about as long as one."""
        pending = dict(self.processes)

        def settled() -> bool:
            for name, proc in list(pending.items()):
                if not proc.alive():
                    return True
                if accepts(self.grpc[name]):
                    del pending[name]
            return not pending

        wait_for(settled, timeout_s, 0.05)
        for name, proc in pending.items():
            what = "exited" if not proc.alive() else f"did not open 127.0.0.1:{self.grpc[name]} in {timeout_s:g} s"
            raise CapabilityError(f"bmv2 switch {name} {what}; log {self.log_path(name)}:\n{proc.log_tail()}")

    def stop_switch(self, name: str) -> None:
        """Stop one switch's process by PID (released in the manifest)."""
        proc = self.processes.pop(name, None)
        if proc is not None:
            proc.stop(grace_s=3.0)

    def started(self, net) -> None:
        """Every switch listening; offloads off on every switch and host interface (bmv2 reads and writes
        frames in userspace)."""
        self.wait_listening()
        disable_offloads_root([i.name for s in net.switches for i in s.intfList()
                               if i.name != "lo" and Path(f"/sys/class/net/{i.name}").exists()])
        for host in net.hosts:
            host.cmd("; ".join(offload_off_command(i.name) for i in host.intfList() if i.name != "lo"))

    def attach(self, target: str) -> None:
        """Nothing to point: P4 switches listen and the controller dials them (endpoints())."""

    def endpoints(self) -> dict[str, str]:
        """switch -> its P4Runtime gRPC address (known once prepare() chose the ports)."""
        return {name: f"127.0.0.1:{port}" for name, port in self.grpc.items()}

    def device_ids(self) -> dict[str, int]:
        """switch -> its P4Runtime device id."""
        return dict(self.ids)

    def connected(self) -> set[str]:
        """Switches whose forwarding pipeline is installed (a P4Runtime read, no arbitration needed)."""
        from ...p4.runtime import P4RuntimeClient

        up = set()
        for name, address in self.endpoints().items():
            if name not in self.processes or not self.processes[name].alive():
                continue
            client = None
            try:
                client = P4RuntimeClient(address, self.ids[name], timeout_s=1.0)
                if client.get_pipeline() is not None:
                    up.add(name)
            except Exception:   # not up yet, or a gRPC error: not connected; the caller waits and asks again
                pass
            finally:
                if client is not None:
                    client.close()
        return up

    def teardown(self) -> None:
        """Stop the switches Mininet did not (after a failed start)."""
        for name in list(self.processes):
            self.stop_switch(name)

    def describe(self) -> dict:
        """Switch kind, datapath, and which bmv2 ran."""
        out = super().describe()
        if self.binary is not None:
            out.update(bmv2_path=str(self.binary), bmv2_version=bmv2_version(self.binary))
        return out
