"""Flow programming against a real OpenDaylight: RESTCONF flow writes timed until sdnbench-ofload's emulated
switches read the FLOW_MODs, through the flowprog workload. No emulated network is built.

One OpenDaylight boots for the module (45-100 s here; one per machine: its fixed ports); skips when it is not
built (scripts/install-controllers.sh odl, which `make setup` runs).
"""

from __future__ import annotations

import os

import pytest

from sdnbench.controllers import ADAPTERS
from sdnbench.controllers.base import ControllerSpec
from sdnbench.controllers.odl_base import FIXED_PORTS
from sdnbench.controllers.process import port_listening
from sdnbench.forwarding.odl import PREFIX, flow_ids, table_path
from sdnbench.runner.plan import Trial
from sdnbench.workloads.base import TrialContext
from sdnbench.workloads.types.flowprog import WORKLOAD as FLOWPROG

from .conftest import free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def odl(tmp_path_factory):
    """A managed OpenDaylight; afterwards its process and every port it opened must be gone."""
    avail = ADAPTERS["odl"].availability()
    if not avail.ok:
        pytest.skip(f"odl: {avail.detail} (fix: {avail.fix})")
    spec = ControllerSpec(kind="odl", label="odl", port=free_port(), rest_port=free_port())
    adapter = ADAPTERS["odl"](spec)
    adapter.start(tmp_path_factory.mktemp("odl"))
    [pid] = adapter.pids()
    try:
        yield adapter
    finally:
        adapter.stop()
    assert not os.path.exists(f"/proc/{pid}"), f"OpenDaylight PID {pid} survived stop()"
    for port in (spec.port, spec.rest_port, *FIXED_PORTS):
        assert not port_listening("127.0.0.1", port), f"port {port} still listens after stop()"


def flowprog(adapter, tmp_path, **workload):
    wl = {"name": "flows", "type": "flowprog", "switches": 4, "flows_per_switch": 25, "concurrency": 4, "batch": 1,
          "wait_s": 30, **workload}
    return FLOWPROG.run(Trial(0, adapter.spec, None, "-", None, wl, {}, 0), TrialContext(None, adapter, tmp_path))


def config_flows(adapter, dpid: int) -> set[str]:
    reply = adapter.client().get(table_path(dpid) + "?content=config")
    return {i for i in flow_ids(reply.json()) if i.startswith(PREFIX)} if reply.ok else set()


@pytest.mark.parametrize("batch", [1, 25])
def test_every_restconf_flow_write_reaches_its_switch(odl, tmp_path, batch):
    [result], env = flowprog(odl, tmp_path, batch=batch)
    m = result.metrics
    assert result.errors == [], result.errors
    assert (m["flows_written"], m["flows_acknowledged"], m["flows_seen"], m["flows_unseen"], m["rest_errors"]) == \
        (100, 100, 100, 0, 0)
    assert m["switches_connected"] == 4 and m["flow_mods_duplicate"] == 0
    assert 0 < m["flow_programming_p50_ms"] <= m["flow_programming_p99_ms"] < 30_000
    assert m["flow_programming_per_s"] > 0 and m["rest_ack_per_s"] > 0
    assert env["flow_api"] == "opendaylight-restconf" and env["inventory_s"] >= 0
    # Removed from the config datastore afterwards, so the next trial's switches are not sent them.
    assert "cleanup_error" not in env and all(not config_flows(odl, d) for d in range(1, 5))
