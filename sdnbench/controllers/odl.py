"""OpenDaylight Potassium (OpenFlow plugin + RESTCONF), built from Maven Central by scripts/install-odl.sh.

Every start boots a fresh Karaf base in the run directory (odl_base.py: its
configuration and why), with a bounded Java heap (spec.options["heap"],
default 1g) and the cores of spec.cpus. start() returns once the OpenFlow port
listens and RESTCONF answers; Karaf's log is read only to tell a failed or
stalled boot (a first boot takes 45-100 s here; a boot that stalls is
replaced by one fresh boot, see odl_boot.py). stop() lets Karaf shut down (about 6 s), then escalates to
SIGTERM and SIGKILL by process group.

This release has no reactive forwarding application (the l2switch project
ended years ago): switches forward only what is programmed. Once the network
is up, network_ready() waits until every switch is in the inventory and, with
spec.options["forwarding"] = "proactive" (the default), writes shortest-path
forwarding for every host pair through RESTCONF (sdnbench.forwarding). The
southbound benchmark, which measures answers to PACKET_INs, does not apply.

OpenFlow 1.3 only: sdnbench programs and checks OpenDaylight's flows in
OpenFlow 1.3's model; openflowplugin's OpenFlow 1.0 path is not tested here.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

from ..errors import ControllerError
from ..forwarding.odl import OdlFlowProgrammer
from ..forwarding.programmer import program_topology
from ..paths import controllers_dir
from ..restclient import RestClient
from .base import Availability, SouthboundProfile
from .odl_base import FIXED_PORTS, make_base, tidy_base
from .odl_boot import KarafBoot
from .process import ProcessAdapter, free_port, port_listening

INSTALL_FIX = "scripts/install-controllers.sh odl   (or: make controllers)"
DEFAULT_REST_PORT = 8181
DEFAULT_HEAP = "1g"
CREDENTIALS = "admin:admin"     # the distribution's default RESTCONF user
#: Karaf shuts down in ~6 s on SIGTERM; after this it is killed.
STOP_GRACE_S = 30.0


def home() -> Path:
    """The Karaf distribution install-odl.sh builds."""
    return controllers_dir() / "odl" / "karaf"


def build_info() -> dict[str, str]:
    """The key=value facts install-odl.sh wrote next to the distribution (empty when missing)."""
    try:
        lines = (home() / "sdnbench-odl.properties").read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in lines if "=" in line)


def java_version(java_home: str) -> str:
    """JAVA_VERSION of a JDK's release file ('?' when unreadable)."""
    try:
        for line in (Path(java_home) / "release").read_text().splitlines():
            if line.startswith("JAVA_VERSION="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return "?"


class BootStalled(ControllerError):
    """OpenDaylight's boot stopped progressing (odl_boot.KarafBoot)."""


class OdlAdapter(ProcessAdapter):
    """OpenDaylight in a fresh Karaf base per start, OpenFlow and RESTCONF on loopback."""

    kind = "odl"
    openflow_versions = ("1.3",)
    openflow_note = ("sdnbench runs OpenDaylight with OpenFlow 1.3: its flows are written and checked "
                     "in OpenFlow 1.3's model, and openflowplugin's 1.0 support is not tested here")
    typical_start_s = 75.0      # 45-100 s to ready here (docs/controllers.md)

    def __init__(self, spec, tracker=None):
        super().__init__(spec, tracker)
        self.rest_port = spec.rest_port or DEFAULT_REST_PORT
        self.base: Path | None = None
        self.started_s: float | None = None
        self.boot_attempts = 0
        self._boot: KarafBoot | None = None

    @classmethod
    def availability(cls) -> Availability:
        """Is the distribution built, and is its JDK still there?"""
        info = build_info()
        karaf = home() / "bin" / "karaf"
        if not karaf.exists() or not info:
            return Availability(False, f"OpenDaylight is not built: no {karaf}", INSTALL_FIX)
        java = Path(info.get("java_home", "")) / "bin" / "java"
        if not java.exists():
            return Availability(False, f"the JDK OpenDaylight was built with is gone: {java}",
                                "apt-get install -y openjdk-17-jdk-headless; then " + INSTALL_FIX)
        return Availability(True, f"{cls.describe(info)} in {home()}")

    @staticmethod
    def describe(info: dict[str, str]) -> str:
        """The version line of a build."""
        return (f"OpenDaylight Potassium (openflowplugin {info.get('openflowplugin', '?')}, "
                f"netconf {info.get('netconf', '?')}, odlparent {info.get('odlparent', '?')}) "
                f"on Java {java_version(info.get('java_home', ''))}")

    def query_version(self) -> str:
        """What install-odl.sh built."""
        info = build_info()
        return self.describe(info) if info else "OpenDaylight (not built)"

    def usable(self) -> Availability:
        """Checked at every start: the cheap check is the full one."""
        return self.availability()

    def heap(self) -> str:
        """Maximum Java heap, e.g. '1g'."""
        return str(self.spec.options.get("heap", DEFAULT_HEAP))

    def prepare(self, rundir: Path) -> None:
        """Refuse busy ports, then write a fresh Karaf base in the run directory."""
        busy = {self.rest_port: "RESTCONF"} if port_listening("127.0.0.1", self.rest_port) else {}
        busy.update({p: what for p, what in FIXED_PORTS.items() if port_listening("127.0.0.1", p)})
        if busy:
            ports = ", ".join(f"{p} ({what})" for p, what in sorted(busy.items()))
            raise ControllerError(f"{self.spec.label}: TCP ports already in use: {ports}; is another "
                                  "OpenDaylight running? Only one runs per machine.")
        self.base = Path(rundir) / f"{self.spec.label}-karaf"
        make_base(home(), self.base, self.spec.host, self.spec.port, free_port(self.spec.host), self.rest_port)

    def environment(self, rundir: Path) -> dict[str, str]:
        """Karaf's variables: the per-run base, the JDK, a bounded heap, exec instead of a wrapper shell."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KARAF_", "JAVA_"))}
        env.update({
            "JAVA_HOME": build_info().get("java_home", ""),
            "KARAF_BASE": str(self.base),
            # bin/karaf then execs java: the PID sdnbench records is the JVM's.
            "KARAF_EXEC": "exec",
            # -Xms/-Xmx: Karaf 4.4's unix scripts ignore JAVA_MAX_MEM. No heap dump: up to
            # the heap's size written into the run directory on an OutOfMemoryError.
            "EXTRA_JAVA_OPTS": f"-Xms256m -Xmx{self.heap()} -XX:-HeapDumpOnOutOfMemoryError",
        })
        return env

    def workdir(self) -> Path | None:
        """The base: OpenDaylight writes its datastore journal into the working directory."""
        return self.base

    def command(self, rundir: Path) -> list[str]:
        """bin/karaf server: no local console, SSH console on loopback."""
        return [str(home() / "bin" / "karaf"), "server"]

    def karaf_log(self) -> Path | None:
        """Karaf's own log of this start."""
        return self.base / "data" / "log" / "karaf.log" if self.base else None

    def start(self, rundir: Path, timeout_s: float = 300.0) -> None:
        """Start and return once OpenFlow listens and RESTCONF answers (Karaf's log only tells failure).

        A boot that stalls (odl_boot: its bundle counts stop changing) is stopped, its base kept
        beside the next as <label>-karaf-stalled, and one fresh boot is tried in the time left."""
        t0 = time.monotonic()
        deadline = t0 + timeout_s
        for attempt in (1, 2):
            try:
                super().start(rundir, timeout_s)
                self._wait_ready(deadline)
                break
            except BootStalled as exc:
                if attempt == 2 or time.monotonic() >= deadline:
                    raise ControllerError(f"{exc}\nKaraf log {self.karaf_log()}:\n{self._boot.diagnosis()}") from None
                self._set_aside_stalled(Path(rundir))
            except ControllerError as exc:
                diagnosis = self._boot.diagnosis() if self._boot else ""
                if not diagnosis:
                    raise
                raise ControllerError(f"{exc}\nKaraf log {self.karaf_log()}:\n{diagnosis}") from None
        self.boot_attempts = attempt
        self.started_s = time.monotonic() - t0

    def _wait_listening(self, timeout_s: float) -> None:
        """Nothing to wait for yet: the OpenFlow port opens only after System ready (_wait_ready)."""
        self._boot = KarafBoot(self.karaf_log())

    def _wait_ready(self, deadline: float) -> None:
        client = self.client(timeout_s=5.0)
        while True:
            state = self._boot.state()
            if state == "failed":
                self.stop()
                raise ControllerError(f"{self.spec.label}: OpenDaylight's readiness check failed")
            if state == "stalled":
                self.stop()
                raise BootStalled(f"{self.spec.label}: OpenDaylight's boot stalled (no bundle started "
                                  f"or stopped waiting for {self._boot.stall_s:g} s)")
            # openflowplugin opens its ports only once the system is ready: the ports and RESTCONF
            # decide, not the log line (Karaf's log configuration has been seen reset mid-boot).
            if self.listening() and self._rest_answers(client):
                return
            if not self.pids():
                self.stop()
                raise ControllerError(f"{self.spec.label}: OpenDaylight exited during boot; log {self.log_path}")
            if time.monotonic() >= deadline:
                self.stop()
                said = "Karaf said System ready, but " if state == "ready" else ""
                raise ControllerError(f"{self.spec.label}: {said}OpenFlow on {self.spec.host}:{self.spec.port} "
                                      f"or RESTCONF on 127.0.0.1:{self.rest_port} not ready")
            time.sleep(0.5)

    def _set_aside_stalled(self, rundir: Path) -> None:
        """Keep a stalled boot's base and console log for a post-mortem; the next boot starts afresh."""
        aside = rundir / f"{self.spec.label}-karaf-stalled"
        if aside.exists():
            shutil.rmtree(aside)
        if self.base is not None and self.base.exists():
            self.base.rename(aside)
        if self.log_path is not None and self.log_path.exists():
            self.log_path.rename(aside / self.log_path.name)

    @staticmethod
    def _rest_answers(client: RestClient) -> bool:
        try:
            return client.get("/rests/data/network-topology:network-topology").ok
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM the JVM and give Karaf STOP_GRACE_S to shut down, then escalate; tidy the base."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + STOP_GRACE_S
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        super().stop()
        if self.base is not None and self.base.exists():
            tidy_base(self.base)

    def client(self, timeout_s: float = 10.0) -> RestClient:
        """A RESTCONF client with the distribution's credentials."""
        return RestClient(f"http://127.0.0.1:{self.rest_port}", CREDENTIALS, timeout_s)

    def endpoints(self) -> dict[str, str]:
        """OpenFlow and RESTCONF (basic auth admin:admin)."""
        return {"openflow": f"tcp:{self.spec.host}:{self.spec.port}", "rest": f"http://127.0.0.1:{self.rest_port}"}

    def inventory(self) -> set[int]:
        """Datapath IDs of the switches in OpenDaylight's operational inventory."""
        return self.flow_programmer().switches()

    def wait_inventory(self, dpids: set[int], timeout_s: float = 60.0) -> float:
        """Wait until every dpid is in the inventory; seconds it took."""
        t0 = time.monotonic()
        seen: set[int] = set()
        while time.monotonic() - t0 < timeout_s:
            try:
                seen = self.inventory()
            except OSError:
                seen = set()
            if dpids <= seen:
                return time.monotonic() - t0
            time.sleep(0.5)
        missing = sorted(dpids - seen)
        raise ControllerError(f"{self.spec.label}: {len(missing)} of {len(dpids)} switches not in OpenDaylight's "
                              f"inventory after {timeout_s:g} s: {', '.join(f'openflow:{d}' for d in missing[:8])}")

    def network_ready(self, net) -> dict:
        """Every switch in the inventory, then proactive forwarding (unless options say none)."""
        from ..emulation.network import port_plan

        facts = {"controller_start_s": round(self.started_s or 0.0, 2), "controller_heap": self.heap(),
                 "controller_boot_attempts": self.boot_attempts,
                 "inventory_s": round(self.wait_inventory({s.dpid for s in net.graph.switches}), 2)}
        mode = self.spec.options.get("forwarding", "proactive")
        if mode == "none":
            return {**facts, "forwarding": "none"}
        if mode != "proactive":
            raise ControllerError(f"{self.spec.label}: options.forwarding must be proactive or none, not {mode!r}")
        report = program_topology(self.flow_programmer(), net.graph, port_plan(net.graph))
        return {**facts, **report.environment()}

    def flow_programmer(self) -> OdlFlowProgrammer:
        """Flows written over RESTCONF."""
        return OdlFlowProgrammer(self.client())

    def southbound_profile(self) -> SouthboundProfile:
        """Nothing to measure: no application answers PACKET_INs."""
        return SouthboundProfile(reactive=False, why="not applicable: OpenDaylight runs no reactive application "
                                                     "(this release has none), so it answers no PACKET_IN")


#: The adapter this module registers (sdnbench.controllers.ADAPTER_MODULES).
ADAPTER = OdlAdapter
