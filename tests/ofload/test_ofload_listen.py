"""Listen mode (--listen-flow-mods) and the flowprog workload against a fake proactive controller: a RESTCONF
server whose flow PUTs become OpenFlow 1.3 FLOW_MODs on the emulated switch they name."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import struct
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sdnbench.controllers import ControllerSpec, make_adapter
from sdnbench.paths import REPO_ROOT
from sdnbench.runner.plan import Trial
from sdnbench.workloads.base import TrialContext
from sdnbench.workloads.flowmods import FlowModListener
from sdnbench.workloads.types.flowprog import WORKLOAD as FLOWPROG

from .conftest import accept_switches, fake_controller, run_ofload

OFP13 = 4


def flow_mod13(cookie: int, mac: str, command: int = 0, xid: int = 7) -> bytes:
    """An OpenFlow 1.3 FLOW_MOD in table 0 matching eth_dst, priority 200, no instructions."""
    oxm = struct.pack("!HBB", 0x8000, 3 << 1, 6) + bytes.fromhex(mac.replace(":", ""))
    match = struct.pack("!HH", 1, 4 + len(oxm)) + oxm
    match += b"\0" * (-len(match) % 8)
    body = struct.pack("!QQBBHHHIIIH2x", cookie, 0, 0, command, 0, 0, 200, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return struct.pack("!BBHI", OFP13, 14, 8 + len(body) + len(match), xid) + body + match


class FakeProactive:
    """OpenFlow listener plus RESTCONF: a flow PUT answers 201 and sends its FLOW_MOD to the switch
    (every `drop`-th one never leaves); the inventory lists the connected switches; DELETE removes."""

    def __init__(self, lsock, switches: int, drop: int = 0):
        self.conns, self.config, self.puts, self.lock = {}, {}, 0, threading.Lock()
        fake = self

        def accept():
            fake.conns.update({i + 1: c for i, c in accept_switches(lsock, switches, OFP13).items()})

        threading.Thread(target=accept, daemon=True).start()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, body=None):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if "/node=" not in self.path:
                    nodes = [{"id": f"openflow:{d}"} for d in fake.conns]
                    return self.reply(200, {"opendaylight-inventory:nodes": {"node": nodes}})
                dpid = int(urllib.parse.unquote(self.path).split("openflow:")[1].split("/")[0])
                flows = [{"id": i} for (d, i) in fake.config if d == dpid]
                return self.reply(200, {"flow-node-inventory:table": [{"id": 0, "flow": flows}]})

            def do_PUT(self):
                path = urllib.parse.unquote(self.path)
                dpid, flow_id = int(re.search(r"openflow:(\d+)", path)[1]), path.rsplit("/flow=", 1)[1]
                [flow] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["flow-node-inventory:flow"]
                mac = flow["match"]["ethernet-match"]["ethernet-destination"]["address"]
                with fake.lock:
                    fake.config[(dpid, flow_id)] = flow
                    fake.puts += 1
                    if not (drop and fake.puts % drop == 0):
                        fake.conns[dpid].sendall(flow_mod13(flow["cookie"], mac))
                self.reply(201)

            def do_DELETE(self):
                path = urllib.parse.unquote(self.path)
                dpid, flow_id = int(re.search(r"openflow:(\d+)", path)[1]), path.rsplit("/flow=", 1)[1]
                with fake.lock:
                    self.reply(204 if fake.config.pop((dpid, flow_id), None) else 404)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self):
        self.http.shutdown()
        self.http.server_close()
        for c in self.conns.values():
            c.close()


def test_listen_mode_reports_each_flow_mod_with_its_time_cookie_and_match(ofload_bin):
    import jsonschema

    def controller(lsock, stop):
        conns = accept_switches(lsock, 2, OFP13)
        time.sleep(0.3)
        conns[1].sendall(flow_mod13(0x5DB1_0001_0000_0002, "02:fb:00:00:00:02"))
        conns[0].sendall(flow_mod13(1, "02:fb:00:00:00:09", command=3))
        stop.wait(5)
        for c in conns.values():
            c.close()

    t0 = time.monotonic_ns()
    with fake_controller(controller) as port:
        p = run_ofload(ofload_bin, port, "-V", "1.3", "-s", "2", "--listen-flow-mods", "--listen-for", "1500ms")
    t1 = time.monotonic_ns()
    assert p.returncode == 0, p.stdout + p.stderr
    records = [json.loads(line) for line in p.stdout.splitlines()]
    schema = json.loads((REPO_ROOT / "schemas" / "ofload.schema.json").read_text())
    for r in records:
        jsonschema.validate(r, schema)
    assert [r["type"] for r in records] == ["connected", "flow_mod", "flow_mod", "summary"]
    add, delete = sorted((r["data"] for r in records[1:3]), key=lambda d: d["command"])
    assert (add["dpid"], add["switch"], add["cookie_hex"], add["eth_dst"]) == (2, 1, "0x5db1000100000002",
                                                                               "02:fb:00:00:00:02")
    assert delete["command"] == 3 and delete["dpid"] == 1
    assert t0 < records[0]["data"]["t_ns"] < add["t_ns"] < t1, "the clock of time.monotonic_ns()"
    s = records[-1]["data"]
    assert s["mode"] == "listen-flow-mods" and s["flow_mods"] == {"total": 2, "add": 1, "modify": 0, "delete": 1}
    assert s["valid"] and s["switches_connected"] == 2 and 1.4 < s["listen_s"] < 3


@contextlib.contextmanager
def proactive(switches: int, drop: int = 0):
    """A FakeProactive on a free loopback port; yields (fake, OpenFlow port)."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    fake = FakeProactive(lsock, switches, drop)
    try:
        yield fake, lsock.getsockname()[1]
    finally:
        fake.close()
        lsock.close()


