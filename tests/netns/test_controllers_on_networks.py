"""Every managed controller drives a multi-switch Mininet network: all host pairs reachable."""

from __future__ import annotations

import pytest

from sdnbench.controllers import ADAPTERS
from sdnbench.controllers.base import ControllerSpec
from sdnbench.topology import build_topology

from .helpers import all_pairs, controlled_network, free_port

pytestmark = pytest.mark.netns

CASES = [("osken", "1.3"), ("osken", "1.0"), ("ryu", "1.3"), ("faucet", "1.3"),
         ("testcontroller", "1.0"), ("pox", "1.0")]


@pytest.mark.parametrize("kind,openflow", CASES, ids=[f"{k}-of{v}" for k, v in CASES])
def test_controller_connects_every_switch_and_forwards(kind, openflow, tmp_path):
    avail = ADAPTERS[kind].availability()
    if not avail.ok:
        pytest.skip(f"{kind}: {avail.detail}")
    graph = build_topology({"kind": "tree", "depth": 2, "fanout": 2})
    spec = ControllerSpec(kind=kind, label=kind, openflow=openflow, port=free_port())
    with controlled_network(spec, graph, tmp_path) as (net, adapter):
        assert net.reachability(all_pairs(graph), timeout_s=30) == []
        assert adapter.version() not in ("", "?")
