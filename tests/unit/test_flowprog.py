"""Flow programming without a controller: benchmark flows, requests, pairing writes with FLOW_MODs, metrics,
and the refusal for controllers without a REST flow API."""

from __future__ import annotations

import pytest

from sdnbench.controllers import ControllerSpec, make_adapter
from sdnbench.metrics import catalog
from sdnbench.runner.plan import Trial
from sdnbench.workloads.base import TrialContext
from sdnbench.workloads.flowmods import FlowModSeen, listen_argv
from sdnbench.workloads.flowprog import (METRICS, Write, bench_rules, cookie, eth_dst, flow_metrics, pair, problems,
                                         requests, seen_series)
from sdnbench.workloads.types import WORKLOAD_TYPES
from sdnbench.workloads.types.flowprog import WORKLOAD as FLOWPROG

MS = 1_000_000


def test_every_flow_of_a_switch_has_its_own_cookie_and_destination():
    rules = bench_rules([1, 2, 3], 50, nonce=0xBEEF)
    assert len(rules) == 150
    assert [r.dpid for r in rules[:4]] == [1, 2, 3, 1], "flow k of every switch before flow k+1"
    for dpid in (1, 2, 3):
        mine = [r for r in rules if r.dpid == dpid]
        assert len({r.cookie for r in mine}) == len({r.eth_dst for r in mine}) == len({r.name for r in mine}) == 50
    assert cookie(0xBEEF, 7) == 0x5DB1_BEEF_0000_0007
    assert eth_dst(0x01020304) == "02:fb:01:02:03:04"


def test_requests_are_single_flows_or_batches_of_one_switch():
    rules = bench_rules([1, 2], 5, nonce=1)
    assert requests(rules, 1) == [(r.dpid, [r]) for r in rules]
    batches = requests(rules, 2)
    assert [(d, len(rs)) for d, rs in batches] == [(1, 2), (2, 2), (1, 2), (2, 2), (1, 1), (2, 1)]
    assert all(r.dpid == d for d, rs in batches for r in rs)
    assert sorted(r.name for _, rs in batches for r in rs) == sorted(r.name for r in rules)


def seen(rule, t_ns, command=0, dpid=None, by_mac_only=False):
    return FlowModSeen(dpid or rule.dpid, t_ns, 0xAB if by_mac_only else rule.cookie, command, eth_dst=rule.eth_dst)


def test_flow_mods_pair_by_cookie_then_by_destination():
    a, b, c, d = bench_rules([1, 2], 2, nonce=9)       # a: dpid 1 k0, b: dpid 2 k0, c: dpid 1 k1, d: dpid 2 k1
    writes = [Write(1, [a], 100 * MS, 110 * MS), Write(2, [b], 100 * MS, 120 * MS),
              Write(1, [c], 200 * MS, 210 * MS), Write(2, [d], 200 * MS, 205 * MS, error="HTTP 500")]
    fms = [seen(a, 130 * MS), seen(b, 150 * MS, by_mac_only=True),   # ONOS-style: its own cookie
           seen(a, 140 * MS, command=1),                             # a second install of a: duplicate
           seen(c, 190 * MS),                                        # before c was written: an earlier run's
           seen(c, 250 * MS, command=3),                             # a DELETE is never an install
           seen(a, 160 * MS, dpid=3),                                # a's cookie on a switch never written
           FlowModSeen(1, 170 * MS, 0x1234, 0)]                      # nobody's
    p = pair(writes, fms)
    assert p.programming_ns == {(1, a.name): 30 * MS, (2, b.name): 50 * MS}
    assert (p.duplicates, p.unpaired) == (1, 3)
    m = flow_metrics(writes, p, switches_connected=2)
    assert (m["flows_written"], m["flows_acknowledged"], m["flows_seen"], m["flows_unseen"], m["rest_errors"]) == \
        (4, 3, 2, 1, 1)
    assert m["flow_programming_p50_ms"] == pytest.approx(40) and m["flow_programming_max_ms"] == pytest.approx(50)
    assert m["flow_programming_per_s"] == pytest.approx(2 / 0.05)      # first write at 100 ms, last FLOW_MOD at 150
    assert m["rest_ack_per_s"] == pytest.approx(3 / 0.11)
    assert set(m) <= set(METRICS)
    said = problems(m, writes, wait_s=5)
    assert said[0].startswith("1 of 4 flow writes failed; first: HTTP 500")
    assert said[1] == "1 of 3 acknowledged flows never reached their switch within 5 s of the last write"


