"""The cluster section, placement, and what sdnbench runs on workers (no root, no worker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdnbench.config.loader import ExperimentErrors, parse_experiment
from sdnbench.config.schema import experiment_jsonschema
from sdnbench.emulation.cluster.network import controller_target
from sdnbench.emulation.cluster.placement import crossing, place
from sdnbench.emulation.cluster.worker import Worker, parse_probe, removal_script
from sdnbench.errors import ConfigError
from sdnbench.topology import build_topology

BASE = """\
name: c
controllers:
  - kind: ryu
    host: 0.0.0.0
topologies:
  - kind: linear
    switches: 4
workloads:
  - name: w
    flows:
      - proto: udp
        meter: {meter}
        rate_pps: 10
        duration_s: 1
cluster:
  workers:
    - name: w1
      address: 10.0.0.1
    - name: w2
      address: {second}
{extra}"""


def parse(meter="rtt", second="10.0.0.2", extra=""):
    return parse_experiment(BASE.format(meter=meter, second=second, extra=extra), Path("exp.yaml"))


def test_cluster_section_defaults():
    exp = parse()
    assert exp.cluster["placement"] == "blocks" and exp.cluster["user"] == "root"
    assert exp.cluster["clock_sync"] is False and exp.cluster["ssh_config"] is None


def test_one_machine_experiments_have_no_cluster():
    text = BASE.split("cluster:")[0].format(meter="owd", second="", extra="")
    assert parse_experiment(text, Path("exp.yaml")).cluster is None


@pytest.mark.parametrize("second, extra, line, message", [
    ("10.0.0.1", "", 20, "address 10.0.0.1 is given twice"),
    ("worker-two", "", 20, "expected an IP address"),
    ("10.0.0.2", "  switches:\n    s1: w9\n", 22, "no worker 'w9'; workers are w1, w2"),
    ("10.0.0.2", "  placement: random\n", 21, "expected one of blocks, round_robin"),
    ("10.0.0.2", "  clock: true\n", 21, "unknown key"),
])
def test_cluster_errors_name_file_and_line(second, extra, line, message):
    with pytest.raises(ExperimentErrors) as err:
        parse(second=second, extra=extra)
    assert f"exp.yaml:{line}:" in str(err.value) and message in str(err.value)


def test_one_way_delay_across_workers_needs_declared_clock_sync():
    with pytest.raises(ExperimentErrors) as err:
        parse(meter="owd")
    assert "exp.yaml:12: workloads[0].flows[0].meter" in str(err.value)
    assert "cluster.clock_sync: true" in str(err.value)
    assert parse(meter="owd", extra="  clock_sync: true\n").cluster["clock_sync"] is True


def test_controller_on_loopback_is_refused_with_a_cluster():
    text = BASE.format(meter="rtt", second="10.0.0.2", extra="").replace("host: 0.0.0.0", "host: 127.0.0.1")
    with pytest.raises(ExperimentErrors, match="exp.yaml:4: controllers.0..host: 127.0.0.1 is not reachable"):
        parse_experiment(text, Path("exp.yaml"))


def test_schema_publishes_the_cluster_section():
    props = experiment_jsonschema()["properties"]["cluster"]
    assert props["properties"]["placement"]["enum"] == ["blocks", "round_robin"]
    assert props["required"] == ["workers"]


def test_blocks_keep_runs_of_switches_together_and_hosts_with_their_switch():
    graph = build_topology({"kind": "linear", "switches": 5, "hosts_per_switch": 1})
    where = place(graph, ["a", "b"])
    assert [where[f"s{i}"] for i in range(1, 6)] == ["a", "a", "a", "b", "b"]
    assert all(where[f"h{i}"] == where[f"s{i}"] for i in range(1, 6))
    assert crossing(graph, where) == [("s3", "s4")]


def test_round_robin_and_explicit_placement():
    graph = build_topology({"kind": "linear", "switches": 4, "hosts_per_switch": 1})
    where = place(graph, ["a", "b"], "round_robin", {"s4": "a"})
    assert [where[f"s{i}"] for i in range(1, 5)] == ["a", "b", "a", "a"]
    assert len(crossing(graph, where)) == 2
    with pytest.raises(ConfigError, match="s9, not a switch"):
        place(graph, ["a", "b"], explicit={"s9": "a"})


def test_more_workers_than_switches():
    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    assert [place(graph, ["a", "b", "c"])[s] for s in ("s1", "s2")] == ["a", "b"]


def test_ssh_never_forwards_the_agent_nor_prompts():
    w = Worker("w1", "10.0.0.1", "root", "/tmp/cfg", "/tmp/sock")
    argv = w.ssh(tty=True)
    assert argv[:3] == ["ssh", "-F", "/tmp/cfg"] and argv[-2:] == ["-tt", "root@10.0.0.1"]
    assert "ForwardAgent=no" in argv and "BatchMode=yes" in argv and "ControlPath=/tmp/sock" in argv
    assert w.sudo() == "" and Worker("w1", "10.0.0.1", "alice").sudo() == "sudo -E "
    assert Worker.from_record(w.record()) == w.with_master(None)


def test_removal_script_kills_by_pid_and_start_time_and_deletes_by_recorded_name():
    recs = [{"kind": "remote_process", "name": "w1/42", "pid": 42, "start": 777},
            {"kind": "remote_bridge", "name": "w1/s1"},
            {"kind": "remote_interface", "name": "w1/s1-eth1"}]
    script = removal_script(recs)
    assert '= "777" ]' in script and "kill -KILL -- -42" in script
    assert "del-br s1" in script and "ip link del s1-eth1" in script
    for forbidden in ("mn -c", "pkill", "killall"):
        assert forbidden not in script
    assert script.index("kill") < script.index("del-br") < script.index("ip link del")


def test_probe_output():
    found = parse_probe("boot_id abc\nkernel_datapath no\nbridge s1\ninterface s1-eth1\n")
    assert found == {"boot_id": "abc", "kernel_datapath": False, "bridges": ["s1"], "interfaces": ["s1-eth1"]}


def test_controller_address_rewritten_only_when_workers_cannot_reach_it():
    assert controller_target("tcp:127.0.0.1:6653", "10.0.0.9") == "tcp:10.0.0.9:6653"
    assert controller_target("tcp:0.0.0.0:6653", "10.0.0.9") == "tcp:10.0.0.9:6653"
    assert controller_target("tcp:192.0.2.5:6653", "10.0.0.9") == "tcp:192.0.2.5:6653"


def test_cluster_cleanup_callback_is_disarmed():
    pytest.importorskip("mininet")
    from mininet.clean import Cleanup
    from mininet.examples.cluster import ClusterCleanup

    from sdnbench.emulation.cluster.nodes import disarm_cluster_cleanup

    ClusterCleanup.add("w1", "root")
    assert any(getattr(cb, "__func__", None) is ClusterCleanup.cleanup.__func__ for cb in Cleanup.callbacks)
    disarm_cluster_cleanup()
    assert not any(getattr(cb, "__func__", None) is ClusterCleanup.cleanup.__func__ for cb in Cleanup.callbacks)
    assert ClusterCleanup.serveruser == {}


def test_cluster_network_plan_before_start(tmp_path):
    pytest.importorskip("mininet")
    from sdnbench.emulation.cluster.network import ClusterNetwork
    from sdnbench.manifest import Manifest

    graph = build_topology({"kind": "linear", "switches": 4, "hosts_per_switch": 1})
    cluster = parse().cluster
    net = ClusterNetwork(graph, Manifest(tmp_path), cluster, lock=False)
    assert net.switches_on("w1") == ["s1", "s2"] and net.crossing == [("s2", "s3")]
    env = net.describe()
    assert env["functional_only"] is None and env["links"] == "vxlan"
    assert env["cluster"]["workers"] == {"w1": "10.0.0.1", "w2": "10.0.0.2"}
    topo = net._mininet_topo()
    assert [topo.linkInfo(a, b).get("vni") for a, b in topo.links()].count(None) == len(graph.links) - 1
    assert topo.nodeInfo("h3")["server"] == "w2"
    assert Manifest(tmp_path).outstanding() == []   # nothing recorded until start


def test_campaign_builds_a_cluster_network_when_the_experiment_has_a_cluster(tmp_path):
    pytest.importorskip("mininet")
    from sdnbench.emulation.cluster.network import ClusterNetwork
    from sdnbench.emulation.network import EmulatedNetwork
    from sdnbench.manifest import Manifest
    from sdnbench.runner.campaign import _network

    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    exp = parse()
    assert isinstance(_network(exp, graph, Manifest(tmp_path), "1.3", "secure", "ovs"), ClusterNetwork)
    exp.cluster = None
    assert isinstance(_network(exp, graph, Manifest(tmp_path), "1.3", "secure", "ovs"), EmulatedNetwork)


#: What the runner, trials and workloads use of a group's network (campaign.py, trial.py, health.py,
#: workload types); a cluster network must offer each, or a run with a cluster section fails mid-group.
NETWORK_INTERFACE = ("attach_controller", "connected_switches", "datapath", "describe", "graph", "hosts",
                     "link_window", "ports", "reachability", "start", "stop", "switch_availability")


def test_a_cluster_network_offers_what_the_runner_uses_of_a_network(tmp_path):
    pytest.importorskip("mininet")
    from sdnbench.emulation.cluster.network import ClusterNetwork
    from sdnbench.emulation.network import EmulatedNetwork
    from sdnbench.manifest import Manifest

    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    cluster_net = ClusterNetwork(graph, Manifest(tmp_path), parse().cluster, lock=False)
    local_net = EmulatedNetwork(graph, Manifest(tmp_path), lock=False)
    for net in (cluster_net, local_net):
        missing = [name for name in NETWORK_INTERFACE if not hasattr(net, name)]
        assert not missing, f"{type(net).__name__} lacks {missing}"
    assert cluster_net.switch_availability().ok
    with cluster_net.link_window() as window:
        pass
    assert window.metrics == {} and window.problems == []
