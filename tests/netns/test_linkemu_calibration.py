"""sdnbench-linkemu calibrated through a real emulated network, measured with sdnbench-tgen.

One network, one switch: each host's link to it carries one impairment (in both directions, as netem
on both ends would), and every flow goes from one impaired host to h1, whose link is plain. So each
measurement crosses exactly one impaired link direction, plus Open vSwitch. Losses are also checked
against the emulator's own counters, so loss anywhere else fails the test by name rather than
passing for the model's. Ground truth is netem's formulas (linkemu-core): see docs/linkemu.md.
"""

from __future__ import annotations

import json
import time

import pytest
from scipy.stats import binom

from sdnbench.emulation.network import EmulatedNetwork
from sdnbench.manifest import Manifest
from sdnbench.paths import native_tool
from sdnbench.topology.graph import LinkParams, TopologyGraph

from .helpers import leftovers, skip_unless_built

pytestmark = pytest.mark.netns

#: Host -> the impairment of its link to the switch (h1 and h2 are plain: sink and baseline).
LINKS = {
    "h3": LinkParams(delay_ms=0, queue_pkts=1000),        # through the emulator, nothing added
    "h4": LinkParams(delay_ms=5),
    "h5": LinkParams(delay_ms=50),
    "h6": LinkParams(delay_ms=20, jitter_ms=2, delay_distribution="normal"),
    "h7": LinkParams(loss_pct=1),
    "h8": LinkParams(loss_pct=10),
    "h9": LinkParams(loss_model="gilbert_elliott", loss_p_pct=1, loss_r_pct=25),
    "h10": LinkParams(rate_mbps=10, queue_pkts=100),
    "h11": LinkParams(delay_ms=15, reorder_pct=100, reorder_gap=5),
    "h12": LinkParams(delay_ms=20, jitter_ms=2, delay_distribution="normal", keep_order=True),
}


def _graph() -> TopologyGraph:
    g = TopologyGraph("calibration")
    s1 = g.add_switch()
    for i in range(1, 13):
        h = g.add_host()
        g.add_link(h, s1, LINKS.get(h, LinkParams()), "edge")
    return g


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """The calibration network, forwarding standalone (no controller), every path answering."""
    skip_unless_built("sdnbench-tgen", "sdnbench-linkemu")
    graph = _graph()
    manifest = Manifest(tmp_path_factory.mktemp("run"))
    network = EmulatedNetwork(graph, manifest, fail_mode="standalone", links="auto")
    try:
        network.start()
        assert network.describe()["links"] == "linkemu"
        assert network.reachability([(h, "h1") for h in network.hosts if h != "h1"]) == []
        yield network
    finally:
        network.stop()
        assert leftovers(graph) == []
        assert manifest.outstanding() == []


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def udp(net, srcs: list[str], rate_pps: int, count: int, tmp_path) -> dict[str, tuple[dict, dict | None]]:
    """count 64-byte packets from each of srcs to h1 at once, at rate_pps each: per source, tgen's receiver
    summary and the emulator's window of its link (None for a plain link)."""
    tgen = native_tool("sdnbench-tgen")
    dst = net.hosts["h1"].IP()
    recvs, sends = {}, {}
    for port, src in enumerate(srcs, start=5001):
        recvs[src] = (net.hosts["h1"].spawn([tgen, "recv", "--bind", f"{dst}:{port}", "--interval", "0s",
                                             "--expect-flows", "1"], "tgen-recv", stdout=tmp_path / f"{src}.rx"), port)
    time.sleep(0.3)
    net.links.emulator.mark()
    for src, (_, port) in recvs.items():
        sends[src] = net.hosts[src].spawn([tgen, "send", "--to", f"{dst}:{port}", "--rate", f"{rate_pps}pps",
                                           "--count", str(count), "--payload", "64B"], "tgen-send")
    for src in srcs:
        assert sends[src].wait(count / rate_pps + 30) and recvs[src][0].wait(15), "tgen did not finish"
    window = net.links.emulator.mark()
    out = {}
    for src in srcs:
        sends[src].release()
        recvs[src][0].release()
        summary = next(r["data"] for r in _records(tmp_path / f"{src}.rx")
                       if r["type"] == "summary" and r["data"]["role"] == "receiver")
        link = next((d for d in window["links"] if d["link"] == f"{src}-s1" and d["dir"] == "a>b"), None)
        assert link is None or link["ring_drop_pkts"] == link["tx_error_pkts"] == link["truncated_pkts"] == 0, link
        out[src] = (summary, link)
    return out


def lost_by_the_emulator_only(got: dict, link: dict) -> bool:
    """Every probe lost was dropped by the emulator: its count, less the few other frames of the window
    it may have dropped (ARP, IPv6, tgen's end markers), up to its count."""
    others = link["rx_pkts"] - got["expected_pkts"]
    return link["lost_pkts"] - others <= got["loss_pkts"] <= link["lost_pkts"]


