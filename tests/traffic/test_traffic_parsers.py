"""Parsers of D-ITG, iperf3 and ping against outputs recorded between two namespaces (no root)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from sdnbench.errors import ToolError
from sdnbench.workloads.traffic import ditg, iperf3, ping, registry
from sdnbench.workloads.traffic.base import METRICS, FlowSpec
from sdnbench.workloads.traffic.runner import (_ports_in_ss, deadline_s, loss_metrics, mean_abs_diff,
                                               rate_shortfall, raw_text, spread_stats)

DATA = Path(__file__).parent / "data"


def text(name: str) -> str:
    return (DATA / name).read_text()


def summary_value(name: str, label: str) -> float:
    """A number from ITGDec's human summary (used here only to cross-check our own arithmetic)."""
    m = re.search(rf"{label}\s*=\s*([\d.]+)", text(name))
    assert m, label
    return float(m[1])


def assert_known_metrics(metrics: dict) -> None:
    unknown = set(metrics) - set(METRICS)
    assert not unknown, f"metric names outside METRICS: {unknown}"


# --- D-ITG -----------------------------------------------------------------

def ditg_metrics(stem: str, meter: str = "owd", count: int | None = None) -> dict:
    recv = ditg.parse_packets(text(f"{stem}.recv.txt"))
    send = ditg.parse_packets(text(f"{stem}.send.txt"))
    return ditg.metrics_from_logs(recv, send, meter, count)


def test_ditg_owdm_counts_and_agrees_with_itgdec_summary():
    m = ditg_metrics("ditg_udp_owdm")
    assert_known_metrics(m)
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"], m["loss_pct"]) == (200, 200, 0, 0.0)
    assert m["bytes"] == 20000
    summary = "ditg_udp_owdm.recv.summary.txt"
    # ITGDec prints seconds with 6 decimals: agree to the microsecond.
    for key, label in [("owd_min_ms", "Minimum delay"), ("owd_max_ms", "Maximum delay"),
                       ("owd_mean_ms", "Average delay"), ("jitter_ms", "Average jitter"),
                       ("owd_sd_ms", "Delay standard deviation")]:
        assert m[key] == pytest.approx(summary_value(summary, label) * 1000, abs=0.0011), key
    assert m["throughput_bps"] == pytest.approx(summary_value(summary, "Average bitrate") * 1000, rel=1e-5)
    assert m["throughput_pps"] == pytest.approx(summary_value(summary, "Average packet rate"), rel=1e-5)
    assert m["tx_rate_pps"] == pytest.approx(100, rel=0.05)


def test_ditg_loss_is_sent_minus_received():
    m = ditg_metrics("ditg_udp_loss")
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (300, 272, 28)
    assert m["loss_pct"] == pytest.approx(100 * 28 / 300)
    assert summary_value("ditg_udp_loss.recv.summary.txt", "Packets dropped") == 28
    series = ditg.parse_series(text("ditg_udp_loss.recv.series.txt"))
    assert sum(row["loss_pkts"] for row in series) == 28
    assert [row["t_s"] for row in series] == [0.0, 1.0]


def test_ditg_rttm_reports_round_trip_and_one_way():
    m = ditg_metrics("ditg_udp_rttm", meter="rtt", count=50)
    assert_known_metrics(m)
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (50, 50, 0)
    summary = "ditg_udp_rttm.send.summary.txt"
    assert m["rtt_mean_ms"] == pytest.approx(summary_value(summary, "Average delay") * 1000, abs=0.0011)
    assert m["rtt_max_ms"] == pytest.approx(summary_value(summary, "Maximum delay") * 1000, abs=0.0011)
    assert 0 < m["owd_mean_ms"] < m["rtt_mean_ms"]
    series = ditg.parse_series(text("ditg_udp_rttm.send.series.txt"), "rtt_mean_ms")
    assert series[0]["rtt_mean_ms"] == pytest.approx(0.106)
    assert series[0]["throughput_bps"] == pytest.approx(40000)


