"""A topology spread over two workers (network namespaces with their own sshd and Open vSwitch) by Mininet's
cluster edition: every host pair reachable through a VXLAN tunnel, each worker's switches connected to a
controller on the head, and nothing left on either worker or on this machine afterwards.
Functional only: both workers share this machine's kernel and cores."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from sdnbench.clean import clean_rundir
from sdnbench.emulation.cluster.network import ClusterNetwork
from sdnbench.emulation.lock import NetworkLock
from sdnbench.manifest import Manifest, process_start_time
from sdnbench.topology import build_topology

from .cluster_lab import PREFIX, SSHD, WorkerLab
from .helpers import all_pairs, free_port

pytestmark = [pytest.mark.netns, pytest.mark.slow,
              pytest.mark.skipif(not SSHD.exists(), reason="no sshd: apt-get install openssh-server")]

LINEAR4 = {"kind": "linear", "switches": 4, "hosts_per_switch": 1}


@pytest.fixture(autouse=True)
def machine_lock():
    """The machine's network lock for the whole test, lab included (others' runs measure on these cores)."""
    lock = NetworkLock()
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


def lab_names() -> list[str]:
    """Namespaces and root-namespace interfaces with the lab's prefix."""
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return sorted([ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines() if f" {PREFIX}" in ln]
                  + [line.split()[0] for line in ns.splitlines() if line.startswith(PREFIX)])


def remote_shells(manifest: Manifest) -> list[tuple[int, int]]:
    """(pid, start) of the node shells the run recorded on its workers (one kernel here: visible locally)."""
    recs = [json.loads(line) for line in manifest.path.read_text().splitlines()]
    return [(r["pid"], r["start"]) for r in recs if r["event"] == "created" and r["kind"] == "remote_process"]


def running(pid: int, start: int) -> bool:
    """pid is still the recorded process and has not ended (a killed shell may wait a moment, a zombie, for its
    parent, the worker's sshd, to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return process_start_time(pid) == start and stat[stat.rindex(")") + 2] != "Z"


def assert_workers_empty(lab: WorkerLab, manifest: Manifest) -> None:
    """No bridge, interface or process of the run remains on any worker, and the manifest holds nothing."""
    for w in lab.workers:
        assert w.vsctl("list-br").split() == [], w.name
        # ovs-netdev is the userspace datapath's own device, gone with the worker's ovs-vswitchd.
        assert w.interfaces() <= {"lo", f"{w.ns}-w", "ovs-netdev"}, w.name
        assert w.pids() == {p.pid for p in w.procs}, w.name
    assert [(pid, start) for pid, start in remote_shells(manifest) if running(pid, start)] == []
    assert manifest.outstanding() == []


def test_linear_spanning_two_workers(tmp_path, capsys):
    """linear-4, two switches per worker: placement, controller reached from both workers, all pairs ping."""
    graph = build_topology(LINEAR4)
    manifest = Manifest(tmp_path)
    with WorkerLab() as lab:
        port = free_port()
        lab.start(["ovs-testcontroller", "-O", "OpenFlow10", f"--unixctl={lab.base}/controller.ctl",
                   f"ptcp:{port}:{lab.head}"], "controller")
        net = ClusterNetwork(graph, manifest, lab.cluster_section(), openflow="1.0", fail_mode="secure", lock=False)
        assert net.where == {"s1": "w1", "s2": "w1", "h1": "w1", "h2": "w1",
                             "s3": "w2", "s4": "w2", "h3": "w2", "h4": "w2"}
        assert net.crossing == [("s2", "s3")]
        try:
            net.start()
            t0 = time.monotonic()
            net.attach_controller(f"tcp:127.0.0.1:{port}", timeout_s=60)
            connect_s = time.monotonic() - t0
            assert net.target == f"tcp:{lab.head}:{port}"
            assert net.connection_status() == {"w1": {"s1", "s2"}, "w2": {"s3", "s4"}}
            # Each worker's own Open vSwitch holds its switches, the tunnel end among their ports.
            assert sorted(lab.workers[0].vsctl("list-br").split()) == ["s1", "s2"]
            assert sorted(lab.workers[1].vsctl("list-br").split()) == ["s3", "s4"]
            assert "vxlan" in subprocess.run(["ip", "netns", "exec", lab.workers[1].ns, "ip", "-d", "link", "show",
                                              "s3-eth1"], capture_output=True, text=True).stdout
            pairs = all_pairs(graph)
            t0 = time.monotonic()
            assert net.reachability(pairs, timeout_s=30) == []
            ping_s = time.monotonic() - t0
            env = net.describe()
            assert env["functional_only"] is True
            assert env["cluster"]["placement"] == {"s1": "w1", "s2": "w1", "s3": "w2", "s4": "w2"}
            assert env["cluster"]["cross_links"] == 1 and env["links"] == "vxlan"
            with capsys.disabled():
                print(f"\ncluster linear-4 on 2 namespace workers (functional only): built in {net.build_s:.1f} s, "
                      f"connected in {connect_s:.1f} s, {len(pairs)}/{len(pairs)} pairs reachable "
                      f"in {ping_s:.2f} s")
        finally:
            net.stop()
        assert_workers_empty(lab, manifest)
    assert lab_names() == []
    assert not Path(lab.base).exists()


def test_clean_after_a_crash_removes_the_run_from_every_worker(tmp_path):
    """A run that died with its network up: `sdnbench clean` reads the manifest and removes everything it
    recorded on both workers over ssh, by PID and start time or by name."""
    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    manifest = Manifest(tmp_path)
    with WorkerLab() as lab:
        net = ClusterNetwork(graph, manifest, lab.cluster_section(placement="round_robin"), fail_mode="standalone",
                             lock=False)
        try:
            net.start()
            assert net.reachability(all_pairs(graph), timeout_s=30) == []
            assert clean_rundir(tmp_path, say=lambda m: None) >= 4   # 4 shells, 2 bridges, their interfaces
            net.net = None   # the crashed run's Mininet object is gone with it
        finally:
            net.stop()
        assert_workers_empty(lab, manifest)
    assert lab_names() == []


def test_refuses_a_worker_holding_our_names(tmp_path):
    """A bridge of the same name on a worker (a killed run's, another tool's) stops the build before anything
    is created, and is left alone."""
    graph = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1})
    manifest = Manifest(tmp_path)
    with WorkerLab() as lab:
        lab.workers[1].vsctl("add-br", "s2", "--", "set", "bridge", "s2", "datapath_type=netdev")
        net = ClusterNetwork(graph, manifest, lab.cluster_section(), fail_mode="standalone", lock=False)
        with pytest.raises(Exception, match="w2 already has s2"):
            net.start()
        assert lab.workers[1].vsctl("list-br").split() == ["s2"]
        assert lab.workers[0].vsctl("list-br").split() == []
        assert manifest.outstanding() == []
        lab.workers[1].vsctl("del-br", "s2")
    assert lab_names() == []
