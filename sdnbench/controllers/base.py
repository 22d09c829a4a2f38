"""The contract every controller adapter fulfils.

An adapter owns one controller process (or, for `remote`, none): it starts it
with logs in the run directory, returns from `start()` only once the OpenFlow
port listens (OVS backs off 1/2/4/8/16 s on a refused connection, so starting
switches early wastes seconds), and stops exactly the processes it started.
Whether every switch has connected is checked from the switch side by the
emulation layer, which works the same for every controller.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ControllerError


@dataclass
class ControllerSpec:
    """What an experiment says about one controller under test."""

    kind: str                      # osken, ryu, faucet, testcontroller, pox, remote, none
    label: str                     # column name in tables; defaults to kind
    openflow: str = "1.3"          # "1.0" or "1.3"
    app: str | None = None         # adapter-specific application choice
    cpus: int | None = None        # pin the controller to this many cores
    fail_mode: str | None = None   # switch fail mode with this controller (None: the network's)
    host: str = "127.0.0.1"        # remote: where it runs
    port: int = 6653               # OpenFlow TCP port
    rest_port: int | None = None   # northbound REST port, when the controller has one
    rest_url: str | None = None    # remote: REST base URL, recorded with the results
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SouthboundProfile:
    """How emulated switches (sdnbench-ofload) must raise PACKET_INs for this controller to answer them.

    The defaults are cbench's: table-miss PACKET_INs from table 0, cookie 0,
    untagged frames, any number of hosts. A controller that accepts only the
    PACKET_INs its own flows raise says here what those look like.
    """

    packet_in_reason: str = "no-match"     # or "action": an explicit output to the controller
    packet_in_table: int = 0
    packet_in_cookie: int = 0
    vlan: int | None = None                # 802.1Q VID the switch pipeline pushes before the PACKET_IN
    min_macs_per_switch: int = 0           # hosts per switch the run needs (controller answers a host once)
    throughput_window: int | None = None   # PACKET_INs outstanding per switch in throughput mode, unless set
    reactive: bool = True                  # False: no application answers PACKET_INs (nothing to measure)
    why: str = ""                          # recorded with the trial


@dataclass
class Availability:
    """Whether an adapter can run here, and if not, the command that fixes it."""

    ok: bool
    detail: str
    fix: str | None = None


class ControllerAdapter(ABC):
    """Start, check and stop one controller."""

    kind: str = ""
    #: OpenFlow versions the adapter's application speaks.
    openflow_versions: tuple[str, ...] = ("1.0", "1.3")
    #: Why other versions are refused, added to the refusal when set.
    openflow_note: str = ""
    #: True when no controller process is involved (the "no SDN" baseline).
    standalone: bool = False
    #: Typical seconds from start() to ready on a machine of this kind, for run-time estimates.
    typical_start_s: float = 0.0
    #: Southbound protocols the adapter speaks: a switch kind whose `southbound` is not here is never
    #: paired with it (the plan leaves such pairs out and `check` says why).
    southbound: tuple[str, ...] = ("openflow",)

    def __init__(self, spec: ControllerSpec, tracker=None):
        self.spec = spec
        self.tracker = tracker   # sdnbench.procs.ProcessTracker recording PIDs in the run manifest

    @classmethod
    @abstractmethod
    def availability(cls) -> Availability:
        """Is this controller installed here? Cheap; used by check and doctor."""

    @abstractmethod
    def version(self) -> str:
        """The controller's version string, recorded with every trial."""

    @abstractmethod
    def start(self, rundir: Path, timeout_s: float = 30.0) -> None:
        """Start and return once the OpenFlow port listens; ControllerError otherwise."""

    @abstractmethod
    def stop(self) -> None:
        """Stop what start() started (by PID); safe to call twice."""

    @abstractmethod
    def listening(self) -> bool:
        """True while the OpenFlow port accepts connections."""

    def endpoints(self) -> dict[str, str]:
        """Addresses of the controller: 'openflow' always, 'rest' when it has one."""
        ends = {"openflow": f"tcp:{self.spec.host}:{self.spec.port}"}
        if self.spec.rest_url:
            ends["rest"] = self.spec.rest_url
        elif self.spec.rest_port:
            ends["rest"] = f"http://{self.spec.host}:{self.spec.rest_port}"
        return ends

    def health(self) -> str | None:
        """Why the controller is not serving now (its process gone, its port closed), or None. Cheap:
        called before, during and after every trial."""
        if self.standalone or self.listening():
            return None
        return f"OpenFlow port {self.spec.host}:{self.spec.port} is not listening"

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the controller's log (kept with a trial it failed), '' without one."""
        return ""

    def identity(self) -> str | None:
        """Which process serves now (PID and start time), to tell a restarted controller from the same one."""
        return None

    def send_signal(self, sig: int) -> None:
        """Signal the controller's processes (fault injection: SIGKILL, SIGSTOP, SIGCONT)."""
        raise ControllerError(f"{self.spec.label}: sdnbench runs no process of a {self.kind} controller "
                              "to signal")

    @classmethod
    def northbound_problem(cls, spec: ControllerSpec) -> str | None:
        """Why this controller, as specified, cannot take northbound (REST) load; None when it can."""
        return None

    def pids(self) -> list[int]:
        """PIDs of the processes this adapter runs (for CPU/RSS monitoring)."""
        return []

    @classmethod
    def refusal(cls, openflow: str) -> str | None:
        """Why this adapter refuses OpenFlow version `openflow`; None when it speaks it."""
        if openflow in cls.openflow_versions:
            return None
        note = f" ({cls.openflow_note})" if cls.openflow_note else ""
        return f"{cls.kind} speaks OpenFlow {' and '.join(cls.openflow_versions)} only, not {openflow!r}{note}"

    @classmethod
    def southbound_refusal(cls, switch_kind) -> str | None:
        """Why this adapter cannot control switches of switch_kind (a SwitchKind class); None when it can."""
        if switch_kind.southbound in cls.southbound:
            return None
        speaks = " or ".join(cls.southbound) or "no southbound protocol"
        return (f"{cls.kind} speaks {speaks}; {switch_kind.name} switches speak "
                f"{switch_kind.southbound or 'to no controller'}")

    def connect(self, net, timeout_s: float) -> None:
        """Connect the controller and every switch of net (an EmulatedNetwork); return once all are
        connected. Switches that dial (OpenFlow) are pointed at the controller's endpoint; a controller
        that dials listening switches (P4Runtime) overrides this and uses net.switch_endpoints()."""
        net.attach_controller(self.endpoints()["openflow"], timeout_s)

    def network_ready(self, net) -> dict:
        """Called once every switch of net (an EmulatedNetwork) is connected; returns facts for the
        trial environment. Controllers that forward only what they are told (OpenDaylight) program
        the network here; the others have nothing to do."""
        return {}

    def southbound_profile(self) -> SouthboundProfile:
        """How sdnbench-ofload's PACKET_INs must look for this controller; cbench's by default."""
        return SouthboundProfile()

    def flow_programmer(self):
        """The REST flow programmer (sdnbench.forwarding) that writes flows through this controller's
        northbound API; None for controllers sdnbench cannot program that way (reactive applications)."""
        return None
