"""sdnbench-ofload against a real Faucet (OpenFlow 1.3) with the profile its adapter hands out."""

from __future__ import annotations

import pytest

from sdnbench.controllers import ADAPTERS, ControllerSpec, make_adapter
from sdnbench.workloads import sbi

from .conftest import free_port

SWITCHES = 4


@pytest.fixture
def faucet(tracker, tmp_path, ofload_bin):
    """Faucet configured for SWITCHES emulated switches (as the runner does for an sbi workload)."""
    if not ADAPTERS["faucet"].availability().ok:
        pytest.skip("faucet not installed (make controllers)")
    spec = ControllerSpec(kind="faucet", label="faucet", port=free_port(),
                          options={"datapaths": {1 + i: 4 for i in range(SWITCHES)}, "southbound": True})
    adapter = make_adapter(spec, tracker)
    adapter.start(tmp_path)
    yield adapter
    adapter.stop()


def learned(adapter, rundir) -> int:
    """Hosts Faucet says it learned, from its own log."""
    return adapter.paths(rundir)["log"].read_text().count("L2 learned")


def test_faucet_answers_pipeline_style_packet_ins_in_both_modes(faucet, tmp_path):
    profile = faucet.southbound_profile()
    matched = sent = 0
    for throughput in (True, False):
        opts = sbi.OfloadOptions(switches=SWITCHES, loops=3, ms_per_loop=1000, warmup_loops=1,
                                 throughput=throughput, threads=1)
        r = sbi.run_ofload("127.0.0.1", faucet.spec.port, "1.3", sbi.apply_profile(opts, profile))
        m, totals = r.metrics, r.summary["totals"]
        assert m["valid"], r.summary.get("invalid_reasons")
        assert m["switches_connected"] == SWITCHES
        assert m["matched_per_s_mean"] > 20, m
        assert m["unmatched"] == 0 and m["timeouts"] == 0 and m["decode_errors"] == 0, totals
        # Faucet installs two flows per learned host: eth_src (matched) and eth_dst (its duplicate).
        assert totals["responses"] == totals["matched"] + totals["duplicates"], totals
        assert totals["duplicates"] >= 0.9 * totals["matched"], totals
        assert 0 < m["latency_p50_us"] <= m["latency_p99_us"]
        everything = r.summary["totals_all_phases"]
        matched, sent = matched + everything["matched"], sent + everything["sent"] + SWITCHES
    # Every matched request is a host Faucet itself logged as learned; it learned no host that was not
    # sent (each run adds one destination host per switch). A run's last requests may still be in
    # Faucet's queue when it ends, so the count is taken over both runs.
    assert matched <= learned(faucet, tmp_path) - 2 * SWITCHES <= sent


def test_without_the_profile_faucet_answers_nothing(faucet):
    """cbench-style PACKET_INs (table miss, no cookie, untagged) are dropped by Faucet: the profile is what works."""
    opts = sbi.OfloadOptions(switches=SWITCHES, loops=2, ms_per_loop=500, throughput=False, threads=1)
    r = sbi.run_ofload("127.0.0.1", faucet.spec.port, "1.3", opts)
    assert r.summary["totals"]["matched"] == 0 and not r.metrics["valid"]
