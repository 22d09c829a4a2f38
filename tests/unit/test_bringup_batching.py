"""Bring-up at scale: OVS is configured, polled and emptied in a fixed number of ovs-vsctl calls,
whatever the number of switches, and Mininet starts all switches in one transaction (no root)."""

from __future__ import annotations

import json

import pytest

from sdnbench.emulation import ovs
from sdnbench.emulation.switches import SWITCHES
from sdnbench.manifest import Manifest
from sdnbench.topology import build_topology

pytest.importorskip("mininet.node", reason="Mininet not installed (apt-get install mininet)")


@pytest.fixture
def calls(monkeypatch):
    """Every ovs-vsctl argv run through ovs.vsctl, answered with an empty output."""
    seen: list[list[str]] = []

    class Done:
        returncode, stdout, stderr = 0, "", ""

    def fake_run(argv, **_kw):
        seen.append(argv)
        return Done()

    monkeypatch.setattr(ovs.subprocess, "run", fake_run)
    return seen


def test_controllers_of_a_thousand_bridges_are_set_in_one_transaction(calls):
    bridges = [f"s{i}" for i in range(1, 1001)]
    ovs.set_controllers(bridges, "tcp:127.0.0.1:6653", "1.3", "secure")
    assert len(calls) == 1
    argv = calls[0]
    assert argv.count("--") == 2 * len(bridges)
    assert argv.count("create") == len(bridges)


def test_each_bridge_gets_its_own_controller_row_with_every_setting():
    cmds = ovs.controller_commands(["s1", "s2"], "tcp:127.0.0.1:6653", "1.0", "standalone")
    assert cmds == [
        ["--id=@c0", "create", "Controller", 'target="tcp:127.0.0.1:6653"', "max_backoff=1000",
         "inactivity_probe=30000"],
        ["set", "bridge", "s1", "controller=@c0", "fail_mode=standalone", "protocols=OpenFlow10"],
        ["--id=@c1", "create", "Controller", 'target="tcp:127.0.0.1:6653"', "max_backoff=1000",
         "inactivity_probe=30000"],
        ["set", "bridge", "s2", "controller=@c1", "fail_mode=standalone", "protocols=OpenFlow10"],
    ]


def _status_output() -> str:
    bridges = {"data": [["s1", ["uuid", "u1"]], ["s2", ["set", []]],
                        ["s3", ["set", [["uuid", "u3"], ["uuid", "u4"]]]], ["s4", ["uuid", "u5"]],
                        ["other", ["uuid", "u6"]]], "headings": ["name", "controller"]}
    controllers = {"data": [[["uuid", "u1"], True], [["uuid", "u3"], False], [["uuid", "u4"], True],
                            [["uuid", "u5"], False], [["uuid", "u6"], True]], "headings": ["_uuid", "is_connected"]}
    return json.dumps(bridges) + "\n" + json.dumps(controllers) + "\n"


def test_status_of_every_bridge_comes_from_two_tables():
    assert ovs.parse_controller_status(_status_output()) == {
        "s1": True, "s2": False, "s3": True, "s4": False, "other": True}


def test_one_status_read_per_poll_whatever_the_number_of_bridges(monkeypatch):
    reads = []
    monkeypatch.setattr(ovs, "vsctl", lambda *cmds, **kw: reads.append(cmds) or _status_output())
    # "other" is connected but not ours; s2 has no controller (cut off by fault injection)
    assert ovs.connected_bridges(["s1", "s2", "s3", "s4"] + [f"x{i}" for i in range(1000)]) == {"s1", "s3"}
    assert len(reads) == 1 and list(reads[0]) == list(ovs.STATUS_COMMANDS)


def test_bridges_are_deleted_in_one_transaction(calls, tmp_path, monkeypatch):
    graph = build_topology({"kind": "linear", "switches": 300, "hosts_per_switch": 1})
    switch = SWITCHES.get("ovs")(graph, Manifest(tmp_path), datapath="user")
    monkeypatch.setattr(ovs, "existing_bridges", lambda: {"s1", "s2", "s300", "not-ours"})
    switch.teardown()
    assert len(calls) == 1
    argv = calls[0]
    assert [argv[i + 3] for i, a in enumerate(argv) if a == "--"] == ["s1", "s2", "s300"]


