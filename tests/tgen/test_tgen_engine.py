"""The native TrafficEngine: command lines and parsing (unit), and real runs in namespaces (netns)."""

from __future__ import annotations

import json

import pytest

from sdnbench.errors import ConfigError
from sdnbench.workloads.traffic.base import METRICS, FlowSpec
from sdnbench.workloads.traffic.native import NativeEngine, flow_result, receiver_argv, sender_argv


def _line(kind: str, **data) -> str:
    return json.dumps({"type": kind, "schema": 1, "data": data})


def test_sender_argv_names_units():
    f = FlowSpec("f1", "h1", "h2", "udp", size_bytes=1024, rate_pps=50000, duration_s=2.5,
                 options={"pattern": "poisson"})
    argv = sender_argv("tgen", f, "10.0.0.2", 5201)
    assert argv[:6] == ["tgen", "send", "--proto", "udp", "--to", "10.0.0.2:5201"]
    for pair in (["--payload", "1024B"], ["--rate", "50000pps"], ["--duration", "2.5s"], ["--pattern", "poisson"]):
        i = argv.index(pair[0])
        assert argv[i:i + 2] == pair
    tcp = sender_argv("tgen", FlowSpec("t", "h1", "h2", "tcp", volume_bytes=10**9), "10.0.0.2", 1)
    assert tcp[tcp.index("--size") + 1] == "1000000000B"
    icmp = sender_argv("tgen", FlowSpec("p", "h1", "h2", "icmp", count=10, rate_pps=10), "10.0.0.2", 1)
    assert "--echo" in icmp and "--duration" not in icmp


def test_video_options_split_between_sender_and_receiver():
    f = FlowSpec("v", "h1", "h2", "udp", duration_s=5,
                 options={"video_bitrate": "4Mbps", "fps": 30, "playout_buffer": "500ms", "gso": True})
    tx, rx = sender_argv("tgen", f, "10.0.0.2", 1), receiver_argv("tgen", f, "10.0.0.2", 1, 20)
    assert tx[tx.index("--video-bitrate") + 1] == "4Mbps" and tx[tx.index("--fps") + 1] == "30"
    assert "--gso" in tx and "--playout-buffer" not in tx
    assert rx[rx.index("--playout-buffer") + 1] == "500ms"


def test_unknown_option_is_refused_by_name():
    with pytest.raises(ConfigError, match="burst"):
        sender_argv("tgen", FlowSpec("f", "h1", "h2", "udp", count=1, options={"burst": 3}), "1.2.3.4", 1)


def test_flow_result_maps_summaries_to_common_metrics():
    f = FlowSpec("f1", "h1", "h2", "udp", count=100, rate_pps=1000)
    sender = _line("summary", role="sender", proto="udp", tx_pkts=100, tx_rate_pps=999.5)
    receiver = "\n".join([
        _line("interval", role="receiver", flow_id=0, src="a", t_s=0.1, interval_s=0.1, rx_pkts=60, rx_pps=600.0,
              rx_payload_bps=3e5, rx_l2_bps=5e5, owd_mean_ms=0.02, owd_min_ms=0.01, owd_max_ms=0.03,
              jitter_ms=0.001, gap_pkts=0),
        _line("summary", role="receiver", proto="udp", rx_pkts=97, loss_pkts=3, expected_pkts=100, loss_pct=3.0,
              owd_mean_ms=0.02, owd_min_ms=0.01, owd_max_ms=0.5, owd_sd_ms=0.004, jitter_ms=0.002,
              rx_payload_bps=49664.0, rx_pps=970.0, rx_payload_bytes=6208, owd_valid=True, same_kernel=True),
        _line("summary", role="receiver-total", invalid_pkts=0),
    ])
    r = flow_result(f, sender, receiver, 0)
    assert r.errors == []
    assert set(r.metrics) <= set(METRICS)
    assert (r.metrics["tx_pkts"], r.metrics["rx_pkts"], r.metrics["loss_pkts"]) == (100, 97, 3)
    assert r.metrics["loss_pct"] == pytest.approx(3.0)
    assert r.metrics["owd_max_ms"] == 0.5 and r.metrics["throughput_pps"] == 970.0
    assert r.series == [{"t_s": 0.1, "throughput_bps": 3e5, "throughput_pps": 600.0, "owd_mean_ms": 0.02,
                         "jitter_ms": 0.001}]
    assert "single-kernel" in r.clock


def test_flow_result_reports_missing_summaries_and_garbage():
    f = FlowSpec("f1", "h1", "h2", "udp", count=1)
    r = flow_result(f, _line("error", message="bind: denied"), "", 2)
    assert "bind: denied" in r.errors and any("no summary" in e for e in r.errors)
    r = flow_result(f, "not json", "", 2)
    assert any("not JSON" in e for e in r.errors)


@pytest.mark.netns
def test_engine_runs_udp_rtt_and_tcp_flows_together(ns_pair, tmp_path):
    engine = NativeEngine()
    assert engine.availability().ok and engine.version().startswith("sdnbench-tgen")
    hosts = {"h1": ns_pair.a, "h2": ns_pair.b}
    flows = [
        FlowSpec("udp", "h1", "h2", "udp", size_bytes=128, rate_pps=5000, count=2000),
        FlowSpec("ping", "h2", "h1", "icmp", rate_pps=200, count=100),
        FlowSpec("bulk", "h1", "h2", "tcp", volume_bytes=5_000_000),
    ]
    res = {r.flow_id: r for r in engine.run(flows, hosts, tmp_path)}
    for r in res.values():
        assert r.engine == "native" and r.errors == [], (r.flow_id, r.errors)
    u = res["udp"].metrics
    assert (u["tx_pkts"], u["rx_pkts"], u["loss_pkts"], u["loss_pct"]) == (2000, 2000, 0, 0.0)
    assert 0 < u["owd_min_ms"] <= u["owd_mean_ms"] <= u["owd_max_ms"] and u["bytes"] == 2000 * 128
    assert res["udp"].series and all("throughput_pps" in s for s in res["udp"].series)
    p = res["ping"].metrics
    assert (p["rx_pkts"], p["loss_pkts"]) == (100, 0) and p["rtt_min_ms"] > 0
    b = res["bulk"].metrics
    assert b["bytes"] == 5_000_000 and b["tcp_connect_ms"] > 0 and b["transfer_time_s"] > 0
    assert (tmp_path / "udp.recv.jsonl").exists()
