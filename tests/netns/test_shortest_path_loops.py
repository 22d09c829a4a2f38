"""os-ken's shortest_path app on Mininet/OVS networks with loops: traffic gets through, nothing storms."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from sdnbench.controllers import ADAPTERS
from sdnbench.controllers.base import ControllerSpec
from sdnbench.topology import build_topology

from .helpers import all_pairs, controlled_network, free_port
from .test_cli_run import sdnbench

pytestmark = pytest.mark.netns

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shortest-path-loops.yaml"


def need_osken():
    avail = ADAPTERS["osken"].availability()
    if not avail.ok:
        pytest.skip(f"osken: {avail.detail}")


def test_example_delivers_udp_and_ping_across_loops(tmp_path):
    """examples/shortest-path-loops.yaml as shipped (one repetition, a free port): no loss on either topology."""
    need_osken()
    exp = yaml.safe_load(EXAMPLE.read_text())
    exp["repetitions"] = 1
    exp["controllers"][0]["port"] = free_port()
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(exp))
    res = sdnbench("run", str(path), "--out", str(tmp_path / "run"))
    assert res.returncode == 0, res.stderr
    assert "failed" not in res.stdout, res.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    loss = {r["topology"]: r["max"] for r in summary if r["metric"] == "loss_pct"}
    assert set(loss) == {"spine_leaf-2x3", "grid-2x3"} and max(loss.values()) <= 1.0, loss


def tx_packets(graph) -> int:
    """Packets sent by every switch interface of graph (root namespace)."""
    names = {s.name for s in graph.switches}
    total = 0
    for stat in Path("/sys/class/net").glob("*-eth*/statistics/tx_packets"):
        if stat.parent.parent.name.split("-eth")[0] in names:
            total += int(stat.read_text())
    return total


@pytest.mark.parametrize("topology,openflow", [({"kind": "spine_leaf", "spines": 2, "leaves": 3, "hosts_per_leaf": 2}, "1.3"),
                                               ({"kind": "grid", "rows": 2, "columns": 2, "hosts_per_switch": 1}, "1.0")],
                         ids=["spine_leaf-of13", "grid2x2-of10"])
def test_every_pair_reachable_and_the_network_quiet_afterwards(topology, openflow, tmp_path):
    """All host pairs ping, each first ARP flooded through the loops; then, idle, the switches
    send little more than os-ken's LLDP probes (a storm would send thousands of frames a second)."""
    need_osken()
    graph = build_topology(topology)
    spec = ControllerSpec(kind="osken", label="osken-sp", openflow=openflow, app="shortest_path", port=free_port())
    with controlled_network(spec, graph, tmp_path) as (net, _):
        assert net.reachability(all_pairs(graph), timeout_s=30) == []
        time.sleep(1)                       # frames of the pings still in flight
        before, t0 = tx_packets(graph), time.monotonic()
        time.sleep(3)
        rate = (tx_packets(graph) - before) / (time.monotonic() - t0)
        ports = sum(len(p) for p in net.ports().values())
        # os-ken probes every port about once a second, and the host stacks say little.
        assert rate < 5 * ports, f"{rate:.0f} frames/s from {ports} switch ports: a storm?"
