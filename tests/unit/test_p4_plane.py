"""The P4 data plane without bmv2: the switch axis of the plan, controller x switch compatibility, the
bmv2 switch kind's availability advice, command lines and manifest records (a stand-in binary)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from sdnbench.config.loader import parse_experiment
from sdnbench.controllers import ADAPTERS
from sdnbench.emulation.switches import SWITCHES
from sdnbench.emulation.switches import p4 as p4kind
from sdnbench.errors import CapabilityError, ConfigError
from sdnbench.manifest import Manifest
from sdnbench.runner.plan import expand, incompatible, switches
from sdnbench.runner.preflight import notes
from sdnbench.topology import build_topology

EXPERIMENT = """\
name: t
repetitions: 1
controllers:
CONTROLLERS
topologies:
  - {kind: spine_leaf, spines: 2, leaves: 2, hosts_per_leaf: 1}
network:
  switch: SWITCH
workloads:
  - name: udp
    flows:
      - {src: first, dst: last, proto: udp, rate_pps: 100, duration_s: 1}
"""


def parse(switch: str, controllers=("osken",)):
    text = EXPERIMENT.replace("SWITCH", switch).replace(
        "CONTROLLERS", "\n".join(f"  - kind: {c}" for c in controllers))
    return parse_experiment(text, Path("exp.yaml"))


def test_a_scalar_switch_reads_and_plans_as_before():
    exp = parse("ovs")
    assert exp.network["switch"] == "ovs" and switches(exp) == ["ovs"]
    trials = expand(exp)
    assert {t.topology for t in trials} == {"spine_leaf-2x2"} and {t.switch for t in trials} == {"ovs"}


def test_a_list_of_switches_gives_one_row_per_kind():
    exp = parse("[ovs, ovs_fast]")
    trials = expand(exp)
    assert [(t.topology, t.switch) for t in trials] == [("spine_leaf-2x2-ovs", "ovs"),
                                                         ("spine_leaf-2x2-ovs_fast", "ovs_fast")]
    assert len({t.group for t in trials}) == 2 and len({t.key for t in trials}) == 2


def test_every_existing_controller_speaks_openflow_and_the_p4_kind_p4runtime():
    assert SWITCHES.get("p4").southbound == "p4runtime"
    for kind, cls in ADAPTERS.items():
        if kind != "p4rt":
            assert cls.southbound == ("openflow",)
            assert "speaks openflow; p4 switches speak p4runtime" in cls.southbound_refusal(SWITCHES.get("p4"))
            assert cls.southbound_refusal(SWITCHES.get("ovs")) is None


def test_the_plan_leaves_out_pairs_of_another_southbound_and_says_why():
    exp = parse("[ovs, p4]", ("osken", "ryu"))
    assert [(t.controller.label, t.topology) for t in expand(exp)] == [("osken", "spine_leaf-2x2-ovs"),
                                                                       ("ryu", "spine_leaf-2x2-ovs")]
    assert [(i, sw) for i, sw, _ in incompatible(exp)] == [(0, "p4"), (1, "p4")]
    said = notes(exp, offline=True)
    assert said[0] == "exp.yaml:4: controllers[0].kind: osken is not run on p4 switches: osken speaks openflow; " \
                      "p4 switches speak p4runtime"


def test_a_controller_no_listed_switch_carries_is_a_config_error():
    with pytest.raises(ConfigError, match=r"exp.yaml:4: controllers\[0\].kind: ryu speaks openflow; p4 switches "
                                          r"speak p4runtime: no switch kind in network.switch carries it"):
        expand(parse("p4", ("ryu",)))


def test_bmv2_missing_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv(p4kind.ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    cap = SWITCHES.get("p4").availability()
    assert not cap.ok and cap.detail == "simple_switch_grpc (bmv2) not found on PATH"
    assert "p4lang" in cap.fix and "SDNBENCH_BMV2" in cap.fix and "from source" in cap.fix
    monkeypatch.setenv(p4kind.ENV, str(tmp_path / "nowhere"))
    assert "is not an executable simple_switch_grpc" in SWITCHES.get("p4").availability().detail


def test_a_missing_switch_kind_beside_others_is_a_note_and_alone_a_problem(monkeypatch, tmp_path):
    from sdnbench.runner.preflight import _data_plane_problems

    monkeypatch.delenv(p4kind.ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(SWITCHES.get("ovs"), "availability", classmethod(
        lambda cls: SimpleNamespace(ok=True)))
    both = parse("[ovs, p4]", ("osken",))
    assert _data_plane_problems(both) == []
    assert any("p4 rows will be skipped: simple_switch_grpc (bmv2) not found on PATH; fix: " in n
               for n in notes(both))


def test_switch_command_numbers_ports_like_ovs():
    argv = p4kind.switch_command(Path("/opt/bmv2/simple_switch_grpc"), 3, {2: "s3-eth2", 1: "s3-eth1"}, 9091, 50051)
    assert argv == ["/opt/bmv2/simple_switch_grpc", "--device-id", "3", "-i", "1@s3-eth1", "-i", "2@s3-eth2",
                    "--thrift-port", "9091", "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:50051",
                    "--cpu-port", "255"]


FAKE_BMV2 = """#!{python}
import socket, sys, time
with open(sys.argv[0] + ".argv", "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
port = int(sys.argv[sys.argv.index("--grpc-server-addr") + 1].rsplit(":", 1)[1])
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen()
time.sleep(60)
"""


@pytest.fixture
def fake_bmv2(tmp_path, monkeypatch):
    """A stand-in simple_switch_grpc that listens on its gRPC port, found through SDNBENCH_BMV2."""
    binary = tmp_path / "bin" / "simple_switch_grpc"
    binary.parent.mkdir()
    binary.write_text(FAKE_BMV2.format(python=sys.executable))
    binary.chmod(0o755)
    monkeypatch.setenv(p4kind.ENV, str(binary.parent))
    return binary


def test_each_switch_is_recorded_before_it_runs_and_stopped_by_pid(fake_bmv2, tmp_path):
    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    manifest = Manifest(tmp_path / "run")
    kind = SWITCHES.get("p4")(graph, manifest)
    kind.prepare()
    assert set(kind.endpoints()) == {"s1", "s2"} and kind.device_ids() == {"s1": 1, "s2": 2}
    kind.start_switch("s1", {1: "s1-eth1", 2: "s1-eth2"})
    kind.wait_listening()
    proc = kind.processes["s1"]
    [record] = [r for r in manifest.outstanding() if r["kind"] == "process"]
    assert record["name"] == str(proc.pid) and record["role"] == "switch:s1"
    assert record["argv"][:3] == [str(fake_bmv2), "--device-id", "1"]
    assert f"--grpc-server-addr {kind.endpoints()['s1']}" in (fake_bmv2.parent / "simple_switch_grpc.argv").read_text()
    kind.teardown()
    assert not proc.alive() and manifest.outstanding() == []
    described = kind.describe()
    assert described["switch"] == "p4" and described["datapath"] == "bmv2"
    assert described["bmv2_path"] == str(fake_bmv2)


def test_a_switch_that_dies_at_start_names_its_log(tmp_path, monkeypatch):
    binary = tmp_path / "simple_switch_grpc"
    binary.write_text("#!/bin/sh\necho 'no such interface' >&2\nexit 1\n")
    binary.chmod(0o755)
    monkeypatch.setenv(p4kind.ENV, str(binary))
    graph = build_topology({"kind": "single", "hosts": 2})
    kind = SWITCHES.get("p4")(graph, Manifest(tmp_path / "run"))
    kind.prepare()
    kind.start_switch("s1", {1: "s1-eth1"})
    with pytest.raises(CapabilityError, match=r"bmv2 switch s1 exited; log .*s1.log:\nno such interface"):
        kind.wait_listening()
    kind.teardown()
    assert Manifest(tmp_path / "run").outstanding() == []


def test_prepare_refuses_without_bmv2(monkeypatch, tmp_path):
    monkeypatch.delenv(p4kind.ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    kind = SWITCHES.get("p4")(build_topology({"kind": "single", "hosts": 2}), Manifest(tmp_path))
    with pytest.raises(CapabilityError, match="not found on PATH; fix: bmv2 is in neither"):
        kind.prepare()


def test_the_network_gives_a_dialling_controller_addresses_and_device_ids(fake_bmv2, tmp_path):
    from sdnbench.emulation.network import EmulatedNetwork

    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    net = EmulatedNetwork(graph, Manifest(tmp_path), switch="p4", lock=False)
    net.switch.prepare()
    ends = net.switch_endpoints()
    assert ends["s2"] == {"address": net.switch.endpoints()["s2"], "device_id": 2}
    assert json.dumps(ends)   # what the controller app is given
