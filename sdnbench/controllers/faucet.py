"""Faucet (PyPI) with a faucet.yaml generated for the network under test.

Faucet needs every switch's datapath ID and port numbers in its config. The
emulation layer provides them before start() as
``spec.options["datapaths"] = {dpid: [port, ...]}`` (a port count instead of a
list means ports 1..count; a string dpid is hexadecimal, as Mininet writes it).
All ports are untagged members of one VLAN (spec.options["vid"], default 100),
so Faucet acts as a learning switch; a topology with loops would also need
Faucet stacking, which this adapter does not generate.

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
from .base import Availability
from .process import ProcessAdapter, free_port, run_version, venv_availability

VLAN_NAME = "sdnbench"
DEFAULT_VID = 100


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


def faucet_config(datapaths: dict, vid: int = DEFAULT_VID) -> dict:
    """The faucet.yaml content: one dp per datapath, every port untagged in one VLAN."""
    if not datapaths:
        raise ValueError("no datapaths: Faucet needs each switch's dpid and ports")
    if not 1 <= int(vid) <= 4094:
        raise ValueError(f"vid {vid}: expected 1..4094")
    dps = {}
    for raw, ports in datapaths.items():
        dpid = parse_dpid(raw)
        name = f"sw{dpid:x}"
        if name in dps:
            raise ValueError(f"datapath id {raw!r} given twice")
        dps[name] = {
            "dp_id": dpid,
            "hardware": "Open vSwitch",
            "interfaces": {p: {"native_vlan": VLAN_NAME} for p in port_list(ports)},
        }
    return {"vlans": {VLAN_NAME: {"vid": int(vid)}}, "dps": dps}


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
        try:
            config = faucet_config(datapaths or {}, self.spec.options.get("vid", DEFAULT_VID))
        except (ValueError, TypeError) as exc:
            raise ControllerError(f"{self.spec.label}: cannot write faucet.yaml: {exc} "
                                  "(spec.options['datapaths'] = {dpid: [ports]})") from None
        self.config_path = self.paths(rundir)["config"]
        self.config_path.write_text(yaml.safe_dump(config, sort_keys=True))
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

    def query_version(self) -> str:
        """Faucet's version and the os-ken it runs on."""
        py = str(venv_python("faucet"))
        return run_version([py, "-c", "from importlib.metadata import version as v; "
                                      "print(f\"faucet {v('faucet')} (os-ken {v('os-ken')})\")"])