def test_ditg_rttm_round_trip_starts_at_the_packets_own_stamp():
    # Recorded under load: ITGSend logged two send times 5 ms after the stamp the packets carried.
    m = ditg_metrics("ditg_udp_rttm_stall", meter="rtt", count=300)
    assert (m["tx_pkts"], m["rx_pkts"]) == (300, 300)
    assert m["rtt_max_ms"] >= m["owd_max_ms"] > 8
    assert m["rtt_mean_ms"] > m["owd_mean_ms"]
    assert m["rtt_min_ms"] >= m["owd_min_ms"]


def test_ditg_rttm_without_count_uses_highest_sequence():
    m = ditg_metrics("ditg_udp_rttm", meter="rtt")
    assert m["tx_pkts"] == 50


def test_ditg_tcp_flow():
    m = ditg_metrics("ditg_tcp_owdm")
    assert m["tx_pkts"] == m["rx_pkts"] == 197
    assert m["bytes"] == 197 * 1000


def test_ditg_series_units():
    rows = ditg.parse_series(text("ditg_udp_owdm.recv.series.txt"))
    assert rows[0] == {"t_s": 0.0, "throughput_bps": pytest.approx(79200.0), "owd_mean_ms": pytest.approx(0.087),
                       "jitter_ms": pytest.approx(0.031), "loss_pkts": 0.0}
    assert len(rows) == 3


def test_ditg_log_across_midnight():
    lines = "1 23 59 59.999000 0 0 0.000500 100\n2 0 0 0.009000 0 0 0.009600 100\n"
    m = ditg.metrics_from_logs(ditg.parse_packets(lines), ditg.parse_packets(lines), "owd")
    assert m["owd_min_ms"] == pytest.approx(0.6)
    assert m["owd_max_ms"] == pytest.approx(1.5)
    assert m["throughput_pps"] == pytest.approx(2 / 0.0091)


def test_ditg_duplicates_are_not_counted_twice():
    lines = "1 1 0 0.0 1 0 0.001 10\n1 1 0 0.0 1 0 0.002 10\n2 1 0 0.01 1 0 0.011 10\n"
    send = "1 1 0 0.0 1 0 0.0 10\n2 1 0 0.01 1 0 0.01 10\n3 1 0 0.02 1 0 0.02 10\n"
    m = ditg.metrics_from_logs(ditg.parse_packets(lines), ditg.parse_packets(send), "owd")
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (3, 2, 1)


def test_ditg_rejects_unreadable_lines():
    with pytest.raises(ToolError, match="8"):
        ditg.parse_packets("Flow>0001 Seq> 1 Src> ...\n")


def test_ditg_sender_argv():
    base = dict(send_log=Path("/w/f.send.log"), recv_log=Path("/w/f.recv.log"))
    argv = ditg.sender_argv(FlowSpec("f", "h1", "h2", "udp", size_bytes=64, rate_pps=500, count=1000),
                            "10.0.0.2", 9000, 9001, **base)
    joined = " ".join(argv)
    for part in ("-a 10.0.0.2", "-Sdp 9000", "-rp 9001", "-T UDP", "-c 64", "-C 500", "-z 1000",
                 "-m owdm", "-l /w/f.send.log", "-x /w/f.recv.log"):
        assert part in joined
    argv = ditg.sender_argv(FlowSpec("f", "h1", "h2", "tcp", size_bytes=1000, rate_bps=8e6, duration_s=2.5,
                                     meter="rtt"), "10.0.0.2", 9000, 9001, **base)
    joined = " ".join(argv)
    assert "-T TCP" in joined and "-C 1000" in joined and "-t 2500" in joined and "-m rttm" in joined
    with pytest.raises(ToolError, match="count, duration_s or volume_bytes"):
        ditg.sender_argv(FlowSpec("f", "h1", "h2", "udp"), "10.0.0.2", 9000, 9001, **base)


