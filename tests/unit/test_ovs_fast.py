"""The ovs_fast switch kind's plan, decided before anything is built (no root): which links become
patch ports, which host ports AF_XDP, why it falls back, and what a trial records."""

from __future__ import annotations

import pytest

from sdnbench import clean
from sdnbench.emulation import ovs
from sdnbench.emulation.network import EmulatedNetwork, port_plan
from sdnbench.emulation.switches import SWITCHES
from sdnbench.emulation.switches import ovs_fast
from sdnbench.manifest import Manifest
from sdnbench.topology import build_topology

pytest.importorskip("mininet.link", reason="Mininet not installed (apt-get install mininet)")


def _groups(graph, patched) -> list[set[str]]:
    """Connected components of the switches joined by patch links."""
    groups = [{s.name} for s in graph.switches]
    for link in patched:
        a = next(g for g in groups if link.a in g)
        b = next(g for g in groups if link.b in g)
        if a is not b:
            a |= b
            groups.remove(b)
    return groups


def _net(spec, tmp_path, **kw) -> EmulatedNetwork:
    net = EmulatedNetwork(build_topology(spec), Manifest(tmp_path), datapath="user", lock=False, switch="ovs_fast")
    if kw:
        net.switch = SWITCHES.get("ovs_fast")(net.graph, net.manifest, datapath="user", **kw)
        net.carried = net.switch.plain_links([link for link in net.graph.links if net.links.plain(link)])
    return net


def test_every_unshaped_switch_link_of_a_small_graph_is_a_patch_link(tmp_path):
    net = _net({"kind": "tree", "depth": 3, "fanout": 2}, tmp_path)
    core = [link for link in net.graph.links if link.role == "core"]
    assert set(net.carried) == set(core) and len(core) == 6
    assert all(opts["cls"].__name__ == "OVSLink" for opts in net.carried.values())
    # patch ports are not kernel interfaces: only the 8 host-facing ends are recorded
    assert sorted(net._root_interfaces()) == sorted(net.switch.xdp_ports) and len(net.switch.xdp_ports) == 8


def test_long_chains_are_cut_into_groups_ovs_can_translate_in_one_pass(tmp_path):
    """OVS gives up after 64 nested bridges: a 100-switch line becomes groups of at most 32."""
    graph = build_topology({"kind": "linear", "switches": 100, "hosts_per_switch": 1})
    patched = ovs_fast.patch_groups([s.name for s in graph.switches], graph.links)
    groups = _groups(graph, patched)
    assert max(len(g) for g in groups) == ovs_fast.PATCH_GROUP and len(groups) == 4
    assert len(patched) == 99 - 3


def test_groups_on_a_graph_with_loops_stay_bounded():
    graph = build_topology({"kind": "grid", "rows": 9, "columns": 9, "hosts_per_switch": 1})
    patched = ovs_fast.patch_groups([s.name for s in graph.switches], graph.links)
    assert max(len(g) for g in _groups(graph, patched)) <= ovs_fast.PATCH_GROUP


def test_shaped_links_keep_real_interfaces(tmp_path):
    """A shaped core link stays a veth with tc; a shaped host link stays a system port."""
    spec = {"kind": "linear", "switches": 3, "hosts_per_switch": 1, "edge_link": {"bw_mbps": 10}}
    net = _net(spec, tmp_path)
    assert len(net.carried) == 2 and net.switch.xdp_ports == []
    spec = {"kind": "linear", "switches": 3, "hosts_per_switch": 1, "core_link": {"bw_mbps": 10}}
    net = _net(spec, tmp_path)
    assert net.carried == {} and len(net.switch.xdp_ports) == 3
    assert "s1-eth1" in net._root_interfaces()


def test_same_port_numbers_as_today(tmp_path):
    """Patch peers are the same interface names and port numbers Faucet's config is made from."""
    net = _net({"kind": "linear", "switches": 2, "hosts_per_switch": 1}, tmp_path)
    (a, b), (pa, pb) = next((k, v) for k, v in port_plan(net.graph).items() if k == ("s1", "s2"))
    assert net.switch.peers == {f"s1-eth{pa}": f"s2-eth{pb}", f"s2-eth{pb}": f"s1-eth{pa}"}
    assert sorted(net.switch.xdp_ports) == ["s1-eth2", "s2-eth2"]


