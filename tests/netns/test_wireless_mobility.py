"""A station walking away from its access point through real interfaces: its rate and goodput fall.

Namespaces only, as in test_wireless_medium.py: one station's veth into the emulator's namespace, paired
with a veth into the AP namespace. The station stays 10 m away for 3 s, then walks to 150 m by 7 s and
stays there; the motion clock restarts at a mark (SIGUSR1), as sdnbench opens each trial's window. A
saturated 1,024-byte UDP uplink, measured per second at the AP by sdnbench-tgen, keeps the one-station
closed form (24.86 Mbit/s at 54 Mbit/s) until the walk, and ends at about half of it (18 Mbit/s).
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
from .test_wireless_medium import ONE_STATION_MBPS, _records, offloads_off, run

pytestmark = pytest.mark.netns

NS = {"emu": "sdnmob-emu", "ap": "sdnmob-ap", "sta": "sdnmob-sta"}
AP_IP = "10.78.0.254"
WAYPOINTS = [(0, 10), (3, 10), (7, 150)]       # (t_s, x_m); the AP stands at the origin
FLOW_S = 10


@pytest.fixture()
def walking_cell(tmp_path):
    """One station on one AP's medium, walking away; yields the emulator's config path."""
    skip_unless_built("sdnbench-tgen", "sdnbench-linkemu")
    lock = NetworkLock()
    lock.acquire()
    try:
        for ns in NS.values():
            run("ip", "netns", "add", ns)
        run("ip", "link", "add", "wls", "netns", NS["sta"], "type", "veth", "peer", "name", "mob1a", "netns", NS["emu"])
        run("ip", "link", "add", "mob1b", "netns", NS["emu"], "type", "veth", "peer", "name", "wlap", "netns", NS["ap"])
        for dev, ns in (("wls", NS["sta"]), ("wlap", NS["ap"]), ("mob1a", NS["emu"]), ("mob1b", NS["emu"])):
            offloads_off(dev, ns)
        run("ip", "addr", "add", "10.78.0.1/24", "dev", "wls", ns=NS["sta"])
        run("ip", "link", "set", "wls", "up", ns=NS["sta"])
        run("ip", "addr", "add", f"{AP_IP}/24", "dev", "wlap", ns=NS["ap"])
        run("ip", "link", "set", "wlap", "up", ns=NS["ap"])
        station = {"link": "sta-ap1", "station_end": "a",
                   "waypoints": [{"t_s": t, "position": [x, 0, 0]} for t, x in WAYPOINTS]}
        config = tmp_path / "linkemu.json"
        config.write_text(json.dumps({"links": [{"name": "sta-ap1", "a": "mob1a", "b": "mob1b"}],
                                      "media": [{"name": "ap1", "seed": 1, "ap": {"position": [0, 0, 0]},
                                                 "stations": [station]}]}))
        yield config
    finally:
        for ns in NS.values():
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        lock.release()


def test_goodput_falls_as_the_station_walks_away(walking_cell):
    tgen, emu = native_tool("sdnbench-tgen"), native_tool("sdnbench-linkemu")
    emulator = subprocess.Popen(["ip", "netns", "exec", NS["emu"], str(emu), "--config", str(walking_cell),
                                 "--interval", "1s", "--seed", "1"], stdout=subprocess.PIPE, text=True)
    try:
        recv = subprocess.Popen(["ip", "netns", "exec", NS["ap"], str(tgen), "recv", "--bind", f"{AP_IP}:5000",
                                 "--interval", "1s", "--expect-flows", "1", "--duration", f"{FLOW_S + 20}s"],
                                stdout=subprocess.PIPE, text=True)
        # Without the mark's restart the station would be walking by now (it leaves 10 m at 3 s).
        time.sleep(3.5)
        emulator.send_signal(signal.SIGUSR1)
        send = subprocess.run(["ip", "netns", "exec", NS["sta"], str(tgen), "send", "--to", f"{AP_IP}:5000",
                               "--rate", "40Mbps", "--payload", "1024B", "--duration", f"{FLOW_S}s"],
                              capture_output=True, timeout=FLOW_S + 30)
        assert send.returncode == 0, send.stderr
        out, _ = recv.communicate(timeout=FLOW_S + 30)
    finally:
        emulator.send_signal(signal.SIGTERM)
        emu_out, _ = emulator.communicate(timeout=10)
    intervals = [x["data"] for x in _records(out) if x["type"] == "interval"]
    # The receiver's seconds count from its own start: the first and last with traffic are partial.
    series = [i["rx_payload_bps"] / 1e6 for i in intervals if i["rx_payload_bps"] > 0][1:-1]
    rates = [d["air"]["rate_mbps"] for x in _records(emu_out) if x["type"] == "interval"
             for d in x["data"]["links"] if d["dir"] == "a>b" and d["air"]["attempts"]]
    print(f"goodput per second (Mbit/s): {[round(x, 2) for x in series]}; uplink rate per emulator window: {rates}")
    assert len(series) >= FLOW_S - 2
    # Standing at 10 m after the mark: the one-station closed form.
    assert all(x == pytest.approx(ONE_STATION_MBPS, rel=0.10) for x in series[:3]), series
    first, second = series[:len(series) // 2], series[len(series) // 2:]
    assert sum(second) / len(second) < 0.75 * sum(first) / len(first), series
    assert series[-1] < 0.6 * ONE_STATION_MBPS
    assert rates[0] == 54 and rates[-1] == 18