def run_flowprog(fake, port, tmp_path, **workload):
    spec = ControllerSpec(kind="remote", label="fake", port=port, rest_url=fake.url,
                          options={"flow_api": "opendaylight", "rest_auth": "admin:admin"})
    wl = {"name": "flows", "type": "flowprog", "switches": 3, "flows_per_switch": 20, "concurrency": 4, "batch": 1,
          "wait_s": 2, **workload}
    trial = Trial(0, spec, None, "-", None, wl, {}, 0)
    return FLOWPROG.run(trial, TrialContext(None, make_adapter(spec), tmp_path))


def test_every_written_flow_is_paired_with_its_flow_mod(tmp_path):
    with proactive(3) as (fake, port):
        [result], env = run_flowprog(fake, port, tmp_path)
        assert fake.config == {}, "the benchmark's flows are removed afterwards"
    m = result.metrics
    assert result.errors == [], result.errors
    assert (m["flows_written"], m["flows_acknowledged"], m["flows_seen"], m["flows_unseen"]) == (60, 60, 60, 0)
    assert m["flow_programming_per_s"] > 0 and 0 < m["flow_programming_p50_ms"] <= m["flow_programming_p99_ms"]
    assert m["switches_connected"] == 3 and m["flow_mods_unpaired"] == 0
    assert sum(pt["flow_programming_per_s"] for pt in result.series) == 60, "per-second bins of every flow seen"
    assert env["flow_api"] == "opendaylight-restconf" and env["inventory_s"] is not None
    assert "--listen-flow-mods" in env["engine_argv"] and '"flow_mod"' in result.raw["ofload.jsonl"]


def test_flows_that_never_arrive_are_errors_not_zero_latencies(tmp_path):
    with proactive(2, drop=5) as (fake, port):
        [result], _ = run_flowprog(fake, port, tmp_path, switches=2, flows_per_switch=10, wait_s=1)
    m = result.metrics
    assert (m["flows_acknowledged"], m["flows_seen"], m["flows_unseen"]) == (20, 16, 4)
    assert result.errors == ["4 of 20 acknowledged flows never reached their switch within 1 s of the last write"]


def test_the_listener_ends_when_its_stdin_closes(tmp_path):
    def controller(lsock, stop):
        conns = accept_switches(lsock, 1, OFP13)
        stop.wait(10)
        for c in conns.values():
            c.close()

    with fake_controller(controller) as port:
        t0 = time.monotonic()
        with FlowModListener("127.0.0.1", port, "1.3", 1, tmp_path, listen_for_s=60) as listener:
            assert listener.wait_connected(10)["switches_connected"] == 1
            summary = listener.stop()
        assert time.monotonic() - t0 < 10, "stdin closed: no need to wait out --listen-for"
    assert summary["mode"] == "listen-flow-mods" and summary["flow_mods"]["total"] == 0
