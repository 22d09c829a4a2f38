"""Topology-aware mode and --paths against a real topology-aware controller:
os-ken with sdnbench's shortest_path app (os-ken's LLDP discovery + fewest-hop flows)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from sdnbench.controllers import ADAPTERS, ControllerSpec, make_adapter
from sdnbench.topology.graph import LinkParams
from sdnbench.topology import grid
from sdnbench.workloads import sbi

from .conftest import free_port, run_ofload

LINK_LINE = re.compile(r"^(\S+ \S+) INFO sdnbench.l2_shortest_path: link (up|down) .*graph: (\d+) links")
CONNECTED = re.compile(r"^(\S+ \S+) INFO sdnbench.l2_shortest_path: switch \S+ connected")


def discovery(log: Path) -> tuple[int, float | None]:
    """Links in the app's graph after the last change, and seconds from the first switch
    connecting to that change (None when no link was found)."""
    links, first, last = 0, None, None
    for line in log.read_text().splitlines():
        if (m := CONNECTED.match(line)) and first is None:
            first = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f")
        elif m := LINK_LINE.match(line):
            links, last = int(m[3]), datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f")
    return links, (last - first).total_seconds() if first and last else None


@pytest.fixture
def shortest_path(request, tracker, tmp_path):
    """os-ken shortest_path started by its sdnbench adapter; yields (port, log path)."""
    avail = ADAPTERS["osken"].availability()
    if not avail.ok:
        pytest.skip(f"osken: {avail.detail} (fix: {avail.fix})")
    spec = ControllerSpec(kind="osken", label="osken-sp", openflow=request.param, app="shortest_path",
                          port=free_port())
    adapter = make_adapter(spec, tracker)
    adapter.start(tmp_path)
    try:
        yield spec.port, adapter.log_path
    finally:
        adapter.stop()


@pytest.mark.parametrize("shortest_path,rows,columns", [("1.0", 1, 4), ("1.3", 3, 3)],
                         ids=["of10-line4", "of13-grid3x3"], indirect=["shortest_path"])
def test_osken_discovers_the_graph_and_sets_up_paths(ofload_bin, shortest_path, rows, columns, tmp_path):
    port, log = shortest_path
    links = sbi.topology_links(grid.build(rows, columns, 0, None, LinkParams(), LinkParams()))
    topo = tmp_path / "topology.json"
    topo.write_text(json.dumps(links))
    version = "1.0" if rows == 1 else "1.3"
    p = run_ofload(ofload_bin, port, "-V", version, "-s", str(rows * columns), "-M", "100", "-l", "4",
                   "-m", "1000", "-w", "1", "--topology", str(topo), "--paths")
    assert p.returncode == 0, p.stdout + p.stderr
    s = json.loads(p.stdout.splitlines()[-1])["data"]
    assert s["valid"], s["invalid_reasons"]
    every = s["totals_all_phases"]
    assert every["lldp_packet_outs"] > 0 and every["lldp_relayed"] > 0, every
    found, seconds = discovery(log)
    assert found == len(links["links"]) == s["topology_links"], log.read_text()[-2000:]
    assert seconds is not None and seconds < 5
    paths = s["paths"]
    assert paths["completed"] > 0 and paths["transit_flow_mods"] > 0, paths
    assert paths["setup_us"]["count"] > 0 and paths["setup_us"]["p99"] >= paths["setup_us"]["p50"] > 0
    assert s["totals"]["unmatched"] == 0 and s["totals"]["matched"] > 0, s["totals"]