@pytest.mark.skipif(shutil.which("ITGDec") is None, reason="ITGDec not installed (apt-get install d-itg)")
def test_itgdec_decodes_recorded_binary_log(tmp_path):
    log = tmp_path / "f.recv.log"
    shutil.copy(DATA / "ditg_udp_owdm.recv.log", log)
    ditg.decode(log, tmp_path / "f.recv.txt", tmp_path / "f.recv.series.txt")
    assert ditg.parse_packets((tmp_path / "f.recv.txt").read_text()) == \
        ditg.parse_packets(text("ditg_udp_owdm.recv.txt"))
    assert len(ditg.parse_series((tmp_path / "f.recv.series.txt").read_text())) == 3


@pytest.mark.skipif(shutil.which("ITGDec") is None, reason="ITGDec not installed (apt-get install d-itg)")
def test_itgdec_failure_is_a_tool_error(tmp_path):
    log = tmp_path / "missing.log"
    with pytest.raises(ToolError, match="ITGDec"):
        ditg.decode(log, tmp_path / "out.txt")


# --- iperf3 ----------------------------------------------------------------

def report(name: str) -> dict:
    return iperf3.load_report(text(name), "f", "client")


def test_iperf3_tcp_by_time():
    client, server = report("iperf3_tcp_time.client.json"), report("iperf3_tcp_time.server.json")
    m = iperf3.tcp_metrics(client, server)
    assert_known_metrics(m)
    assert m["throughput_bps"] == pytest.approx(3696070914.880747)
    assert m["retransmits"] == 16
    assert m["bytes"] == 924188672
    assert m["tcp_connect_ms"] is None
    rows = iperf3.interval_series(server, udp=False)
    assert len(rows) == 2 and rows[0]["t_s"] == 0.0
    iperf3._merge_retransmits(rows, iperf3.interval_series(client, udp=False))
    assert rows[0]["retransmits"] == 9


def test_iperf3_tcp_by_volume_has_transfer_time():
    m = iperf3.tcp_metrics(report("iperf3_tcp_bytes.client.json"), by_volume=True)
    assert m["transfer_time_s"] == pytest.approx(0.036245)
    assert m["bytes"] == 20971520


def test_iperf3_udp_reverse_counts_every_datagram():
    m = iperf3.udp_metrics(report("iperf3_udp_count_reverse.client.json"))
    assert_known_metrics(m)
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"], m["loss_pct"]) == (300, 300, 0, 0.0)
    assert m["jitter_ms"] >= 0


def test_iperf3_udp_forward_misses_the_last_datagram():
    # The recorded forward run: 1000 sent, the server stopped reading at 999 (esnet/iperf#252).
    m = iperf3.udp_metrics(report("iperf3_udp_count_forward.client.json"))
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (1000, 999, 1)


def test_iperf3_udp_loss_and_series():
    rep = report("iperf3_udp_loss_reverse.client.json")
    m = iperf3.udp_metrics(rep)
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"], m["loss_pct"]) == (1000, 950, 50, 5.0)
    rows = iperf3.interval_series(rep, udp=True)
    assert [row["loss_pkts"] for row in rows] == [25.0, 25.0]
    assert [row["rx_pkts"] for row in rows] == [475.0, 475.0]


def test_iperf3_error_report_is_a_tool_error():
    with pytest.raises(ToolError, match="unable to read from stream socket"):
        report("iperf3_udp_error.client.json")
    with pytest.raises(ToolError, match="not JSON"):
        iperf3.load_report("iperf3: error - unable to connect", "f", "client")


