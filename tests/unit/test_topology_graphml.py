"""graphml topologies: the file's graph, its link speeds, and clear errors for bad files."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from sdnbench.config.loader import parse_experiment
from sdnbench.errors import ConfigError
from sdnbench.runner.plan import expand
from sdnbench.topology import build_topology, topology_label

ZOO = Path(__file__).parent / "data" / "zoo-five.graphml"


def zoo(**spec):
    return build_topology({"kind": "graphml", "path": str(ZOO), **spec})


def core_speeds(g):
    return {frozenset((l.a, l.b)): l.params.bw_mbps for l in g.links if l.role == "core"}


def test_nodes_become_switches_edges_links_and_hosts_per_switch():
    g = zoo(hosts_per_switch=2)
    assert [s.name for s in g.switches] == ["s1", "s2", "s3", "s4", "s5"]
    assert len(g.hosts) == 10
    # five edges between distinct nodes; the file's self-loop is dropped
    assert len(core_speeds(g)) == 5
    G = nx.Graph((l.a, l.b) for l in g.links)
    assert nx.is_connected(G)
    assert all(G.degree(h.name) == 1 for h in g.hosts)


def test_link_speeds_come_from_the_file():
    speeds = core_speeds(zoo())
    assert speeds[frozenset(("s1", "s2"))] == 10_000          # LinkSpeedRaw 1e10 bit/s
    assert speeds[frozenset(("s1", "s3"))] == 2_500           # LinkSpeed 2.5 + LinkSpeedUnits G
    assert speeds[frozenset(("s3", "s4"))] == 155
    assert speeds[frozenset(("s2", "s5"))] is None            # no speed in the file: unshaped


def test_experiment_bandwidth_wins_and_speeds_can_be_ignored():
    assert set(core_speeds(zoo(core_link={"bw_mbps": 100})).values()) == {100}
    assert set(core_speeds(zoo(link_speeds=False)).values()) == {None}
    g = zoo(edge_link={"bw_mbps": 10})
    assert {l.params.bw_mbps for l in g.links if l.role == "edge"} == {10}


def test_parallel_edges_become_one_link(tmp_path):
    f = tmp_path / "multi.graphml"
    nx.write_graphml(nx.MultiGraph([("a", "b"), ("a", "b"), ("b", "c")]), f)
    g = build_topology({"kind": "graphml", "path": str(f)})
    assert len(core_speeds(g)) == 2 and len(g.switches) == 3


def test_disconnected_graph_is_refused_naming_a_stray_node(tmp_path):
    f = tmp_path / "split.graphml"
    G = nx.Graph([("a", "b"), ("c", "d")])
    G.nodes["c"]["label"] = "Island"
    nx.write_graphml(G, f)
    with pytest.raises(ConfigError, match=r"not connected \(2 parts\); nodes c \(Island\), d cannot reach node a"):
        build_topology({"kind": "graphml", "path": str(f)})


@pytest.mark.parametrize("content", [b"not xml at all", b"<html><body>hi</body></html>",
                                     b"\x00\xff\xfe binary", b"<graphml><graph><node/></graph>"])
def test_files_that_are_not_graphml_give_a_clear_error(tmp_path, content):
    f = tmp_path / "bad.graphml"
    f.write_bytes(content)
    with pytest.raises(ConfigError, match="bad.graphml"):
        build_topology({"kind": "graphml", "path": str(f)})


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        build_topology({"kind": "graphml", "path": str(tmp_path / "nope.graphml")})


def test_in_an_experiment_the_path_is_relative_to_the_file(tmp_path):
    (tmp_path / "net.graphml").write_bytes(ZOO.read_bytes())
    text = ("name: zoo\ncontrollers: [{kind: none}]\n"
            "topologies: [{kind: graphml, path: net.graphml, hosts_per_switch: 1}]\n"
            "workloads: [{name: udp, flows: [{src: h1, dst: h5, duration_s: 1}]}]\n")
    exp = parse_experiment(text, tmp_path / "exp.yaml")
    trials = expand(exp)
    assert trials[0].topology == "graphml-net" == topology_label(exp.topologies[0])
    assert len(trials[0].graph.switches) == 5


def test_unknown_key_is_refused_with_its_line(tmp_path):
    text = ("name: zoo\ncontrollers: [{kind: none}]\n"
            "topologies:\n  - kind: graphml\n    path: x.graphml\n    speed: 1\n"
            "workloads: [{name: udp, flows: [{duration_s: 1}]}]\n")
    with pytest.raises(ConfigError, match=r"exp.yaml:6: topologies\[0\].speed: unknown key"):
        parse_experiment(text, tmp_path / "exp.yaml")
