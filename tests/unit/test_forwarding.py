"""Proactive forwarding: the rules reach every host (checked by walking them), and the REST flow
programmer speaks OpenDaylight's RESTCONF to a fake server."""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sdnbench.emulation.network import port_plan
from sdnbench.errors import ControllerError
from sdnbench.forwarding.odl import OdlFlowProgrammer, flow_path, odl_flow, table_path
from sdnbench.forwarding.programmer import FlowProgrammer, program, program_topology
from sdnbench.forwarding.rules import ARP_PRIORITY, FORWARDING_COOKIE, ForwardingError, Rule, forwarding_rules
from sdnbench.restclient import RestClient
from sdnbench.topology import build_topology
from sdnbench.topology.graph import LinkParams, TopologyGraph

TOPOLOGIES = [
    {"kind": "single", "hosts": 3},
    {"kind": "linear", "switches": 4, "hosts_per_switch": 1},
    {"kind": "tree", "depth": 3, "fanout": 2},
    {"kind": "grid", "rows": 3, "columns": 3},            # loops: shortest paths, no flooding
    {"kind": "spine_leaf", "spines": 2, "leaves": 3, "hosts_per_leaf": 2},
]


def walk(graph: TopologyGraph, rules: list[Rule], src: str, dst: str, arp: bool) -> list[str]:
    """The switches a frame from host src to host dst crosses, following the rules (asserts no loop, no drop)."""
    plan = port_plan(graph)
    peer = {}   # (node, port) -> node at the other end
    for (a, b), (pa, pb) in plan.items():
        peer[(a, pa)], peer[(b, pb)] = b, a
    ends = {n: [(p, other) for (node, p), other in peer.items() if node == n] for n in graph.node_names()}
    dpid = {s.name: s.dpid for s in graph.switches}
    host = graph.host(dst)
    node, path = ends[src][0][1], []
    while node != dst:
        assert node in dpid, f"{src}->{dst} reached host {node}"
        assert node not in path, f"{src}->{dst} loops: {path + [node]}"
        path.append(node)
        match = [r for r in rules if r.dpid == dpid[node] and
                 (r.arp_tpa == host.ip if arp else r.eth_dst == host.mac)]
        assert len(match) == 1, f"{node} has {len(match)} rules for {dst}"
        node = peer[(node, match[0].out_port)]
    return path


@pytest.mark.parametrize("spec", TOPOLOGIES, ids=[t["kind"] for t in TOPOLOGIES])
def test_every_host_pair_is_reached_by_frames_and_arp_requests(spec):
    g = build_topology(spec)
    rules = forwarding_rules(g, port_plan(g))
    assert len(rules) == 2 * len(g.switches) * len(g.hosts)
    for src in g.hosts:
        for dst in g.hosts:
            if src != dst:
                path = walk(g, rules, src.name, dst.name, arp=False)
                assert walk(g, rules, src.name, dst.name, arp=True) == path


def test_paths_are_shortest_on_a_grid():
    g = build_topology({"kind": "grid", "rows": 3, "columns": 3})
    rules = forwarding_rules(g, port_plan(g))
    # h1 sits on s1 (a corner), h9 on s9 (the opposite corner): 4 hops, 5 switches.
    assert len(walk(g, rules, "h1", "h9", arp=False)) == 5


def test_rules_name_hosts_and_carry_priorities():
    g = build_topology({"kind": "single", "hosts": 2})
    rules = forwarding_rules(g, port_plan(g))
    assert [(r.name, r.out_port) for r in rules] == [
        ("sdnbench-eth-h1", 1), ("sdnbench-arp-h1", 1), ("sdnbench-eth-h2", 2), ("sdnbench-arp-h2", 2)]
    assert {r.priority for r in rules if r.arp_tpa} == {ARP_PRIORITY}


def test_a_host_without_a_switch_is_refused():
    g = build_topology({"kind": "single", "hosts": 2})
    g.add_host()
    with pytest.raises(ForwardingError, match="h3"):
        forwarding_rules(g, port_plan(g))


