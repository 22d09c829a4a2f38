"""A two-host Open vSwitch network in namespaces, for controller integration tests."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass


TOOLS = ("ovs-vsctl", "ovs-ofctl", "ip", "ethtool", "ping")
HOST_MACS = ("02:00:00:00:77:01", "02:00:00:00:77:02")
HOST_IPS = ("10.77.0.1", "10.77.0.2")
DPID = 0xABC


def run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command, failing the test with its stderr when check and it fails."""
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if check and out.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()}")
    return out


def netns_skip_reason() -> str | None:
    """Why integration tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces and Open vSwitch)"
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        return f"missing tools: {', '.join(missing)}"
    if subprocess.run(["ovs-vsctl", "--timeout=5", "show"], capture_output=True).returncode != 0:
        return "Open vSwitch is not running (ovsdb-server / ovs-vswitchd)"
    return None


@dataclass
class TwoHosts:
    """One userspace OVS bridge with two namespaced hosts on ports 1 and 2."""

    bridge: str
    namespaces: tuple[str, str]
    protocol: str

    def ofctl(self, *args: str) -> str:
        """ovs-ofctl with the bridge's OpenFlow version."""
        return run("ovs-ofctl", "-O", self.protocol, *args).stdout

    def flows(self) -> str:
        """The bridge's flow table as ovs-ofctl prints it."""
        return self.ofctl("dump-flows", self.bridge)

    def set_controller(self, target: str) -> None:
        """Point the bridge at a controller (secure fail mode: no controller, no forwarding)."""
        run("ovs-vsctl", "set-controller", self.bridge, target)

    def connected(self, timeout_s: float = 30.0) -> bool:
        """Wait until OVS reports the controller connection up."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out = run("ovs-vsctl", "--timeout=5", "get", "controller", self.bridge, "is_connected", check=False)
            if out.stdout.strip() == "true":
                return True
            time.sleep(0.2)
        return False

    def ping(self, count: int = 3) -> subprocess.CompletedProcess:
        """Ping host 2 from host 1."""
        return run("ip", "netns", "exec", self.namespaces[0], "ping", "-n", "-c", str(count), "-i", "0.2",
                   "-W", "1", HOST_IPS[1], check=False)

    def ping_until_reachable(self, attempts: int = 15) -> bool:
        """Single pings until one is answered (the first may race the controller's learning)."""
        return any(self.ping(1).returncode == 0 for _ in range(attempts))


def offloads_off(ifname: str, netns: str | None = None) -> None:
    """The userspace datapath needs checksum/segmentation offloads off on veths."""
    prefix = ["ip", "netns", "exec", netns] if netns else []
    run(*prefix, "ethtool", "-K", ifname, "tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off")


@contextmanager
def two_host_network(openflow: str):
    """Bridge sbctXXXXXX (netdev, secure fail mode) with hosts 10.77.0.1/.2 on ports 1/2; removed on exit."""
    protocol = {"1.0": "OpenFlow10", "1.3": "OpenFlow13"}[openflow]
    name = "sbct" + secrets.token_hex(3)
    namespaces = (f"{name}h1", f"{name}h2")
    veths = (f"{name}p1", f"{name}p2")
    try:
        run("ovs-vsctl", "add-br", name, "--", "set", "bridge", name, "datapath_type=netdev",
            f"protocols={protocol}", "fail_mode=secure", f"other-config:datapath-id={DPID:016x}",
            "other-config:disable-in-band=true")
        for i, (ns, veth) in enumerate(zip(namespaces, veths)):
            inner = f"{name}e{i + 1}"
            run("ip", "netns", "add", ns)
            run("ip", "link", "add", veth, "type", "veth", "peer", "name", inner, "netns", ns)
            offloads_off(veth)
            offloads_off(inner, ns)
            run("ip", "link", "set", veth, "up")
            run("ip", "-n", ns, "link", "set", inner, "address", HOST_MACS[i])
            run("ip", "-n", ns, "addr", "add", f"{HOST_IPS[i]}/24", "dev", inner)
            run("ip", "-n", ns, "link", "set", inner, "up")
            run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ovs-vsctl", "add-port", name, veth, "--", "set", "interface", veth, f"ofport_request={i + 1}")
        yield TwoHosts(name, namespaces, protocol)
    finally:
        run("ovs-vsctl", "--if-exists", "del-br", name, check=False)
        for veth in veths:
            run("ip", "link", "del", veth, check=False)
        for ns in namespaces:
            run("ip", "netns", "del", ns, check=False)