def test_standalone_loops_keep_todays_data_plane(tmp_path):
    """RSTP over patch ports aborts ovs-vswitchd 3.1: a looped standalone network is built as `ovs` does."""
    spec = {"kind": "spine_leaf", "spines": 2, "leaves": 2, "hosts_per_leaf": 1}
    net = EmulatedNetwork(build_topology(spec), Manifest(tmp_path), datapath="user", lock=False,
                          switch="ovs_fast", fail_mode="standalone")
    assert net.switch.rstp and net.carried == {} and net.switch.xdp_ports == []
    assert "RSTP" in net.switch.fallbacks[0]
    secure = EmulatedNetwork(build_topology(spec), Manifest(tmp_path), datapath="user", lock=False,
                             switch="ovs_fast", fail_mode="secure")
    assert len(secure.carried) == 4 and not secure.switch.fallbacks


def test_veth_choice_keeps_switch_links(tmp_path):
    net = _net({"kind": "linear", "switches": 3, "hosts_per_switch": 1}, tmp_path, switch_links="veth")
    assert net.carried == {} and net.switch.describe()["switch_links"] == "veth"


@pytest.mark.parametrize("why", [None, "Open vSwitch lists no afxdp interface type (built without AF_XDP)"])
def test_port_type_and_fallback_reason(why, tmp_path, monkeypatch):
    monkeypatch.setattr(ovs_fast, "af_xdp_support", lambda: why)
    monkeypatch.setattr(ovs_fast.os, "sched_getaffinity", lambda pid: {0, 1})
    net = _net({"kind": "single", "hosts": 2}, tmp_path)
    net.switch._plan_ports()
    assert net.switch.port_type == ("system" if why else "afxdp")
    assert net.switch.fallbacks == ([f"{why}: system ports"] if why else [])
    assert net.switch.pmd_cpus == ([] if why else [1])


def test_one_core_means_no_poll_mode_thread(tmp_path, monkeypatch):
    monkeypatch.setattr(ovs_fast, "af_xdp_support", lambda: None)
    monkeypatch.setattr(ovs_fast.os, "sched_getaffinity", lambda pid: {0})
    net = _net({"kind": "single", "hosts": 2}, tmp_path)
    net.switch._plan_ports()
    assert net.switch.port_type == "afxdp-nonpmd" and "one usable core" in net.switch.fallbacks[0]
    assert net.switch.pmd_cpus == []


def test_kernel_datapath_keeps_system_ports(tmp_path):
    graph = build_topology({"kind": "single", "hosts": 2})
    switch = SWITCHES.get("ovs_fast")(graph, Manifest(tmp_path), datapath="kernel")
    switch.plain_links(graph.links)
    switch._plan_ports()
    assert switch.port_type == "system" and "userspace datapath" in switch.fallbacks[0]


def test_describe_records_the_plan_and_fallbacks(tmp_path, monkeypatch):
    monkeypatch.setattr(ovs_fast.OvsSwitch, "describe", lambda self: {"switch": self.name, "datapath": "user"})
    monkeypatch.setattr(ovs_fast, "af_xdp_support", lambda: None)
    monkeypatch.setattr(ovs_fast.os, "sched_getaffinity", lambda pid: {0, 1})
    net = _net({"kind": "linear", "switches": 3, "hosts_per_switch": 1}, tmp_path)
    net.switch._plan_ports()
    net.switch.fallbacks.append("s1-eth2: afxdp failed (x): system port")   # as started() finds one
    assert net.switch.describe() == {
        "switch": "ovs_fast", "datapath": "user", "switch_links": "patch 2/2", "host_ports": "afxdp",
        "xdp_mode": "best-effort", "pmd_cpus": "1", "pmd_maxsleep_us": ovs_fast.PMD_MAXSLEEP_US,
        "dataplane_fallbacks": "s1-eth2: afxdp failed (x): system port"}


def test_unknown_choices_are_refused(tmp_path):
    graph = build_topology({"kind": "single", "hosts": 2})
    with pytest.raises(ValueError, match="ports must be one of"):
        SWITCHES.get("ovs_fast")(graph, Manifest(tmp_path), ports="dpdk")


def test_clean_puts_back_ovs_settings(tmp_path, monkeypatch):
    """A run killed while it had pinned the poll-mode thread: clean restores the old value."""
    calls = []
    monkeypatch.setattr(ovs, "set_other_config", lambda key, value: calls.append((key, value)))
    manifest = Manifest(tmp_path)
    manifest.created("ovs_setting", "pmd-cpu-mask", previous=None)
    manifest.created("ovs_setting", "pmd-maxsleep", previous="10")
    assert clean.clean_rundir(tmp_path, say=lambda m: None) == 2
    assert calls == [("pmd-cpu-mask", None), ("pmd-maxsleep", "10")]
    assert manifest.outstanding() == []