def test_iperf3_client_argv():
    udp = iperf3.client_argv(FlowSpec("f", "h1", "h2", "udp", size_bytes=200, rate_pps=500, count=1000),
                             "10.0.0.1", 5201, reverse=True)
    joined = " ".join(udp)
    for part in ("-c 10.0.0.1", "-p 5201", "-J", "-R", "-u", "-l 200", "-b 800000", "-k 1000"):
        assert part in joined
    assert "-t" not in udp
    tcp = iperf3.client_argv(FlowSpec("f", "h1", "h2", "tcp", duration_s=2.5), "10.0.0.2", 5201, reverse=False)
    assert "-t" in tcp and tcp[tcp.index("-t") + 1] == "3" and "-R" not in tcp and "-u" not in tcp
    vol = iperf3.client_argv(FlowSpec("f", "h1", "h2", "tcp", volume_bytes=10**6), "10.0.0.2", 5201, False)
    assert vol[vol.index("-n") + 1] == "1000000" and "-t" not in vol
    with pytest.raises(ToolError, match="rate_bps"):
        iperf3.client_argv(FlowSpec("f", "h1", "h2", "udp", count=10), "10.0.0.1", 5201, True)
    with pytest.raises(ToolError, match="count, volume_bytes or duration_s"):
        iperf3.client_argv(FlowSpec("f", "h1", "h2", "tcp"), "10.0.0.1", 5201, False)


# --- ping ------------------------------------------------------------------

