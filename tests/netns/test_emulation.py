"""Real networks from every topology builder: reachable, shaped, and removed without trace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sdnbench.emulation.network import EmulatedNetwork, switch_ports
from sdnbench.manifest import Manifest
from sdnbench.topology import build_topology

from .helpers import leftovers

pytestmark = pytest.mark.netns

TOPOLOGIES = [
    {"kind": "single", "hosts": 3},
    {"kind": "linear", "switches": 3, "hosts_per_switch": 1},
    {"kind": "tree", "depth": 2, "fanout": 2},
    {"kind": "spine_leaf", "spines": 2, "leaves": 2, "hosts_per_leaf": 1},
    {"kind": "grid", "rows": 2, "columns": 2, "hosts_per_switch": 1},
    {"kind": "transit_stub", "transit_domains": 1, "transit_nodes": 3, "stubs_per_transit": 1,
     "stub_nodes": 1, "hosts_per_stub_node": 1},
    {"kind": "graphml", "path": str(Path(__file__).parent.parent / "unit" / "data" / "zoo-five.graphml")},
]


@pytest.mark.parametrize("spec", TOPOLOGIES, ids=[t["kind"] for t in TOPOLOGIES])
def test_all_hosts_reachable_without_controller(spec, tmp_path):
    """Standalone switches (RSTP where the graph has loops) carry every host pair."""
    graph = build_topology(spec)
    net = EmulatedNetwork(graph, Manifest(tmp_path), fail_mode="standalone")
    try:
        net.start()
        hosts = [h.name for h in graph.hosts]
        pairs = [(a, b) for a in hosts for b in hosts if a != b]
        assert net.reachability(pairs, timeout_s=40) == []
        # every host has the address and MAC its graph gives it (its veth end was made with the MAC)
        for h in graph.hosts:
            shell = net.net.get(h.name)
            assert shell.cmd(f"cat /sys/class/net/{h.name}-eth0/address").strip() == h.mac
            assert f"inet {h.ip}/8" in shell.cmd(f"ip -4 addr show dev {h.name}-eth0")
        # the switch ports Faucet's config is generated from are the ones OVS has
        for s in graph.switches:
            ofports = {int(p) for p in os.popen(f"ovs-vsctl get interface {s.name}-eth1 ofport").read().split()}
            assert 1 in switch_ports(graph)[s.dpid] and ofports == {1}
    finally:
        net.stop()
    assert leftovers(graph) == []
    assert Manifest(tmp_path).outstanding() == []


def test_secure_switches_without_controller_forward_nothing(tmp_path):
    """fail_mode secure is real: no controller, no forwarding."""
    graph = build_topology({"kind": "single", "hosts": 2})
    net = EmulatedNetwork(graph, Manifest(tmp_path), fail_mode="secure")
    try:
        net.start()
        assert net.reachability([("h1", "h2")], timeout_s=2) == [("h1", "h2")]
    finally:
        net.stop()
    assert leftovers(graph) == []


def test_existing_bridge_is_not_taken_over(tmp_path):
    """A bridge of the same name (another tool's, or a leftover) stops the run with advice."""
    from sdnbench.emulation import ovs
    from sdnbench.errors import CapabilityError

    graph = build_topology({"kind": "single", "hosts": 2})
    ovs.vsctl(["add-br", "s1", "--", "set", "bridge", "s1", "datapath_type=netdev"])
    try:
        with pytest.raises(CapabilityError, match="sdnbench clean"):
            EmulatedNetwork(graph, Manifest(tmp_path), fail_mode="standalone").start()
        assert "s1" in ovs.existing_bridges()   # not ours: left alone
    finally:
        ovs.delete_bridge("s1")
