"""Every managed controller drives a multi-switch Mininet network: all host pairs reachable."""

from __future__ import annotations

import pytest

from sdnbench.controllers import ADAPTERS, make_adapter
from sdnbench.controllers.base import ControllerSpec
from sdnbench.emulation.network import EmulatedNetwork
from sdnbench.manifest import Manifest
from sdnbench.procs import ProcessTracker
from sdnbench.topology import build_topology

from .helpers import free_port, leftovers

pytestmark = pytest.mark.netns

CASES = [("osken", "1.3"), ("osken", "1.0"), ("ryu", "1.3"), ("faucet", "1.3"),
         ("testcontroller", "1.0"), ("pox", "1.0")]


@pytest.mark.parametrize("kind,openflow", CASES, ids=[f"{k}-of{v}" for k, v in CASES])
def test_controller_connects_every_switch_and_forwards(kind, openflow, tmp_path):
    avail = ADAPTERS[kind].availability()
    if not avail.ok:
        pytest.skip(f"{kind}: {avail.detail}")
    graph = build_topology({"kind": "tree", "depth": 2, "fanout": 2})
    manifest = Manifest(tmp_path)
    tracker = ProcessTracker(manifest)
    spec = ControllerSpec(kind=kind, label=kind, openflow=openflow, port=free_port())
    adapter = make_adapter(spec, tracker)
    net = EmulatedNetwork(graph, manifest, openflow=openflow, fail_mode="secure")
    spec.options["datapaths"] = net.ports()
    try:
        adapter.start(tmp_path)
        net.start()
        net.attach_controller(adapter.endpoints()["openflow"], timeout_s=60)
        hosts = [h.name for h in graph.hosts]
        pairs = [(a, b) for a in hosts for b in hosts if a != b]
        assert net.reachability(pairs, timeout_s=30) == []
        assert adapter.version() not in ("", "?")
    finally:
        net.stop()
        adapter.stop()
        tracker.stop_all()
    assert leftovers(graph) == []
    assert manifest.outstanding() == []