@pytest.mark.parametrize("kind", ["ovs", "ovs_fast"])
def test_mininet_starts_all_switches_in_one_transaction(kind, tmp_path):
    """Mininet batches switch start-up (and shutdown) only for a class with batchStartup: a class,
    not a partial, carrying the kind's parameters as defaults."""
    graph = build_topology({"kind": "linear", "switches": 3, "hosts_per_switch": 1})
    switch = SWITCHES.get(kind)(graph, Manifest(tmp_path), "1.3", "secure", "user")
    cls = switch.mininet_switch()
    assert isinstance(cls, type) and hasattr(cls, "batchStartup") and hasattr(cls, "batchShutdown")
    params = switch.switch_params()
    assert params == {"datapath": "user", "failMode": "secure", "protocols": "OpenFlow13", "reconnectms": 1000}


def test_offloads_of_every_host_go_off_in_parallel(tmp_path, monkeypatch):
    """All hosts' shells are sent their ethtool commands before any answer is awaited."""
    from sdnbench.emulation.switches import ovs as ovs_kind

    events = []

    class Intf:
        def __init__(self, name):
            self.name = name

    class Host:
        def __init__(self, name):
            self.name = name

        def intfList(self):
            return [Intf("lo"), Intf(f"{self.name}-eth0")]

        def sendCmd(self, cmd):
            events.append(("send", self.name, cmd))

        def waitOutput(self):
            events.append(("wait", self.name))

    class Net:
        switches = []
        hosts = [Host(f"h{i}") for i in range(1, 4)]

    monkeypatch.setattr(ovs_kind, "disable_offloads_root", lambda names: None)
    graph = build_topology({"kind": "linear", "switches": 3, "hosts_per_switch": 1})
    SWITCHES.get("ovs")(graph, Manifest(tmp_path), datapath="user").started(Net())
    assert [e[0] for e in events] == ["send"] * 3 + ["wait"] * 3
    assert "h1-eth0" in events[0][2] and "lo" not in events[0][2].split()


def test_interfaces_are_deleted_as_one_link_group(monkeypatch):
    """Tagged with a link group nothing else is in, then deleted with one `ip link del group`."""
    from sdnbench.emulation import network

    runs = []

    class Out:
        def __init__(self, stdout=""):
            self.returncode, self.stdout = 0, stdout

    def fake_run(argv, **kw):
        runs.append((argv, kw.get("input")))
        # the first group tried is in use by someone else's interface
        busy = argv[:5] == ["ip", "-o", "link", "show", "group"] and len(runs) == 1
        return Out("7: other: <UP>" if busy else "")

    monkeypatch.setattr(network.subprocess, "run", fake_run)
    network.delete_interfaces(["s1-eth1", "s1-eth2"])
    probes = [argv for argv, _ in runs if argv[:3] == ["ip", "-o", "link"]]
    group = probes[-1][-1]
    assert len(probes) == 2 and probes[0][-1] != group and int(group) >= 1 << 20
    tag, delete = runs[-2], runs[-1]
    assert tag == (["ip", "-force", "-batch", "-"], f"link set dev s1-eth1 group {group}\n"
                                                      f"link set dev s1-eth2 group {group}\n")
    assert delete[0] == ["ip", "link", "del", "group", group]


def test_stop_removes_bridges_and_interfaces_in_bulk_before_mininet(tmp_path, monkeypatch):
    """Before Mininet's stop: one del-br transaction, one deletion of the root-namespace ends;
    Mininet is left only the links that were not plain veth pairs removed that way."""
    from mininet.link import Link, TCLink

    from sdnbench.emulation import network

    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    net = network.EmulatedNetwork(graph, Manifest(tmp_path), datapath="user", lock=False)
    removed, deleted = [], []
    monkeypatch.setattr(network, "delete_interfaces", lambda names: removed.append(names))
    monkeypatch.setattr(network.Path, "exists", lambda self: True)
    monkeypatch.setattr(ovs, "existing_bridges", lambda: {"s1", "s2"})
    monkeypatch.setattr(ovs, "delete_bridges", lambda names: deleted.append(names))

    class Intf:
        def __init__(self, name):
            self.name = name

    def link(cls, a, b):
        obj = cls.__new__(cls)
        obj.intf1, obj.intf2 = Intf(a), Intf(b)
        return obj

    shaped = link(TCLink, "s1-eth1", "h1-eth0")
    plain = [link(Link, "s1-eth2", "s2-eth2"), link(Link, "s2-eth1", "h2-eth0")]

    class Net:
        links = [shaped, *plain]

    net.net = Net()
    net._remove_in_bulk()
    assert deleted == [["s1", "s2"]]
    assert removed == [sorted(net._root_interfaces())]
    assert net.net.links == [shaped]