def test_ping_loss_and_rtt_agree_with_pings_own_summary():
    out = text("ping_loss.txt")
    m = ping.ping_metrics(out, requested=20)
    assert_known_metrics(m)
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"], m["loss_pct"]) == (20, 16, 4, 20.0)
    mn, avg, mx, mdev = (float(x) for x in re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", out).groups())
    assert m["rtt_min_ms"] == mn and m["rtt_max_ms"] == mx
    # ping prints its summary truncated to whole microseconds.
    assert avg <= m["rtt_mean_ms"] < avg + 0.001
    assert mdev <= m["rtt_sd_ms"] < mdev + 0.001
    # Recorded with -i 0.05: 20 requests per second asked.
    assert m["tx_rate_pps"] == pytest.approx(20, rel=0.2)
    rtts = [r.rtt_ms for r in ping.parse_replies(out)]
    assert m["jitter_ms"] == pytest.approx(sum(abs(b - a) for a, b in zip(rtts, rtts[1:])) / 15)


def test_ping_series_and_fast_run():
    out = text("ping_fast.txt")
    m = ping.ping_metrics(out)
    assert (m["tx_pkts"], m["rx_pkts"]) == (10, 8)
    rows = ping.ping_series(out)
    assert sum(row["rx_pkts"] for row in rows) == 8 and rows[0]["t_s"] == 0.0


def test_ping_duplicates_and_missing_statistics():
    out = ("[1.000000] 64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.100 ms\n"
           "[1.000100] 64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.200 ms (DUP!)\n"
           "[2.000000] 64 bytes from 10.0.0.2: icmp_seq=2 ttl=64 time=0.300 ms\n")
    m = ping.ping_metrics(out, requested=3)
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (3, 2, 1)
    assert m["rtt_mean_ms"] == pytest.approx(0.2) and m["jitter_ms"] == pytest.approx(0.2)
    assert ping.ping_metrics(out)["loss_pkts"] is None


def test_ping_argv():
    argv = ping.ping_argv(FlowSpec("f", "h1", "h2", "icmp", size_bytes=100, rate_pps=50, duration_s=2), "10.0.0.2")
    joined = " ".join(argv)
    assert "-D" in argv and "-c 100" in joined and "-i 0.020000" in joined and "-s 100" in joined
    assert argv[-1] == "10.0.0.2"
    with pytest.raises(ToolError):
        ping.ping_argv(FlowSpec("f", "h1", "h2", "icmp"), "10.0.0.2")


# --- shared plumbing and registry ------------------------------------------

def test_shared_helpers():
    assert loss_metrics(None, 5)["loss_pkts"] is None
    assert loss_metrics(10, 12)["loss_pkts"] == 0
    assert spread_stats([], "rtt")["rtt_mean_ms"] is None
    s = spread_stats([1.0, 3.0], "owd")
    assert (s["owd_mean_ms"], s["owd_min_ms"], s["owd_max_ms"], s["owd_sd_ms"]) == (2.0, 1.0, 3.0, 1.0)
    assert mean_abs_diff([1.0]) is None and mean_abs_diff([1.0, 3.0, 2.0]) == 1.5
    ss = ("LISTEN 0      4096         0.0.0.0:9100      0.0.0.0:*\n"
          "UNCONN 0      0                  *:5201            *:*\n"
          "tcp   ESTAB 0 0 [::1]:44000 [::1]:22\n")
    assert _ports_in_ss(ss) == {9100, 5201, 44000}


def test_registry():
    names = registry.engine_names()
    assert {"ditg", "iperf3", "ping"} <= set(names)
    assert registry.engine_class("ping") is ping.PingEngine
    assert registry.engine_class("ditg").protocols == ("udp", "tcp")
    assert isinstance(registry.make_engine("iperf3"), iperf3.Iperf3Engine)
    with pytest.raises(ToolError, match="unknown traffic engine"):
        registry.engine_class("netperf")
    if "native" in names:
        assert registry.engine_class("native").name == "native"
    else:
        with pytest.raises(ToolError, match="not part of this installation"):
            registry.engine_class("native")


def test_engines_declare_availability_with_apt_fix():
    for name in ("ditg", "iperf3", "ping"):
        avail = registry.engine_class(name).availability()
        assert avail.ok or (avail.fix or "").startswith("apt-get install")


def test_unknown_protocol_is_refused(tmp_path):
    with pytest.raises(ToolError, match="protocol"):
        ping.PingEngine().run([FlowSpec("f", "h1", "h2", "udp", count=1)], {}, tmp_path)
    with pytest.raises(ToolError, match="unique"):
        ping.PingEngine().run([FlowSpec("f", "h1", "h2", "icmp", count=1)] * 2, {}, tmp_path)


def test_recorded_json_is_what_iperf3_writes():
    # Guard against an edited fixture: every recorded report parses and names iperf3.
    for path in DATA.glob("iperf3_*.json"):
        assert json.loads(path.read_text())["start"]["version"].startswith("iperf 3")


def test_missing_host_names_the_flow(tmp_path):
    with pytest.raises(ToolError, match="'f1'.*'h9'"):
        ping.PingEngine().run([FlowSpec("f1", "h9", "h2", "icmp", count=1)], {}, tmp_path)


def test_version_strings():
    for name, word in (("ditg", "version"), ("iperf3", "iperf"), ("ping", "iputils")):
        engine = registry.make_engine(name)
        if engine.availability().ok:
            assert word in engine.version()
        else:
            assert engine.version() == "not installed"


def test_raw_text_keeps_large_outputs_on_disk(tmp_path):
    small, big = tmp_path / "small.txt", tmp_path / "big.txt"
    small.write_text("abc")
    big.write_text("x" * 5000)
    assert raw_text(small) == "abc"
    kept = raw_text(big, limit=1000)
    assert kept.startswith("x" * 1000) and str(big) in kept and "5000" in kept
    assert raw_text(tmp_path / "absent") == ""


def test_deadlines_follow_the_flow():
    assert deadline_s(FlowSpec("f", "a", "b", "udp", count=1000, rate_pps=100)) == pytest.approx(10 * 1.5 + 15)
    assert deadline_s(FlowSpec("f", "a", "b", "tcp", duration_s=4)) == pytest.approx(4 * 1.5 + 15)
    assert deadline_s(FlowSpec("f", "a", "b", "tcp", duration_s=4, options={"timeout_s": 2})) == 2


def test_rate_shortfall_is_noted():
    flow = FlowSpec("f", "a", "b", "udp", size_bytes=64, rate_pps=10000, count=1000)
    [note] = rate_shortfall("ditg", flow, 6450.0)
    assert "6450" in note and "64%" in note and "10000" in note
    assert rate_shortfall("ditg", flow, 9500.0) == []
    assert rate_shortfall("ditg", flow, None) == []
    assert rate_shortfall("iperf3", FlowSpec("f", "a", "b", "tcp", duration_s=1), 5.0) == []
