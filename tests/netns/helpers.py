"""What netns tests share: a leak check of the machine's OVS bridges, interfaces and namespaces."""

from __future__ import annotations

import subprocess

from sdnbench.emulation import ovs
from sdnbench.topology.graph import TopologyGraph


def leftovers(graph: TopologyGraph) -> list[str]:
    """Bridges or root-namespace interfaces of graph that still exist."""
    names = {s.name for s in graph.switches}
    found = sorted(names & ovs.existing_bridges())
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    found += [ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines()
              if ln.split(":")[1].strip().split("-eth")[0] in names]
    return found


def free_port() -> int:
    """A TCP port nothing listens on right now (for a controller under test)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
