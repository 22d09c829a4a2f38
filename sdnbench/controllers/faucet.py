"""Faucet (PyPI) with a faucet.yaml generated for the network under test.

Faucet needs every switch's datapath ID and port numbers in its config. The
emulation layer provides them before start() as
``spec.options["datapaths"] = {dpid: [port, ...]}`` (a port count instead of a
list means ports 1..count; a string dpid is hexadecimal, as Mininet writes it).
All ports are untagged members of one VLAN (spec.options["vid"], default 100),
so Faucet acts as a learning switch; a topology with loops would also need
Faucet stacking, which this adapter does not generate.

For southbound load (spec.options["southbound"], set by the runner when
sdnbench-ofload emulates the switches) the config is made benchmark-suitable
(SOUTHBOUND_* below, each setting with its reason, also written as comments
into the file) and southbound_profile() tells ofload to raise PACKET_INs the
way Faucet's own pipeline would: reason ACTION from the eth_src table, with
Faucet's cookie, tagged with the port's native VLAN.

Faucet speaks OpenFlow 1.3 only. Its launcher execs `osken-manager` from PATH,
so the venv's bin goes first. Prometheus metrics are served on 127.0.0.1 at
spec.rest_port, or at a free port chosen at start (see endpoints()).
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from ..errors import ControllerError
from ..paths import venv_python
from .base import Availability, SouthboundProfile
from .process import ProcessAdapter, free_port, run_version, venv_availability

VLAN_NAME = "sdnbench"
DEFAULT_VID = 100
#: Faucet's default dp cookie (faucet/dp.py); with strict_packet_in_cookie (default) it
#: ignores every PACKET_IN whose cookie differs.
FAUCET_COOKIE = 1524372928
#: The eth_src (learning) table's id in the pipeline of the configs written here (no ACLs,
#: no routing): vlan 0, eth_src 1, eth_dst 2, flood 3. A miss there sends the packet up.
ETH_SRC_TABLE = 1
#: Hosts per emulated switch for southbound runs. Faucet answers a host's first PACKET_IN
#: only (later ones within cache_update_guard_time, default timeout/2 = 150 s, get nothing),
#: so no host may come round twice in a run; at Faucet's ~1-2k learns/s this lasts hours.
SOUTHBOUND_MACS_PER_SWITCH = 1_000_000
#: Throughput-mode window per switch: ofload's automatic one (1,048,576/switches) queues far
#: more than Faucet learns within ofload's 2 s timeout, so nearly every request would time
#: out; 16 per switch keeps Faucet's input full (measured: 4, 16 and 64 give the same rate).
SOUTHBOUND_WINDOW = 16

#: Settings for southbound runs, per level of faucet.yaml: key -> (value, why).
SOUTHBOUND_DP = {
    "cookie": (FAUCET_COOKIE, "Faucet's default, written out: the emulated switches put it in every PACKET_IN"),
    "ignore_learn_ins": (0, "default 10 drops every 10th PACKET_IN of a second unanswered; 0 answers all"),
    "metrics_rate_limit_sec": (1, "default 0 re-exports a port's whole MAC table to Prometheus on every learn; "
                                  "with all emulated hosts behind one port that is O(hosts) per PACKET_IN and "
                                  "the rate falls through the run (1.3k/s -> 0.13k/s in 8 s)"),
}
SOUTHBOUND_VLAN = {"max_hosts": (0, "default 256: past it Faucet installs a learning ban flow and answers no new host")}
SOUTHBOUND_PORT = {"max_hosts": (0, "default 255 per port, same ban; every emulated host sits behind port 1")}


def parse_dpid(dpid) -> int:
    """A datapath ID as int: ints stay, strings are hexadecimal ('0000000000000001', '0x1')."""
    if isinstance(dpid, bool):
        raise ValueError(f"datapath id {dpid!r} is not a number")
    if isinstance(dpid, int):
        value = dpid
    else:
        text = str(dpid).strip().lower()
        value = int(text[2:] if text.startswith("0x") else text, 16)
    if not 0 < value < 2 ** 64:
        raise ValueError(f"datapath id {dpid!r} out of range 1..2^64-1")
    return value


def port_list(ports) -> list[int]:
    """Port numbers from a list, or 1..n from a count."""
    if isinstance(ports, int) and not isinstance(ports, bool):
        numbers = list(range(1, ports + 1))
    else:
        numbers = [int(p) for p in ports]
    if not numbers or any(p < 1 for p in numbers) or len(set(numbers)) != len(numbers):
        raise ValueError(f"ports {ports!r}: expected distinct numbers >= 1 or a count >= 1")
    return sorted(numbers)


def faucet_config(datapaths: dict, vid: int = DEFAULT_VID, southbound: bool = False) -> dict:
    """The faucet.yaml content: one dp per datapath, every port untagged in one VLAN
    (with the SOUTHBOUND_* settings when emulated switches load it)."""
    if not datapaths:
        raise ValueError("no datapaths: Faucet needs each switch's dpid and ports")
    if not 1 <= int(vid) <= 4094:
        raise ValueError(f"vid {vid}: expected 1..4094")
    def extra(settings: dict) -> dict:
        return {k: value for k, (value, _) in settings.items()} if southbound else {}

    dps = {}
    for raw, ports in datapaths.items():
        dpid = parse_dpid(raw)
        name = f"sw{dpid:x}"
        if name in dps:
            raise ValueError(f"datapath id {raw!r} given twice")
        dps[name] = {
            "dp_id": dpid,
            "hardware": "Open vSwitch",
            "interfaces": {p: {"native_vlan": VLAN_NAME, **extra(SOUTHBOUND_PORT)} for p in port_list(ports)},
            **extra(SOUTHBOUND_DP),
        }
    return {"vlans": {VLAN_NAME: {"vid": int(vid), **extra(SOUTHBOUND_VLAN)}}, "dps": dps}


def southbound_comments() -> str:
    """The reasons for the southbound settings, as YAML comments for the file's head."""
    lines = ["# Southbound load (sdnbench-ofload emulates the switches): settings that differ from",
             "# Faucet's defaults, and why."]
    for level, settings in (("dps", SOUTHBOUND_DP), ("vlans", SOUTHBOUND_VLAN), ("interfaces", SOUTHBOUND_PORT)):
        lines += [f"#   {level}.{key}: {value} -- {why}" for key, (value, why) in settings.items()]
    lines.append("# Kept: timeout (300 s) and cache_update_guard_time (150 s); ofload presents every host once.")
    return "\n".join(lines) + "\n"


