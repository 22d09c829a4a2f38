"""sdnbench's P4Runtime controller without bmv2: spanning-tree flood groups and shortest-path entries on
topologies with loops, the p4rt adapter's config and command, and the app's learning and programming
against a stand-in P4Runtime client."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import networkx as nx
import pytest

from sdnbench.controllers import make_adapter
from sdnbench.controllers.base import ControllerSpec
from sdnbench.emulation.network import port_plan
from sdnbench.emulation.switches import SWITCHES
from sdnbench.errors import ControllerError
from sdnbench.forwarding import p4rt as wiring
from sdnbench.topology import build_topology

TOPOLOGIES = [{"kind": "spine_leaf", "spines": 2, "leaves": 4, "hosts_per_leaf": 2},
              {"kind": "grid", "rows": 3, "columns": 3},
              {"kind": "transit_stub", "transit_domains": 1, "transit_nodes": 3, "stubs_per_transit": 1,
               "stub_nodes": 2}]


def wired(spec):
    """(graph, port plan, (node, port) -> the node at the other end of that port's link)."""
    graph = build_topology(spec)
    plan = port_plan(graph)
    ends = {}
    for (a, b), (pa, pb) in plan.items():
        ends[(a, pa)], ends[(b, pb)] = b, a
    return graph, plan, ends


@pytest.mark.parametrize("spec", TOPOLOGIES, ids=lambda s: s["kind"])
def test_flood_groups_span_every_switch_without_a_loop(spec):
    graph, plan, ends = wired(spec)
    groups = wiring.flood_ports(graph, plan)
    hosts = {h.name for h in graph.hosts}
    flooded = nx.Graph()
    flooded.add_nodes_from(s.name for s in graph.switches)
    for sw, ports in groups.items():
        for port in ports:
            other = ends[(sw, port)]
            if other not in hosts:
                # A tree link is in the groups of both its ends (flooding crosses it either way).
                assert any(ends[(other, p)] == sw for p in groups[other])
                flooded.add_edge(sw, other)
    assert nx.is_tree(flooded)
    assert {ends[(sw, p)] for sw, ports in groups.items() for p in ports} >= hosts   # every host port floods
    assert len(nx.cycle_basis(nx.Graph([(l.a, l.b) for l in graph.links]))) > 0       # the topology has loops


@pytest.mark.parametrize("spec", TOPOLOGIES, ids=lambda s: s["kind"])
def test_proactive_entries_carry_every_host_pair_along_a_shortest_path(spec):
    graph, plan, ends = wired(spec)
    entries = wiring.proactive_entries(graph, plan)
    table = {(sw, e["match"][wiring.DST]): e["params"]["port"] for sw, es in entries.items() for e in es}
    assert all(e["table"] == wiring.DMAC and e["action"] == wiring.FORWARD for es in entries.values() for e in es)
    g = nx.Graph([(l.a, l.b) for l in graph.links])
    for src in graph.hosts:
        for dst in graph.hosts:
            if src is dst:
                continue
            node, hops = ends[(src.name, 0)], 1
            while node != dst.name:
                node, hops = ends[(node, table[(node, dst.mac)])], hops + 1
                assert hops <= len(graph.switches) + 1
            assert hops == nx.shortest_path_length(g, src.name, dst.name)


def test_the_wiring_names_what_the_shipped_programs_have():
    programs = pytest.importorskip("sdnbench.p4.programs")
    assert wiring.FLOOD_GROUP == programs.FLOOD_GROUP
    learning, forwarding = programs.program("l2_learning"), programs.program("forwarding")
    for prog in (learning, forwarding):
        assert prog.field_bitwidth(wiring.DMAC, wiring.DST) == 48 and prog.param_bitwidth(wiring.FORWARD, "port") == 9
    assert learning.field_bitwidth(wiring.SMAC, wiring.SRC) == 48 and learning.action_id(wiring.NO_ACTION)
    assert set(wiring.PROGRAM_OF_MODE.values()) == set(programs.PROGRAMS)


def fake_net(spec=TOPOLOGIES[0]):
    graph = build_topology(spec)
    ends = {s.name: {"address": f"127.0.0.1:{50000 + s.dpid}", "device_id": s.dpid} for s in graph.switches}
    waited = []
    return SimpleNamespace(graph=graph, switch_endpoints=lambda: ends, switch=SWITCHES.get("p4"),
                           wait_connected=lambda target, timeout: waited.append(target), waited=waited)


def p4rt(app=None, **options):
    return make_adapter(ControllerSpec(kind="p4rt", label="p4rt", app=app, options=options))


def test_p4rt_speaks_p4runtime_only():
    cls = type(p4rt())
    assert cls.southbound_refusal(SWITCHES.get("p4")) is None
    assert cls.southbound_refusal(SWITCHES.get("ovs")) == "p4rt speaks p4runtime; ovs switches speak openflow"


def test_the_app_is_told_the_switches_their_flood_ports_and_the_proactive_entries(tmp_path):
    adapter = p4rt("proactive")
    adapter.start(tmp_path)
    net = fake_net()
    config = adapter.config(net)
    assert config["mode"] == "proactive" and config["program"] == "forwarding"
    assert config["switches"]["s1"]["address"] == "127.0.0.1:50001" and config["switches"]["s1"]["device_id"] == 1
    assert config["switches"]["s3"]["flood_ports"] == wiring.flood_ports(net.graph, port_plan(net.graph))["s3"]
    assert sum(len(v) for v in config["entries"].values()) == len(net.graph.switches) * len(net.graph.hosts)
    assert config["status"] == str(tmp_path / "p4rt-status.json")
    assert p4rt(mode="learning").app() == "learning" and p4rt().app() == "learning"
    learning = p4rt()
    learning.start(tmp_path)
    assert learning.config(net)["entries"] == {} and learning.config(net)["program"] == "l2_learning"


def test_the_app_runs_with_this_sdnbench_on_its_path(tmp_path):
    adapter = p4rt()
    assert adapter.command(tmp_path) == [sys.executable, "-m", "sdnbench.p4.controller_app",
                                         str(tmp_path / "p4rt-config.json")]
    source = str(Path(__file__).resolve().parents[2])
    assert adapter.environment(tmp_path)["PYTHONPATH"].split(":")[0] == source


def test_an_unknown_mode_is_refused(tmp_path):
    with pytest.raises(ControllerError, match="p4rt app must be one of learning, proactive, not 'warp'"):
        p4rt("warp").start(tmp_path)


def test_openflow_switches_give_the_app_nothing_to_dial(tmp_path):
    adapter = p4rt()
    adapter.start(tmp_path)
    net = SimpleNamespace(graph=build_topology({"kind": "single", "hosts": 2}), switch_endpoints=lambda: {},
                          switch=SWITCHES.get("ovs"))
    with pytest.raises(ControllerError, match="take no P4Runtime connection"):
        adapter.config(net)


class FakeClient:
    """What controller_app asks of a P4RuntimeClient, recorded."""

    made: list["FakeClient"] = []

    def __init__(self, address, device_id, election_id=(0, 1), timeout_s=5.0):
        self.address, self.device_id = address, device_id
        self.calls: list[tuple] = []
        self.incoming: list[tuple[bytes, int]] = []
        FakeClient.made.append(self)

    def __getattr__(self, name):
        if name in ("arbitrate", "set_pipeline", "write_multicast_group", "write_entry", "packet_out", "close"):
            return lambda *args: self.calls.append((name, *args))
        raise AttributeError(name)

    def packet_ins(self, timeout_s=None):
        yield from self.incoming


def frame(dst: str, src: str) -> bytes:
    return bytes.fromhex(dst.replace(":", "")) + bytes.fromhex(src.replace(":", "")) + b"\x08\x06" + b"\0" * 28


def test_learning_writes_entries_once_and_floods_all_but_the_ingress_port():
    app = pytest.importorskip("sdnbench.p4.controller_app")
    client = FakeClient("a", 1)
    learner = app.Learner("s1", client, [1, 2, 3])
    client.incoming = [(frame("ff:ff:ff:ff:ff:ff", "00:00:00:00:00:01"), 1),
                       (frame("00:00:00:00:00:01", "00:00:00:00:00:02"), 3),
                       (frame("00:00:00:00:00:02", "00:00:00:00:00:01"), 1)]
    learner.run()
    writes = [c[1:3] for c in client.calls if c[0] == "write_entry"]
    assert writes == [(wiring.SMAC, {wiring.SRC: "00:00:00:00:00:01"}), (wiring.DMAC, {wiring.DST: "00:00:00:00:00:01"}),
                      (wiring.SMAC, {wiring.SRC: "00:00:00:00:00:02"}), (wiring.DMAC, {wiring.DST: "00:00:00:00:00:02"})]
    outs = [c[2] for c in client.calls if c[0] == "packet_out"]
    assert outs == [2, 3, 1, 3] and learner.packet_ins == 3


def test_the_app_programs_every_switch_then_reports_how_long_it_took(tmp_path, monkeypatch):
    app = pytest.importorskip("sdnbench.p4.controller_app")
    monkeypatch.setattr(app, "P4RuntimeClient", FakeClient)
    FakeClient.made = []
    adapter = p4rt("proactive")
    adapter.start(tmp_path)
    config = adapter.config(fake_net())
    path = tmp_path / "p4rt-config.json"
    path.write_text(json.dumps(config))
    stopper = threading.Event()
    monkeypatch.setattr(app.threading, "Event", lambda: stopper)
    monkeypatch.setattr(app.signal, "signal", lambda *a: None)   # pytest's main thread keeps its handlers
    done = threading.Thread(target=app.main, args=([str(path)],))
    done.start()
    deadline = time.monotonic() + 10
    while adapter.status() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    stopper.set()
    done.join(10)
    status = adapter.status()
    assert status["ready"] and status["switches"] == 6 and status["program"] == "forwarding"
    assert status["entries"] == 6 * 8 and status["programming_s"] >= 0
    first = FakeClient.made[0]
    assert [c[0] for c in first.calls[:3]] == ["arbitrate", "set_pipeline", "write_multicast_group"]
    assert first.calls[2][1:] == (wiring.FLOOD_GROUP, config["switches"]["s1"]["flood_ports"])
    assert all(c.calls[-1] == ("close",) for c in FakeClient.made)
    facts = adapter.network_ready(None)
    assert facts["p4rt_mode"] == "proactive" and facts["p4rt_entries"] == 48


def test_connect_runs_the_app_as_a_recorded_process_that_programs_every_switch(tmp_path):
    """The real controller process against two in-test P4Runtime servers standing in for bmv2 switches."""
    pytest.importorskip("sdnbench.p4.runtime")
    from sdnbench.manifest import Manifest
    from sdnbench.procs import ProcessTracker

    from p4_fake_server import FakeP4Runtime

    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    servers = {name: FakeP4Runtime() for name in ("s1", "s2")}
    ends = {name: {"address": server.start(), "device_id": i + 1} for i, (name, server) in enumerate(servers.items())}
    manifest = Manifest(tmp_path)
    tracker = ProcessTracker(manifest)

    def wait_connected(target, timeout):
        assert all(s.pipeline is not None for s in servers.values())

    net = SimpleNamespace(graph=graph, switch_endpoints=lambda: ends, switch=SWITCHES.get("p4"),
                          wait_connected=wait_connected)
    adapter = make_adapter(ControllerSpec(kind="p4rt", label="p4rt", app="proactive"), tracker)
    try:
        adapter.start(tmp_path / "ctrl")
        adapter.connect(net, 30)
        [record] = [r for r in manifest.outstanding() if r["kind"] == "process"]
        assert record["role"] == "controller:p4rt" and int(record["name"]) == adapter.pids()[0]
        assert adapter.health() is None and adapter.endpoints()["p4runtime"].startswith("s1=127.0.0.1:")
        for server in servers.values():
            tables = [u for u in server.updates if u.entity.HasField("table_entry")]
            groups = [u for u in server.updates if u.entity.HasField("packet_replication_engine_entry")]
            assert len(tables) == 2 and len(groups) == 1   # one dmac entry per host, the flood group
        facts = adapter.network_ready(net)
        assert facts["p4rt_program"] == "forwarding" and facts["p4rt_entries"] == 4
    finally:
        adapter.stop()
        tracker.stop_all()
        for server in servers.values():
            server.stop()
    assert manifest.outstanding() == []
