"""Topology builders: counts, degrees and addressing checked against their definitions."""

import networkx as nx
import pytest

from sdnbench.topology import build_topology, topology_label
from sdnbench.topology.linear import hosts_per_switch


def graph(**spec):
    return build_topology(spec)


def as_nx(g):
    G = nx.Graph()
    G.add_nodes_from(g.node_names())
    G.add_edges_from((l.a, l.b) for l in g.links)
    return G


def switch_graph(g):
    G = as_nx(g)
    G.remove_nodes_from(h.name for h in g.hosts)
    return G


def test_single():
    g = graph(kind="single", hosts=8)
    assert (len(g.switches), len(g.hosts), len(g.links)) == (1, 8, 8)
    assert g.hosts[0].ip == "10.0.0.1" and g.hosts[7].ip == "10.0.0.8"
    assert g.hosts[7].mac == "00:00:00:00:00:08"


def test_linear_with_total_hosts_puts_extras_at_the_ends():
    g = graph(kind="linear", switches=7, hosts_per_switch=1, hosts=8)
    assert len(g.switches) == 7 and len(g.hosts) == 8
    assert hosts_per_switch(7, 1, 8) == [1, 1, 1, 1, 1, 1, 2]
    assert hosts_per_switch(3, 1, 8) == [3, 2, 3]
    assert nx.is_connected(as_nx(g)) and nx.is_tree(switch_graph(g))


def test_tree_matches_mininet_treetopo_sizes():
    g = graph(kind="tree", depth=3, fanout=2)
    assert (len(g.switches), len(g.hosts)) == (7, 8)
    assert nx.is_tree(as_nx(g))
    g = graph(kind="tree", depth=1, fanout=4)
    assert (len(g.switches), len(g.hosts)) == (1, 4)


def test_spine_leaf_has_one_path_per_spine():
    g = graph(kind="spine_leaf", spines=2, leaves=4, hosts_per_leaf=2)
    assert (len(g.switches), len(g.hosts)) == (6, 8)
    G = switch_graph(g)
    assert all(G.degree(s.name) == 4 for s in g.switches[:2])
    assert len(list(nx.all_shortest_paths(G, "s3", "s4"))) == 2


def test_grid_neighbours():
    g = graph(kind="grid", rows=2, columns=4, hosts_per_switch=1)
    assert (len(g.switches), len(g.hosts)) == (8, 8)
    G = switch_graph(g)
    assert G.number_of_edges() == 2 * 3 + 4   # horizontal + vertical
    assert nx.is_connected(G)


def test_transit_stub_default_has_36_hosts_on_stubs_only():
    g = graph(kind="transit_stub", transit_domains=1, transit_nodes=3, stubs_per_transit=2,
              stub_nodes=2, hosts_per_stub_node=3)
    assert len(g.hosts) == 36
    assert len(g.switches) == 3 + 3 * 2 * 2
    G = as_nx(g)
    assert nx.is_connected(G)
    transit = {"s1", "s2", "s3"}
    host_switches = {l.b for l in g.links if l.role == "edge"}
    assert not (host_switches & transit)


def test_transit_stub_domains_are_joined():
    g = graph(kind="transit_stub", transit_domains=3, transit_nodes=2, stubs_per_transit=1,
              stub_nodes=1, hosts_per_stub_node=1)
    assert nx.is_connected(as_nx(g)) and len(g.hosts) == 6


def test_link_params_edge_and_core():
    g = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1,
                        "link": {"bw_mbps": 100}, "core_link": {"bw_mbps": 1000}})
    roles = {(l.role, l.params.bw_mbps) for l in g.links}
    assert roles == {("edge", 100), ("core", 1000)}


def test_custom_mininet_topo(tmp_path):
    pytest.importorskip("mininet")
    (tmp_path / "mytopo.py").write_text(
        "from mininet.topo import Topo\n"
        "class Pair(Topo):\n"
        "    def build(self, n=2):\n"
        "        s = self.addSwitch('s1')\n"
        "        for i in range(n):\n"
        "            self.addLink(self.addHost(f'h{i+1}'), s, bw=5)\n")
    g = build_topology({"kind": "custom", "class": "mytopo:Pair", "path": None, "args": {"n": 3}},
                       base_dir=tmp_path)
    assert len(g.hosts) == 3 and all(l.params.bw_mbps == 5 for l in g.links)


def test_labels():
    assert topology_label({"kind": "tree", "depth": 3, "fanout": 2}) == "tree-3x2"
    assert topology_label({"kind": "single", "hosts": 8, "label": "star"}) == "star"


def test_sizes_are_bounded_before_anything_is_built():
    from sdnbench.topology import KINDS

    assert "describes 6,250,000 switch-to-switch links" in KINDS["spine_leaf"].size_problem(
        {"kind": "spine_leaf", "spines": 2500, "leaves": 2500, "hosts_per_leaf": 1})
    assert "switches; at most 5,000" in KINDS["tree"].size_problem({"kind": "tree", "depth": 30, "fanout": 9})
    assert KINDS["grid"].size_problem({"kind": "grid", "rows": 60, "columns": 60}) is None
    g = build_topology({"kind": "grid", "rows": 3, "columns": 4, "hosts_per_switch": 0})
    assert KINDS["grid"].counts({"rows": 3, "columns": 4, "hosts_per_switch": 0, "hosts": None}) == \
        (len(g.switches), len(g.hosts), len(g.links))