def test_flows_seen_per_second_from_the_first_write():
    rules = bench_rules([1], 4, nonce=3)
    writes = [Write(1, [r], 1000 * MS, 1001 * MS) for r in rules]
    p = pair(writes, [seen(r, t * MS) for r, t in zip(rules, (1100, 1900, 2200, 3500))])
    assert seen_series(writes, p) == [{"t_s": 1.0, "flow_programming_per_s": 2.0},
                                      {"t_s": 2.0, "flow_programming_per_s": 1.0},
                                      {"t_s": 3.0, "flow_programming_per_s": 1.0}]
    assert seen_series(writes, pair(writes, [])) == []


def test_nothing_seen_is_no_rate_and_no_latency_not_zero():
    [a] = bench_rules([1], 1, nonce=1)
    m = flow_metrics([Write(1, [a], 0, MS)], pair([Write(1, [a], 0, MS)], []), switches_connected=1)
    for name in ("flow_programming_per_s", "flow_programming_p50_ms", "flow_programming_p99_ms"):
        assert m[name] is None
    assert m["flows_unseen"] == 1


def test_a_cookie_beyond_2_53_is_read_exactly_from_its_hex_form():
    data = {"switch": 0, "dpid": 1, "t_ns": 5, "cookie": 6751351563584389121, "cookie_hex": "0x5db19e7a1539c001",
            "table_id": 0, "command": 0, "priority": 200, "eth_dst": "02:fb:00:00:00:01"}
    assert FlowModSeen.from_record(data).cookie == 0x5DB19E7A1539C001


def test_listen_command_line_ends_with_stdin():
    argv = listen_argv("ofload", "127.0.0.1", 6653, "1.3", 4, 90)
    assert argv[argv.index("-s") + 1] == "4" and "--until-eof" in argv
    assert argv[argv.index("--listen-for") + 1] == "90s"


def test_the_workload_type_is_registered_and_its_metrics_catalogued():
    assert WORKLOAD_TYPES["flowprog"] is FLOWPROG
    assert all(catalog()[name] == m for name, m in METRICS.items())
    assert not FLOWPROG.needs_network({})


WORKLOAD = {"name": "flows", "type": "flowprog", "switches": 2, "flows_per_switch": 3, "concurrency": 2, "batch": 1,
            "wait_s": 1}


@pytest.mark.parametrize("kind", ["ryu", "osken", "faucet"])
def test_controllers_without_a_rest_flow_api_are_not_applicable(kind, tmp_path):
    spec = ControllerSpec(kind=kind, label=kind)
    trial = Trial(0, spec, None, "-", None, WORKLOAD, {}, 0)
    results, env = FLOWPROG.run(trial, TrialContext(None, make_adapter(spec), tmp_path))
    [result] = results
    assert result.metrics == {} and result.errors[0].startswith(f"not applicable: {kind} has no REST flow API")
    assert FLOWPROG.headline(results) == result.errors[0] == env["flow_programming"]


def test_who_has_a_flow_programmer():
    assert make_adapter(ControllerSpec(kind="odl", label="odl")).flow_programmer().api == "opendaylight-restconf"
    remote = ControllerSpec(kind="remote", label="onos", rest_url="http://127.0.0.1:1",
                            options={"flow_api": "onos", "rest_auth": "onos:rocks"})
    assert make_adapter(remote).flow_programmer().api == "onos-rest"
    assert make_adapter(ControllerSpec(kind="remote", label="r", rest_url="http://x")).flow_programmer() is None