def test_islands_get_rules_only_for_their_own_hosts():
    g = TopologyGraph("two islands")
    for _ in range(2):
        g.add_link(g.add_host(), g.add_switch(), LinkParams(), "edge")
    rules = forwarding_rules(g, port_plan(g))
    assert {(r.dpid, r.name) for r in rules if r.eth_dst} == {(1, "sdnbench-eth-h1"), (2, "sdnbench-eth-h2")}


# -- OpenDaylight RESTCONF flow format -------------------------------------------------------

def test_odl_flow_matches_mac_or_arp_target():
    eth = odl_flow(Rule(1, "sdnbench-eth-h2", 100, 3, eth_dst="00:00:00:00:00:02"))
    assert eth["match"] == {"ethernet-match": {"ethernet-destination": {"address": "00:00:00:00:00:02"}}}
    assert eth["cookie"] == FORWARDING_COOKIE and eth["table_id"] == 0 and eth["priority"] == 100
    action = eth["instructions"]["instruction"][0]["apply-actions"]["action"][0]
    assert action["output-action"]["output-node-connector"] == "3"
    arp = odl_flow(Rule(1, "sdnbench-arp-h2", 110, 3, arp_tpa="10.0.0.2"))
    assert arp["match"] == {"ethernet-match": {"ethernet-type": {"type": 0x0806}},
                            "arp-target-transport-address": "10.0.0.2/32"}


def test_restconf_paths_encode_the_node_id():
    assert table_path(10) == "/rests/data/opendaylight-inventory:nodes/node=openflow%3A10/flow-node-inventory:table=0"
    assert flow_path(1, "sdnbench-eth-h1").endswith("flow-node-inventory:table=0/flow=sdnbench-eth-h1")


class JsonHandler(BaseHTTPRequestHandler):
    """Answers with a JSON body (or none) and logs nothing."""

    def log_message(self, *args):
        pass

    def reply(self, status, body=None):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))


