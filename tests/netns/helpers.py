"""What netns tests share: a leak check of the machine's OVS bridges, interfaces and namespaces,
and a controller driving a network."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import pytest

from sdnbench.controllers import make_adapter
from sdnbench.controllers.base import ControllerSpec
from sdnbench.emulation import ovs
from sdnbench.emulation.network import EmulatedNetwork
from sdnbench.manifest import Manifest
from sdnbench.paths import native_tool
from sdnbench.procs import ProcessTracker
from sdnbench.topology.graph import TopologyGraph


def leftovers(graph: TopologyGraph) -> list[str]:
    """Bridges or root-namespace interfaces of graph that still exist."""
    names = {s.name for s in graph.switches}
    found = sorted(names & ovs.existing_bridges())
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    found += [ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines()
              if ln.split(":")[1].strip().split("-eth")[0] in names]
    return found


def skip_unless_built(*tools: str) -> None:
    """Skips the test when a native tool it runs is not built."""
    for tool in tools:
        if native_tool(tool) is None:
            pytest.skip(f"{tool} is not built (cargo build --release -p {tool})")


def free_port() -> int:
    """A TCP port nothing listens on right now (for a controller under test)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def all_pairs(graph: TopologyGraph) -> list[tuple[str, str]]:
    """Every ordered pair of distinct hosts."""
    hosts = [h.name for h in graph.hosts]
    return [(a, b) for a in hosts for b in hosts if a != b]


@contextlib.contextmanager
def controlled_network(spec: ControllerSpec, graph: TopologyGraph, rundir: Path, switch: str = "ovs"):
    """Start spec's controller and graph's network (fail mode secure, switch kind `switch`) with every
    switch attached; yield (network, adapter); stop both, then check that nothing was left behind."""
    manifest = Manifest(rundir)
    tracker = ProcessTracker(manifest)
    adapter = make_adapter(spec, tracker)
    net = EmulatedNetwork(graph, manifest, openflow=spec.openflow, fail_mode="secure", switch=switch)
    spec.options["datapaths"] = net.ports()
    try:
        adapter.start(rundir)
        net.start()
        adapter.connect(net, 60)   # switches dial the controller (OpenFlow) or it dials them (P4Runtime)
        yield net, adapter
    finally:
        net.stop()
        adapter.stop()
        tracker.stop_all()
    assert leftovers(graph) == []
    assert manifest.outstanding() == []