class FaucetAdapter(ProcessAdapter):
    """Faucet with a generated single-VLAN configuration, OpenFlow 1.3."""

    kind = "faucet"
    venv = "faucet"
    openflow_versions = ("1.3",)

    def __init__(self, spec, tracker=None):
        super().__init__(spec, tracker)
        self.prometheus_port: int | None = spec.rest_port
        self.config_path: Path | None = None

    @classmethod
    def availability(cls) -> Availability:
        """Is the faucet venv there, does Faucet import, is osken-manager beside it?"""
        avail = venv_availability("faucet", ["-c", "import faucet.faucet; from importlib.metadata "
                                             "import version; print(version('faucet'))"], "Faucet")
        manager = venv_python("faucet").parent / "osken-manager"
        if avail.ok and not manager.exists():
            return Availability(False, f"Faucet is installed but {manager} is missing", avail.fix)
        return avail

    def paths(self, rundir: Path) -> dict[str, Path]:
        """Files Faucet reads and writes in the run directory."""
        base = Path(rundir) / self.spec.label
        return {"config": base.with_name(f"{self.spec.label}-faucet.yaml"),
                "log": base.with_name(f"{self.spec.label}-faucet-app.log"),
                "exception_log": base.with_name(f"{self.spec.label}-faucet-exception.log")}

    def prepare(self, rundir: Path) -> None:
        """Write faucet.yaml from spec.options['datapaths']."""
        datapaths = self.spec.options.get("datapaths")
        southbound = bool(self.spec.options.get("southbound"))
        try:
            config = faucet_config(datapaths or {}, self.spec.options.get("vid", DEFAULT_VID), southbound)
        except (ValueError, TypeError) as exc:
            raise ControllerError(f"{self.spec.label}: cannot write faucet.yaml: {exc} "
                                  "(spec.options['datapaths'] = {dpid: [ports]})") from None
        self.config_path = self.paths(rundir)["config"]
        head = southbound_comments() if southbound else ""
        self.config_path.write_text(head + yaml.safe_dump(config, sort_keys=True))
        if self.prometheus_port is None:
            self.prometheus_port = free_port()

    def environment(self, rundir: Path) -> dict[str, str]:
        """FAUCET_* variables and a PATH that finds the venv's osken-manager first."""
        paths = self.paths(rundir)
        env = dict(os.environ)
        env.update({
            "PATH": f"{venv_python('faucet').parent}{os.pathsep}{env.get('PATH', '')}",
            "FAUCET_CONFIG": str(paths["config"]),
            "FAUCET_LOG": str(paths["log"]),
            "FAUCET_EXCEPTION_LOG": str(paths["exception_log"]),
            "FAUCET_PROMETHEUS_ADDR": "127.0.0.1",
            "FAUCET_PROMETHEUS_PORT": str(self.prometheus_port),
        })
        return env

    def command(self, rundir: Path) -> list[str]:
        """The venv's `faucet` script with os-ken listen flags."""
        return [str(venv_python("faucet").parent / "faucet"),
                f"--ryu-ofp-tcp-listen-port={self.spec.port}", f"--ryu-ofp-listen-host={self.spec.host}"]

    def endpoints(self) -> dict[str, str]:
        """OpenFlow, and Prometheus metrics once a port is chosen (Faucet has no REST API)."""
        ends = {"openflow": f"tcp:{self.spec.host}:{self.spec.port}"}
        if self.prometheus_port:
            ends["prometheus"] = f"http://127.0.0.1:{self.prometheus_port}/metrics"
        return ends

    def southbound_profile(self) -> SouthboundProfile:
        """PACKET_INs as Faucet's pipeline raises them: a miss in the eth_src table is an
        explicit output to the controller (reason ACTION) under Faucet's cookie, after the
        vlan table pushed the port's native VLAN, which Faucet needs to learn the host."""
        return SouthboundProfile(
            packet_in_reason="action", packet_in_table=ETH_SRC_TABLE, packet_in_cookie=FAUCET_COOKIE,
            vlan=int(self.spec.options.get("vid", DEFAULT_VID)), min_macs_per_switch=SOUTHBOUND_MACS_PER_SWITCH,
            throughput_window=SOUTHBOUND_WINDOW,
            why="Faucet answers only PACKET_INs its pipeline raises (cookie, reason, native VLAN) "
                "and each host once (learning)")

    def query_version(self) -> str:
        """Faucet's version and the os-ken it runs on."""
        py = str(venv_python("faucet"))
        return run_version([py, "-c", "from importlib.metadata import version as v; "
                                      "print(f\"faucet {v('faucet')} (os-ken {v('os-ken')})\")"])


#: The adapter this module registers (sdnbench.controllers.ADAPTER_MODULES).
ADAPTER = FaucetAdapter