def serve(handler) -> ThreadingHTTPServer:
    """handler served on a free loopback port, in a thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class FakeRestconf:
    """Config and operational tables per node, basic auth, operational copies appearing after `lag` polls."""

    def __init__(self, lag: int = 2, auth: str = "admin:admin"):
        self.config: dict[str, dict[str, dict]] = {}
        self.polls: dict[str, int] = {}
        self.lag, self.requests = lag, []
        import base64
        self.auth = "Basic " + base64.b64encode(auth.encode()).decode()
        fake = self

        class Handler(JsonHandler):
            def handle_any(self):
                fake.requests.append((self.command, self.path))
                if self.headers.get("Authorization") != fake.auth:
                    return self.reply(401, {"errors": "unauthorized"})
                path, _, query = self.path.partition("?")
                node = urllib.parse.unquote(path.split("/node=")[1].split("/")[0])
                flows = fake.config.setdefault(node, {})
                if self.command == "PATCH":
                    for f in self.body()["flow-node-inventory:table"][0]["flow"]:
                        flows[f["id"]] = f
                    return self.reply(200)
                if self.command == "DELETE":
                    flow_id = urllib.parse.unquote(path.rsplit("/flow=", 1)[1])
                    return self.reply(204 if flows.pop(flow_id, None) else 404)
                if "nonconfig" in query:
                    fake.polls[node] = fake.polls.get(node, 0) + 1
                    if fake.polls[node] <= fake.lag:
                        return self.reply(409, {"errors": {"error": [{"error-tag": "data-missing"}]}})
                ids = [{"id": i} for i in flows] + [{"id": "#UF$TABLE*0-1"}]   # an unnamed flow of the switch
                return self.reply(200, {"flow-node-inventory:table": [{"id": 0, "flow": ids}]})

            do_GET = do_PATCH = do_DELETE = handle_any

        self.server = serve(Handler)
        self.url = self.server.url

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def restconf():
    server = FakeRestconf()
    yield server
    server.close()


def test_programming_a_tree_writes_once_per_switch_and_waits_for_every_flow(restconf):
    g = build_topology({"kind": "tree", "depth": 2, "fanout": 2})
    programmer = OdlFlowProgrammer(RestClient(restconf.url, "admin:admin"))
    report = program_topology(programmer, g, port_plan(g))
    assert (report.switches, report.rules) == (3, 24)
    patches = [p for m, p in restconf.requests if m == "PATCH"]
    assert patches == [table_path(d) for d in (1, 2, 3)]
    assert set(restconf.config["openflow:2"]) == {f"sdnbench-{k}-h{i}" for k in ("eth", "arp") for i in range(1, 5)}
    # Confirmed only after the fake's two "data-missing" polls per switch.
    assert all(n == restconf.lag + 1 for n in restconf.polls.values())
    assert 0 <= report.write_s <= report.confirmed_s
    env = report.environment()
    assert env["forwarding"] == "proactive" and env["forwarding_api"] == "opendaylight-restconf"


def test_remove_deletes_only_sdnbench_flows(restconf):
    programmer = OdlFlowProgrammer(RestClient(restconf.url, "admin:admin"))
    programmer.write(1, [Rule(1, "sdnbench-eth-h1", 100, 1, eth_dst="00:00:00:00:00:01")])
    restconf.config["openflow:1"]["other"] = {"id": "other"}
    programmer.remove(1)
    assert set(restconf.config["openflow:1"]) == {"other"}


def test_wrong_credentials_are_reported_with_the_status(restconf):
    programmer = OdlFlowProgrammer(RestClient(restconf.url, "admin:wrong"))
    with pytest.raises(ControllerError, match="refused: HTTP 401"):
        programmer.write(1, [Rule(1, "sdnbench-eth-h1", 100, 1, eth_dst="00:00:00:00:00:01")])


def test_no_controller_is_a_controller_error():
    from sdnbench.controllers.process import free_port

    programmer = OdlFlowProgrammer(RestClient(f"http://127.0.0.1:{free_port()}", "admin:admin", timeout_s=2))
    with pytest.raises(ControllerError, match="writing flows of openflow:1 failed"):
        programmer.write(1, [Rule(1, "sdnbench-eth-h1", 100, 1, eth_dst="00:00:00:00:00:01")])


class NeverInstalls(FlowProgrammer):
    """Accepts writes; the switch never gets them."""

    api = "never"

    def write(self, dpid, rules):
        pass

    def installed(self, dpid):
        return set()

    def remove(self, dpid):
        pass


def test_rules_never_confirmed_time_out_naming_the_switch():
    with pytest.raises(ControllerError, match="2 of 2 forwarding rules not reported installed on 1 switches.*dpid 7"):
        program(NeverInstalls(None), [Rule(7, "sdnbench-eth-h1", 100, 1, eth_dst="a"),
                                  Rule(7, "sdnbench-arp-h1", 110, 1, arp_tpa="10.0.0.1")],
                confirm_timeout_s=0.3, poll_s=0.05)


# -- ONOS REST API v1 ----------------------------------------------------------------------

class FakeOnos:
    """POST /onos/v1/flows stores flows ADDED (ethType spelt as a number, as ONOS answers it),
    GET and DELETE /onos/v1/flows/application/<app>."""

    def __init__(self):
        self.flows: list[dict] = []
        fake = self

        class Handler(JsonHandler):
            def do_POST(self):
                assert self.path == "/onos/v1/flows?appId=org.sdnbench"
                for f in self.body()["flows"]:
                    crits = [{**c, "ethType": int(c["ethType"], 16)} if "ethType" in c else c
                             for c in f["selector"]["criteria"]]
                    fake.flows.append({**f, "selector": {"criteria": crits[::-1]}, "state": "ADDED",
                                       "appId": "org.sdnbench", "id": str(len(fake.flows))})
                self.reply(200, {"flows": []})

            def do_GET(self):
                if self.path == "/onos/v1/devices":
                    return self.reply(200, {"devices": [{"id": "of:000000000000000a", "available": True},
                                                        {"id": "of:0000000000000002", "available": False},
                                                        {"id": "netconf:10.0.0.1:830", "available": True}]})
                self.reply(200, {"flows": fake.flows})

            def do_DELETE(self):
                fake.flows.clear()
                self.reply(204)

        self.server = serve(Handler)
        self.url = self.server.url


@pytest.fixture
def onos():
    server = FakeOnos()
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_onos_programmer_writes_per_device_and_recognises_its_flows(onos):
    from sdnbench.forwarding import flow_programmer
    from sdnbench.forwarding.onos import onos_flow

    g = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    report = program_topology(flow_programmer("onos", RestClient(onos.url, "onos:rocks")), g, port_plan(g),
                              confirm_timeout_s=5)
    assert (report.api, report.switches, report.rules) == ("onos-rest", 2, 8)
    assert {f["deviceId"] for f in onos.flows} == {"of:0000000000000001", "of:0000000000000002"}
    arp = onos_flow(Rule(1, "sdnbench-arp-h2", 110, 3, arp_tpa="10.0.0.2"))
    assert arp["selector"]["criteria"] == [{"type": "ETH_TYPE", "ethType": "0x806"},
                                           {"type": "ARP_TPA", "ip": "10.0.0.2"}]
    assert arp["treatment"] == {"instructions": [{"type": "OUTPUT", "port": "3"}]}


def test_onos_lists_its_available_openflow_devices_and_takes_one_flow_per_request(onos):
    from sdnbench.forwarding.onos import OnosFlowProgrammer

    programmer = OnosFlowProgrammer(RestClient(onos.url, "onos:rocks"))
    assert programmer.switches() == {10}
    programmer.write_flow(10, Rule(10, "sdnbench-fp-0", 200, 1, eth_dst="02:fb:00:00:00:00"))
    assert [f["deviceId"] for f in onos.flows] == ["of:000000000000000a"]
    assert programmer.installed(10) == {"sdnbench-fp-0"}


def test_odl_lists_its_inventory_and_puts_one_flow_at_its_own_path():
    from sdnbench.forwarding.odl import inventory_dpids

    nodes = {"opendaylight-inventory:nodes": {"node": [{"id": "openflow:1"}, {"id": "openflow:18"}, {"id": "x"}]}}
    assert inventory_dpids(nodes) == {1, 18} and inventory_dpids(None) == set()
    rule = Rule(3, "sdnbench-fp-7", 200, 1, eth_dst="02:fb:00:00:00:07", cookie=0x5DB1_0001_0000_0007)
    assert odl_flow(rule)["cookie"] == 0x5DB1_0001_0000_0007
    assert flow_path(3, rule.name).endswith("/node=openflow%3A3/flow-node-inventory:table=0/flow=sdnbench-fp-7")


def test_a_remote_controller_is_programmed_when_its_options_ask(onos):
    from types import SimpleNamespace

    from sdnbench.controllers import ControllerSpec, make_adapter

    g = build_topology({"kind": "single", "hosts": 3})
    plain = make_adapter(ControllerSpec(kind="remote", label="onos", rest_url=onos.url))
    assert plain.network_ready(SimpleNamespace(graph=g)) == {} and onos.flows == []
    spec = ControllerSpec(kind="remote", label="onos", rest_url=onos.url,
                          options={"forwarding": "proactive", "flow_api": "onos", "rest_auth": "onos:rocks"})
    facts = make_adapter(spec).network_ready(SimpleNamespace(graph=g))
    assert facts["forwarding_api"] == "onos-rest" and facts["forwarding_rules"] == 6 == len(onos.flows)


def test_an_unknown_flow_api_names_the_known_ones():
    from sdnbench.errors import ConfigError
    from sdnbench.forwarding import flow_programmer

    with pytest.raises(ConfigError, match="'floodlight'.*opendaylight, onos"):
        flow_programmer("floodlight", RestClient("http://127.0.0.1:1"))
