"""OpenDaylight managed by sdnbench on a tree network: inventory, proactive forwarding, RESTCONF load, stop.

One OpenDaylight boots for the module (45-100 s here); skips when it is not
built (scripts/install-controllers.sh odl, which `make setup` runs).
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from sdnbench.controllers import ADAPTERS
from sdnbench.controllers.base import ControllerSpec
from sdnbench.controllers.odl_base import FIXED_PORTS
from sdnbench.controllers.process import port_listening
from sdnbench.forwarding.rules import FORWARDING_COOKIE
from sdnbench.runner.monitor import CpuMonitor
from sdnbench.topology import build_topology
from sdnbench.workloads.nbi import NbiSpec, headline, run_nbi

from .helpers import all_pairs, controlled_network, free_port

pytestmark = [pytest.mark.netns, pytest.mark.slow]

TREE = {"kind": "tree", "depth": 3, "fanout": 2}   # 7 switches, 8 hosts


@pytest.fixture(scope="module")
def odl(tmp_path_factory):
    """(network, adapter, what network_ready returned, pid) with OpenDaylight controlling a tree, no
    forwarding programmed before the first test looks; afterwards nothing may be left."""
    avail = ADAPTERS["odl"].availability()
    if not avail.ok:
        pytest.skip(f"odl: {avail.detail} (fix: {avail.fix})")
    graph = build_topology(TREE)
    spec = ControllerSpec(kind="odl", label="odl", port=free_port(), rest_port=free_port())
    rundir = tmp_path_factory.mktemp("odl")
    with controlled_network(spec, graph, rundir) as (net, adapter):
        [pid] = adapter.pids()
        # Nothing is programmed yet: the secure-mode switches drop everything.
        assert net.reachability([("h1", "h8")], timeout_s=2) == [("h1", "h8")]
        facts = adapter.network_ready(net)
        yield net, adapter, facts, pid
    assert not os.path.exists(f"/proc/{pid}"), f"OpenDaylight PID {pid} survived stop()"
    for port in (spec.port, spec.rest_port, *FIXED_PORTS):
        assert not port_listening("127.0.0.1", port), f"port {port} still listens after stop()"
    assert (rundir / "odl-karaf" / "data" / "log" / "karaf.log").exists()
    assert not (rundir / "odl-karaf" / "data" / "cache").exists(), "the bundle cache was not tidied"


def test_every_switch_is_in_the_inventory(odl):
    net, adapter, facts, _ = odl
    assert adapter.inventory() == {s.dpid for s in net.graph.switches}
    assert facts["inventory_s"] >= 0


def test_proactive_forwarding_reaches_every_host_pair(odl):
    net, _, facts, _ = odl
    assert facts["forwarding"] == "proactive" and facts["forwarding_switches"] == 7
    assert facts["forwarding_rules"] == 2 * 7 * 8
    assert 0 < facts["forwarding_write_s"] <= facts["forwarding_confirmed_s"]
    assert net.reachability(all_pairs(net.graph), timeout_s=30) == []
    flows = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "dump-flows", "s1"], capture_output=True, text=True).stdout
    ours = [line for line in flows.splitlines() if f"cookie={FORWARDING_COOKIE:#x}" in line]
    assert len(ours) == 2 * 8, flows   # the root switch has a MAC and an ARP rule per host


def test_start_time_and_memory_are_recorded(odl):
    _, adapter, facts, pid = odl
    assert 5 < facts["controller_start_s"] < 300 and facts["controller_heap"] == "1g"
    with CpuMonitor(lambda: [pid], interval_s=0.1) as mon:
        time.sleep(0.35)
    rss = mon.result()["ctrl_rss_max_mb"]
    assert 200 < rss < 4000, rss
    assert os.sched_getaffinity(pid) == os.sched_getaffinity(0)   # unpinned: cpus not set


@pytest.mark.parametrize("preset", ["opendaylight-rfc8040", "opendaylight-rfc8040-flowmod"])
def test_restconf_load_gives_throughput_and_error_rate(odl, preset, tmp_path):
    _, adapter, _, _ = odl
    # 10 requests/s: far below what one core serves (the full inventory with statistics is ~135 kB
    # and ~0.1 s of work per read here), so every request must succeed.
    spec = NbiSpec(url=adapter.endpoints()["rest"], stages=("const:10rps:5s",), preset=preset,
                   variables={"dpid": 1})
    res = run_nbi(spec, tmp_path, timeout_s=60)
    head = headline(res.summary)
    assert head["error_rate_pct"] == 0, res.summary["failed_by_reason"]
    assert 8 <= head["throughput_rps"] <= 12, head


def test_restconf_refuses_requests_without_credentials(odl):
    _, adapter, _, _ = odl
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(adapter.endpoints()["rest"] + "/rests/data/opendaylight-inventory:nodes", timeout=10)
    assert err.value.code == 401
