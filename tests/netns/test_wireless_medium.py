"""An 802.11g cell of sdnbench-linkemu through real interfaces: stations share one medium.

Namespaces only, no Mininet: each station namespace has a veth whose other end sits in the emulator's
namespace, paired with a veth into the AP namespace, where a Linux bridge joins the stations' links (the AP
stands for the OpenFlow switch it will be). Saturated UDP uplinks of 1,024-byte payloads are measured by
sdnbench-tgen at the AP: one station against the closed form, two against Bianchi's model
(docs/wireless.md).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from sdnbench.emulation.lock import NetworkLock
from sdnbench.paths import native_tool

from .helpers import skip_unless_built

pytestmark = pytest.mark.netns

NS = {"emu": "sdnwl-emu", "ap": "sdnwl-ap", "s1": "sdnwl-s1", "s2": "sdnwl-s2"}
AP_IP = "10.77.0.254"
#: Analytic UDP goodput at 54 Mbit/s, 1,024 B, short slots: one station (closed form), two (Bianchi).
ONE_STATION_MBPS = 24.86
TWO_STATIONS_MBPS = 26.15


def run(*args: str, ns: str | None = None) -> None:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    subprocess.run(cmd, check=True, capture_output=True)


def offloads_off(dev: str, ns: str) -> None:
    """The emulator forwards frames as they are: checksums must be complete, frames MTU-sized."""
    run("ethtool", "-K", dev, "tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off", ns=ns)


@pytest.fixture(scope="module")
def cell(tmp_path_factory):
    """Two stations on one AP's medium, 10 m away, best rate (54 Mbit/s); yields the emulator's config path."""
    skip_unless_built("sdnbench-tgen", "sdnbench-linkemu")
    lock = NetworkLock()
    lock.acquire()
    tmp = tmp_path_factory.mktemp("wireless")
    try:
        for ns in NS.values():
            run("ip", "netns", "add", ns)
        run("ip", "link", "add", "br0", "type", "bridge", ns=NS["ap"])
        links, stations = [], []
        for i in (1, 2):
            s = NS[f"s{i}"]
            run("ip", "link", "add", "wls", "netns", s, "type", "veth", "peer", "name", f"wle{i}a", "netns", NS["emu"])
            run("ip", "link", "add", f"wle{i}b", "netns", NS["emu"], "type", "veth", "peer", "name", f"wlap{i}",
               "netns", NS["ap"])
            offloads_off("wls", s)
            offloads_off(f"wlap{i}", NS["ap"])
            for end in "ab":
                offloads_off(f"wle{i}{end}", NS["emu"])
            run("ip", "addr", "add", f"10.77.0.{i}/24", "dev", "wls", ns=s)
            run("ip", "link", "set", "wls", "up", ns=s)
            run("ip", "link", "set", f"wlap{i}", "master", "br0", "up", ns=NS["ap"])
            links.append({"name": f"sta{i}-ap1", "a": f"wle{i}a", "b": f"wle{i}b"})
            stations.append({"link": f"sta{i}-ap1", "station_end": "a", "distance_m": 10})
        run("ip", "addr", "add", f"{AP_IP}/24", "dev", "br0", ns=NS["ap"])
        run("ip", "link", "set", "br0", "up", ns=NS["ap"])
        config = tmp / "linkemu.json"
        config.write_text(json.dumps({"links": links, "media": [{"name": "ap1", "seed": 1, "stations": stations}]}))
        yield config
    finally:
        for ns in NS.values():
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        lock.release()


def _records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def saturate(config, stations: list[int], tmp_path, seconds: float = 4.0) -> tuple[dict[int, float], list[dict]]:
    """Each station sends 1,024-byte UDP payloads at 40 Mbit/s to the AP for `seconds`: goodput per station
    (Mbit/s) and the emulator's summary of every link direction."""
    tgen, emu = native_tool("sdnbench-tgen"), native_tool("sdnbench-linkemu")
    emulator = subprocess.Popen(["ip", "netns", "exec", NS["emu"], str(emu), "--config", str(config),
                                 "--interval", "0s", "--seed", "1"], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        recvs = {i: subprocess.Popen(["ip", "netns", "exec", NS["ap"], str(tgen), "recv", "--bind",
                                      f"{AP_IP}:{5000 + i}", "--interval", "0s", "--expect-flows", "1",
                                      "--duration", f"{seconds + 20}s"], stdout=subprocess.PIPE, text=True)
                 for i in stations}
        time.sleep(0.3)
        sends = [subprocess.Popen(["ip", "netns", "exec", NS[f"s{i}"], str(tgen), "send", "--to",
                                   f"{AP_IP}:{5000 + i}", "--rate", "40Mbps", "--payload", "1024B",
                                   "--duration", f"{seconds}s"], stdout=subprocess.DEVNULL) for i in stations]
        for p in sends:
            p.wait(seconds + 30)
        goodput = {}
        for i, r in recvs.items():
            out, _ = r.communicate(timeout=seconds + 30)
            got = next(x["data"] for x in _records(out) if x["type"] == "summary" and x["data"]["role"] == "receiver")
            goodput[i] = got["rx_payload_bps"] / 1e6
    finally:
        emulator.send_signal(signal.SIGTERM)
        out, _ = emulator.communicate(timeout=10)
    summary = next(x["data"] for x in _records(out) if x["type"] == "summary")
    return goodput, summary["links"]


def test_one_station_and_two_sharing_the_medium(cell, tmp_path):
    alone, dirs = saturate(cell, [1], tmp_path)
    up = next(d for d in dirs if d["link"] == "sta1-ap1" and d["dir"] == "a>b")
    print(f"one station: {alone[1]:.2f} Mbit/s (closed form {ONE_STATION_MBPS}); air {up['air']}; "
          f"lateness p99 {up['late_p99_us']} µs")
    assert alone[1] == pytest.approx(ONE_STATION_MBPS, rel=0.10)
    # Only the AP's own few frames (ARP replies, IPv6 neighbour discovery) can collide with the uplink.
    assert up["air"]["rate_mbps"] == 54 and up["air"]["collisions"] < 0.01 * up["air"]["attempts"]

    both, dirs = saturate(cell, [1, 2], tmp_path)
    total = sum(both.values())
    ups = [d for d in dirs if d["dir"] == "a>b"]
    print(f"two stations: {both[1]:.2f} + {both[2]:.2f} = {total:.2f} Mbit/s (Bianchi {TWO_STATIONS_MBPS}); "
          f"collisions {[d['air']['collisions'] for d in ups]}, airtime share "
          f"{[round(d['air']['airtime_share'], 3) for d in ups]}")
    assert total == pytest.approx(TWO_STATIONS_MBPS, rel=0.10)
    assert min(both.values()) > 0.4 * total
    assert all(d["air"]["collisions"] > 0 for d in ups)