def test_fixed_delays_within_20us_plus_1pct(net, tmp_path):
    """5 ms and 50 ms added to the mean one-way delay, against a plain path measured at the same time
    (Open vSwitch's own delay varies from minute to minute by tens of µs on a loaded machine)."""
    for host, ms in (("h4", 5.0), ("h5", 50.0)):
        flows = udp(net, [host, "h2", "h3"], 1000, 3000, tmp_path)
        (got, link), (plain, _), (through, _) = flows[host], flows["h2"], flows["h3"]
        added = got["owd_mean_ms"] - plain["owd_mean_ms"]
        print(f"delay {ms} ms: added {added:.4f} ms over a plain path ({plain['owd_mean_ms']:.4f} ms; through the "
              f"emulator with no delay {through['owd_mean_ms']:.4f} ms); lateness p50/p99/max "
              f"{link['late_p50_us']}/{link['late_p99_us']}/{link['late_max_us']} us")
        assert abs(added - ms) <= 0.020 + 0.01 * ms, (added, ms)
        assert got["loss_pkts"] == 0


def test_normal_jitter_sd_within_5pct(net, tmp_path):
    """netem's normal jitter reorders; with keep_order no frame overtakes another (its delays then bunch up)."""
    flows = udp(net, ["h6", "h12"], 2000, 10000, tmp_path)
    (got, link), (kept, _) = flows["h6"], flows["h12"]
    print(f"jitter: sd {got['owd_sd_ms']:.4f} ms, mean {got['owd_mean_ms']:.4f} ms, reordered {got['reordered_pkts']}; "
          f"keep_order: sd {kept['owd_sd_ms']:.4f} ms, reordered {kept['reordered_pkts']}")
    # netem's normal table is clipped at 4 sigma: sd 0.99987 sigma.
    assert got["owd_sd_ms"] == pytest.approx(2.0, rel=0.05)
    assert got["owd_mean_ms"] == pytest.approx(20.0, abs=0.3)   # 20 ms plus Open vSwitch's ~0.1 ms
    assert got["reordered_pkts"] > 0
    assert kept["reordered_pkts"] == 0 and kept["loss_pkts"] == 0


@pytest.mark.parametrize("host, p", [("h7", 0.01), ("h8", 0.10)])
def test_bernoulli_loss_within_binomial_99pct(net, tmp_path, host, p):
    n = 100_000
    got, link = udp(net, [host], 10_000, n, tmp_path)[host]
    lo, hi = binom.interval(0.99, got["expected_pkts"], p)
    print(f"loss {p:.0%}: {got['loss_pkts']} of {got['expected_pkts']} (99% interval {lo:.0f}-{hi:.0f})")
    assert lost_by_the_emulator_only(got, link), ("loss outside the emulator", got["loss_pkts"], link)
    assert lo <= got["loss_pkts"] <= hi


def test_gilbert_elliott_mean_loss_and_burst_within_10pct(net, tmp_path):
    p, r = 0.01, 0.25
    got, link = udp(net, ["h9"], 10_000, 150_000, tmp_path)["h9"]
    loss, burst = got["loss_pkts"] / got["expected_pkts"], got["loss_pkts"] / got["loss_bursts"]
    print(f"Gilbert-Elliott: loss {loss:.4%} (formula {p / (p + r):.4%}), burst {burst:.3f} (formula {1 / r})")
    assert lost_by_the_emulator_only(got, link), ("loss outside the emulator", got["loss_pkts"], link)
    assert loss == pytest.approx(p / (p + r), rel=0.10)
    assert burst == pytest.approx(1 / r, rel=0.10)


def test_rate_gives_tcp_its_share_within_5pct(net, tmp_path):
    """10 Mbit/s of L2 frames: TCP goodput is 10 Mbit/s x 1448/1514 (MSS with timestamps per frame)."""
    tgen = native_tool("sdnbench-tgen")
    dst = net.hosts["h1"].IP()
    rx_out, tx_out = tmp_path / "tcp.recv.jsonl", tmp_path / "tcp.send.jsonl"
    recv = net.hosts["h1"].spawn([tgen, "recv", "--proto", "tcp", "--bind", f"{dst}:5002"], "tgen-recv", stdout=rx_out)
    time.sleep(0.3)
    send = net.hosts["h10"].spawn([tgen, "send", "--proto", "tcp", "--to", f"{dst}:5002", "--duration", "8s"],
                                  "tgen-send", stdout=tx_out)
    assert send.wait(40) and recv.wait(15)
    send.release()
    recv.release()
    got = next(r["data"] for r in _records(tx_out) if r["type"] == "summary")
    want = 10e6 * 1448 / 1514
    print(f"rate 10 Mbit/s: TCP goodput {got['throughput_bps'] / 1e6:.3f} Mbit/s (expected {want / 1e6:.3f})")
    assert got["throughput_bps"] == pytest.approx(want, rel=0.05)


def test_reordering_counted_as_configured(net, tmp_path):
    """Every 5th frame leaves at once; sent 10 ms apart with a 15 ms delay, it overtakes the one before."""
    got, link = udp(net, ["h11"], 100, 500, tmp_path)["h11"]
    print(f"reorder gap 5: tgen counted {got['reordered_pkts']}, the emulator sent {link['reordered_pkts']} ahead")
    assert got["reordered_pkts"] == pytest.approx(got["expected_pkts"] / 5, abs=1)
    assert got["loss_pkts"] == 0
