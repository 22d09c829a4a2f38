"""The data-plane seams: switch and link kinds by name, their choices in the experiment file, and
what each refuses before anything is built (no root)."""

from pathlib import Path

import pytest

from sdnbench import doctor
from sdnbench.config.loader import parse_experiment
from sdnbench.emulation import capabilities
from sdnbench.emulation.capabilities import Capability
from sdnbench.emulation.kinds import Registry
from sdnbench.emulation.links import LINKS, LinkKind, link_choices
from sdnbench.emulation.network import EmulatedNetwork
from sdnbench.emulation.switches import SWITCHES, SwitchKind
from sdnbench.emulation.switches.base import has_switch_loop
from sdnbench.errors import CapabilityError, ConfigError
from sdnbench.manifest import Manifest
from sdnbench.topology import build_topology

EXPERIMENT = """\
name: t
controllers:
  - kind: none
topologies:
  - kind: single
workloads:
  - name: udp
    flows:
      - {proto: udp, rate_pps: 100, duration_s: 2}
"""


@pytest.fixture
def no_netem(monkeypatch):
    """A kernel with HTB and without netem, whatever this machine has."""
    real = capabilities.qdisc_available

    def fake(kind):
        if kind == "netem":
            return Capability("netem", False, "tc qdisc netem unavailable: unknown", "a kernel with sch_netem")
        return Capability(kind, True, f"tc qdisc {kind} works") if kind == "htb" else real(kind)

    monkeypatch.setattr(capabilities, "qdisc_available", fake)


def test_every_registered_kind_is_its_class():
    for registry, base in ((SWITCHES, SwitchKind), (LINKS, LinkKind)):
        for name, cls in registry.classes().items():
            assert issubclass(cls, base) and cls.name == name


def test_defaults_are_ovs_and_automatic_links():
    assert SWITCHES.names()[0] == "ovs" and LINKS.names()[0] == "veth_tc"
    network = parse_experiment(EXPERIMENT, Path("exp.yaml")).network
    assert (network["switch"], network["links"]) == ("ovs", "auto")


@pytest.mark.parametrize("key", ["switch", "links"])
def test_unknown_kind_in_file_names_line_and_choices(key):
    text = EXPERIMENT + f"network:\n  {key}: warp\n"
    with pytest.raises(ConfigError) as info:
        parse_experiment(text, Path("exp.yaml"))
    choices = {"switch": SWITCHES.names(), "links": link_choices()}[key]
    assert f"exp.yaml:11: network.{key}: expected one of {', '.join(choices)}; got 'warp'" in str(info.value)


def test_registry_imports_on_demand_and_refuses_unknown_names():
    reg = Registry("switch", "sdnbench.emulation.switches", {"other": "ovs:OvsSwitch"})
    assert reg.names() == ("other",)
    assert reg.get("other") is SWITCHES.get("ovs")
    with pytest.raises(ConfigError, match="unknown switch 'ovs'; expected one of other"):
        reg.get("ovs")


def test_network_refuses_an_unknown_kind(tmp_path):
    graph = build_topology({"kind": "single", "hosts": 2})
    with pytest.raises(ConfigError, match="unknown link realisation 'radio'"):
        EmulatedNetwork(graph, Manifest(tmp_path), links="radio", lock=False)


def test_veth_tc_refuses_delay_without_netem_and_names_it(no_netem):
    veth = LINKS.get("veth_tc")
    delayed = build_topology({"kind": "single", "hosts": 2, "link": {"delay_ms": 5}}).links
    shaped = build_topology({"kind": "single", "hosts": 2, "link": {"bw_mbps": 10}}).links
    cap = veth.availability(delayed)
    assert not cap.ok and cap.name == "netem" and "delay/loss" in cap.detail and "sch_netem" in cap.fix
    assert veth.availability(shaped).ok
    assert veth.availability().ok and "refused: no netem" in veth.availability().detail


def test_start_refuses_before_building_anything(no_netem, tmp_path):
    """The missing capability stops start() before the lock, a bridge or a manifest record."""
    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1, "link": {"loss_pct": 1}})
    net = EmulatedNetwork(graph, Manifest(tmp_path), datapath="user", links="veth_tc")
    with pytest.raises(CapabilityError, match="links ask for delay/loss but tc qdisc netem unavailable"):
        net.start()
    assert net.net is None and Manifest(tmp_path).outstanding() == []


def test_veth_tc_options_shape_only_shaped_links(tmp_path):
    graph = build_topology({"kind": "single", "hosts": 2, "edge_link": {"bw_mbps": 10, "delay_ms": 2}})
    plain = build_topology({"kind": "single", "hosts": 2})
    links = LINKS.get("veth_tc")(graph, Manifest(tmp_path))
    assert LINKS.get("veth_tc")(plain, Manifest(tmp_path)).options(plain.links[0]) == {}
    pytest.importorskip("mininet.link", reason="Mininet not installed (apt-get install mininet)")
    opts = links.options(graph.links[0])
    assert opts["cls"].__name__ == "TCLink" and opts["bw"] == 10 and opts["delay"] == "2ms"
    assert links.describe() == {"links": "veth_tc", "link_shaping": "htb+netem"}


@pytest.mark.parametrize("datapath", ["kernel", "user"])
def test_describe_records_switch_datapath_and_links(datapath, tmp_path, monkeypatch):
    monkeypatch.setattr(capabilities, "tool", lambda *a: Capability("ovs-vswitchd", True,
                                                                    "ovs-vswitchd (Open vSwitch) 3.1.0"))
    graph = build_topology({"kind": "single", "hosts": 2})
    net = EmulatedNetwork(graph, Manifest(tmp_path), datapath=datapath, lock=False)
    assert net.datapath == datapath
    assert net.describe() == {"switch": "ovs", "datapath": datapath, "ovs_version": "3.1.0",
                              "links": "veth_tc", "link_shaping": "none"}


def test_loops_are_found_in_the_switch_graph():
    assert not has_switch_loop(build_topology({"kind": "tree", "depth": 2, "fanout": 2}))
    assert has_switch_loop(build_topology({"kind": "spine_leaf", "spines": 2, "leaves": 2, "hosts_per_leaf": 1}))


def test_doctor_lists_every_kind(monkeypatch):
    monkeypatch.setattr(SWITCHES.get("ovs"), "availability", classmethod(lambda cls: Capability("x", True, "up")))
    names = [c.name for c in doctor._data_plane()]
    assert names == [f"switch {n}" for n in SWITCHES.names()] + [f"links {n}" for n in LINKS.names()] + ["links auto"]