def test_a_failed_bulk_removal_falls_back_to_mininets_stop(tmp_path, monkeypatch):
    """The bulk removal only saves time: when it fails (ovs-vsctl timed out), Mininet's stop and the
    leftover removal still run, and stop() does not raise."""
    from sdnbench.emulation import network
    from sdnbench.errors import CapabilityError

    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    net = network.EmulatedNetwork(graph, Manifest(tmp_path), datapath="user", lock=False)
    done = []

    def fail():
        raise CapabilityError("ovs-vsctl failed: terminating with signal 14 (Alarm clock)")

    class Net:
        def stop(self):
            done.append("mininet stop")

    monkeypatch.setattr(net, "_remove_in_bulk", fail)
    monkeypatch.setattr(net, "_remove_leftovers", lambda: done.append("leftovers"))
    net.net, net._owns_resources = Net(), True
    net.stop()
    assert done == ["mininet stop", "leftovers"] and net.net is None


def test_plain_veth_pairs_are_one_iproute2_batch():
    """Each end goes straight into its node's namespace (a host's with its MAC); ends in the root
    namespace come up in the same batch, after every pair exists."""
    from sdnbench.emulation.veth_batch import batch_commands

    script = batch_commands([
        [("s1-eth1", None, None), ("h1-eth0", 4242, "00:00:00:00:00:01")],
        [("s1-eth2", None, None), ("s2-eth2", None, None)],
    ])
    assert script.splitlines() == [
        "link add name s1-eth1 type veth peer name h1-eth0 address 00:00:00:00:00:01 netns 4242",
        "link add name s1-eth2 type veth peer name s2-eth2",
        "link set dev s1-eth1 up",
        "link set dev s1-eth2 up",
        "link set dev s2-eth2 up",
    ]


def test_a_failed_batch_says_what_iproute2_said(monkeypatch):
    from sdnbench.emulation import veth_batch

    class Out:
        returncode, stdout, stderr = 1, "", "RTNETLINK answers: File exists\nCommand failed -:3\n"

    monkeypatch.setattr(veth_batch.subprocess, "run", lambda *a, **kw: Out())
    with pytest.raises(RuntimeError, match=r"2 veth pairs failed: RTNETLINK answers: File exists"):
        veth_batch.create_pairs([[("a", None, None), ("b", None, None)]] * 2)


def test_plain_links_are_precreated_and_shaped_links_keep_their_class(tmp_path):
    """Links the realisation leaves plain are PrecreatedLinks carrying the host's MAC on its port-0
    end; a shaped link stays TCLink, and its host's MAC is set by Mininet as before."""
    from mininet.link import TCLink

    from sdnbench.emulation import network
    from sdnbench.emulation.veth_batch import PrecreatedLink

    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1,
                            "edge_link": {"bw_mbps": 10}})
    net = network.EmulatedNetwork(graph, Manifest(tmp_path), datapath="user", lock=False, links="veth_tc")
    topo = net._mininet_topo()
    infos = {(i["node1"], i["node2"]): i for _a, _b, i in topo.links(withInfo=True)}
    macs = {h.name: h.mac for h in graph.hosts}
    shaped = [i for i in infos.values() if i.get("cls") is TCLink]
    plain = [i for i in infos.values() if i.get("cls") is PrecreatedLink]
    assert shaped and plain and len(shaped) + len(plain) == len(graph.links)
    for info in plain:
        for end in ("1", "2"):
            node, port = info["node" + end], info["port" + end]
            assert info["addr" + end] == (macs[node] if node in macs and port == 0 else None)


def test_a_host_skips_setting_the_mac_its_interface_was_created_with(tmp_path):
    from sdnbench.emulation import network

    graph = build_topology({"kind": "linear", "switches": 1, "hosts_per_switch": 1})
    host_class = network.EmulatedNetwork(graph, Manifest(tmp_path), datapath="user", lock=False)._host_class()
    commands = []

    class Intf:
        mac = "00:00:00:00:00:01"

        def setMAC(self, mac):
            commands.append(mac)
            return "set"

    host = host_class.__new__(host_class)
    host.intf = lambda intf=None: Intf()
    assert host.setMAC("00:00:00:00:00:01") == "" and commands == []
    assert host.setMAC("00:00:00:00:00:02") == "set" and commands == ["00:00:00:00:00:02"]
