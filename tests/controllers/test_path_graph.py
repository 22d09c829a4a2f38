"""The shortest-path app's routing logic (apps/path_graph.py), without os-ken."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

APPS_DIR = Path(__file__).resolve().parents[2] / "sdnbench" / "controllers" / "apps"
A, B, C = "02:00:00:00:00:0a", "02:00:00:00:00:0b", "02:00:00:00:00:0c"
BCAST = "ff:ff:ff:ff:ff:ff"


@pytest.fixture
def pg(monkeypatch):
    """apps/path_graph.py imported as os-ken imports it: apps/ on sys.path, plain module names."""
    monkeypatch.syspath_prepend(str(APPS_DIR))
    for name in ("path_graph", "l2_table"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module("path_graph")


def both_ways(g, a, ap, b, bp):
    """os-ken reports a link once per direction."""
    g.add_link(a, ap, b, bp)
    g.add_link(b, bp, a, ap)


def line(pg):
    """Switches 1 - 2 - 3 (ports 3/4 between them); hosts on ports 1 and 2."""
    g = pg.SwitchGraph()
    both_ways(g, 1, 3, 2, 3)
    both_ways(g, 2, 4, 3, 3)
    return g


def ring(pg):
    """Four switches in a loop: 1-2-3-4-1."""
    g = pg.SwitchGraph()
    for a, b in [(1, 2), (2, 3), (3, 4), (4, 1)]:
        both_ways(g, a, 10 + b, b, 10 + a)   # port 10+peer leads to peer
    return g


def test_known_destination_gets_a_flow_on_every_hop(pg):
    g, hosts = line(pg), pg.HostTable()
    assert (g.link_count, g.switch_count) == (2, 3)
    assert pg.route(g, hosts, 3, 1, C, BCAST, [1, 2, 3]) == pg.Route(flood=(2, 3))  # C learnt, floods
    r = pg.route(g, hosts, 1, 1, A, C, [1, 2, 3])
    assert r.hops == (pg.Hop(1, 1, 3), pg.Hop(2, 3, 4), pg.Hop(3, 3, 1))            # ingress first
    assert hosts.where(A) == (1, 1)
    # A frame arriving over a link (it outran its flow) is routed on from there; its source is not learnt there.
    assert pg.route(g, hosts, 2, 3, A, C, [1, 2, 3, 4]).hops == (pg.Hop(2, 3, 4), pg.Hop(3, 3, 1))
    assert hosts.where(A) == (1, 1)
    assert pg.route(g, hosts, 3, 1, B, C, [1, 2, 3]) == pg.Route()                  # C is behind in_port


def test_flooding_follows_a_spanning_tree_so_loops_do_not_storm(pg):
    g, hosts = ring(pg), pg.HostTable()
    tree = {s: g.tree_ports(s) for s in (1, 2, 3, 4)}
    assert sum(len(p) for p in tree.values()) == 2 * 3                              # n - 1 edges
    # Root 1 reaches 2 and 4; 2 reaches 3. The 3-4 link is off the tree.
    assert tree == {1: {12, 14}, 2: {11, 13}, 3: {12}, 4: {11}}
    ports = {1: [1, 12, 14], 2: [1, 11, 13], 3: [1, 12, 14], 4: [1, 11, 13]}
    assert pg.route(g, hosts, 3, 1, A, BCAST, ports[3]).flood == (12,)               # host port in, tree out
    assert pg.route(g, hosts, 2, 13, A, BCAST, ports[2]).flood == (1, 11)            # along the tree
    assert pg.route(g, hosts, 4, 13, A, BCAST, ports[4]) == pg.Route()              # off-tree link in: drop
    assert pg.route(g, hosts, 1, 1, B, A, ports[1]).hops[-1] == pg.Hop(3, 12, 1)    # A learnt at 3:1 only
    assert len(g.path(1, 3)) == 3


def test_hosts_seen_on_a_port_that_turns_out_to_be_a_link_are_forgotten(pg):
    g, hosts = pg.SwitchGraph(), pg.HostTable()
    pg.route(g, hosts, 2, 3, A, BCAST, [1, 3])                                      # before discovery
    assert hosts.where(A) == (2, 3)
    assert pg.route(g, hosts, 2, 1, B, BCAST, [1, 3]).flood == (3,)                 # no graph: every port
    hosts.forget(2, 3)                                                              # what the app does on link up
    both_ways(g, 1, 3, 2, 3)
    assert hosts.where(A) is None and hosts.where(B) == (2, 1)
    hosts.forget(2)
    assert len(hosts) == 0


def test_links_going_away(pg):
    g, hosts = line(pg), pg.HostTable()
    hosts.learn(C, 3, 1)
    assert g.path(1, 3) == [1, 2, 3]
    assert g.remove_link(2, 4, 3, 3) and g.path(1, 3) == [1, 2, 3]                  # the reverse direction is enough
    assert g.remove_link(3, 3, 2, 4) and g.path(1, 3) is None
    assert not g.remove_link(3, 3, 2, 4)
    assert pg.route(g, hosts, 1, 1, A, C, [1, 2, 3]).flood == (2, 3)                # no path: flood
    g = line(pg)
    g.remove_switch(2)
    assert (g.link_count, g.path(1, 3)) == (0, None)


def test_parallel_links_use_the_lowest_port_and_the_other_is_blocked(pg):
    g = pg.SwitchGraph()
    both_ways(g, 1, 5, 2, 5)
    both_ways(g, 1, 3, 2, 3)
    assert g.link_count == 2 and g.port_to(1, 2) == 3
    assert g.tree_ports(1) == {3}
    assert g.flood_ports(1, 1, [1, 3, 5]) == [3]
    assert g.flood_ports(2, 5, [1, 3, 5]) == []
