"""sdnbench-apiload against a local server that fails on purpose: exact counts, right pattern."""

from __future__ import annotations

import json
import signal
import socket
import subprocess

import pytest
from apiload_server import BurstAfter, FaultyServer, every_nth, head_body_gap


def totals_match_intervals(run) -> None:
    """Per-second counts add up to the summary's totals."""
    s = run.summary
    for key in ("sent", "succeeded", "failed", "late", "dropped"):
        assert sum(i[key] for i in run.intervals) == s[key], key


def test_every_tenth_request_fails_partially(run_apiload):
    with FaultyServer(every_nth(10, 500)) as srv:
        run = run_apiload("--url", srv.url, "--rate", "100rps", "--duration", "3s", "--request", "GET /stats/switches")
    s = run.summary
    assert run.code == 0, run.stderr
    assert srv.served == 300 == s["sent"] == s["target"]
    assert s["failed"] == 30 == srv.failed
    assert s["succeeded"] == 270
    assert s["failed_by_reason"] == {"http_500": 30}
    assert s["error_rate"] == pytest.approx(0.1)
    fp = s["failure_pattern"]
    assert (fp["pattern"], fp["runs"], fp["longest_run"]) == ("partial", 30, 1)
    assert [i["target"] for i in run.intervals[:3]] == [100, 100, 100]
    totals_match_intervals(run)


@pytest.mark.slow
def test_fifty_consecutive_failures_at_second_five_are_continuous(run_apiload):
    with FaultyServer(BurstAfter(5.0, 50, 503)) as srv:
        # One request in flight at a time: arrival order is intended order, so the run cannot be split.
        run = run_apiload("--url", srv.url, "--rate", "100rps", "--duration", "7s", "--max-in-flight", "1")
    s = run.summary
    assert run.code == 0, run.stderr
    assert srv.served == 700 == s["sent"]
    assert s["failed"] == 50 == srv.failed
    assert s["failed_by_reason"] == {"http_503": 50}
    fp = s["failure_pattern"]
    assert fp["pattern"] == "continuous"
    assert (fp["runs"], fp["longest_run"]) == (1, 50)
    # The server counts seconds from the first arrival; intended times start at 0 too.
    assert 4.95 <= fp["longest_run_start_s"] <= 5.15
    assert fp["longest_run_span_s"] == pytest.approx(0.49, abs=1e-6)
    # The failures show up in the per-second series around second 5.
    failed_by_second = {i["t_s"]: i["failed"] for i in run.intervals if i["failed"]}
    assert set(failed_by_second) <= {4, 5, 6} and sum(failed_by_second.values()) == 50
    totals_match_intervals(run)


def test_a_rate_the_server_cannot_carry_is_not_a_pass(run_apiload):
    # 0.5 s per response and at most 10 in flight: about 20 responses/s, far below 100 rps.
    with FaultyServer(every_nth(10**9), delay_s=0.5) as srv:
        run = run_apiload("--url", srv.url, "--rate", "100rps", "--duration", "2s", "--max-in-flight", "10")
    s = run.summary
    assert run.code == 1
    assert s["passed"] is False
    assert s["achieved_ratio"] < 0.99 and s["achieved_rps"] < s["target_rps"]
    assert s["sent"] + s["unsent"] == s["target"] == 200
    assert s["unsent"] > 0 and s["late"] > 0
    check = next(t for t in s["thresholds"] if t["name"] == "min_achieved")
    assert check["passed"] is False and check["value"] == pytest.approx(s["achieved_ratio"])
    # Latency counts from the intended time, so waiting for the cap shows up as latency.
    assert s["latency_ms"]["max"] > 1000 > s["service_time_ms"]["max"]
    assert srv.served == s["sent"]


def test_drop_policy_counts_skipped_requests(run_apiload):
    with FaultyServer(every_nth(10**9), delay_s=0.5) as srv:
        run = run_apiload("--url", srv.url, "--rate", "50rps", "--duration", "2s", "--max-in-flight", "5",
                          "--overflow", "drop")
    s = run.summary
    assert run.code == 1
    assert s["dropped"] > 0 and s["unsent"] == 0
    assert s["sent"] + s["dropped"] == s["target"] == 100
    assert srv.served == s["sent"]


def test_refused_connections_are_counted_by_reason(run_apiload):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]   # bound, not listening: connections are refused
        run = run_apiload("--url", f"http://127.0.0.1:{port}", "--rate", "50rps", "--duration", "1s")
    s = run.summary
    assert s["failed_by_reason"] == {"refused": 50}
    assert s["succeeded"] == 0 and s["failure_pattern"]["pattern"] == "continuous"


def test_mid_response_pauses_are_reported_as_stalls(run_apiload):
    with FaultyServer(head_body_gap(0.06)) as srv:
        run = run_apiload("--url", srv.url, "--rate", "20rps", "--duration", "1s", "--stall-after", "30ms")
    c = run.summary["connections"]
    assert run.summary["succeeded"] == 20
    assert c["stalled_responses"] == 20
    assert 1 <= c["connections_with_stalls"] <= c["opened"]
    assert any("Nagle" in n for n in run.summary["notes"])


@pytest.mark.parametrize("url, extra", [
    ("http://10.0.0.1:8080", []),
    ("http://8.8.8.8:80", ["--allow-target", "10.0.0.0/8"]),
    ("http://8.8.8.8:80", ["--allow-target", "0.0.0.0/0"]),
    ("http://example.org/", []),
])
def test_targets_outside_loopback_are_refused(run_apiload, url, extra):
    run = run_apiload("--url", url, "--rate", "10rps", "--duration", "1s", *extra)
    assert run.code == 2
    assert [r["type"] for r in run.records] == ["error"]


def test_ramp_targets_follow_the_schedule(run_apiload):
    with FaultyServer(every_nth(10**9)) as srv:
        run = run_apiload("--url", srv.url, "--stage", "ramp:0rps:200rps:2s", "--stage", "const:200rps:1s")
    s = run.summary
    # N(t) = 50 t² over the ramp: 50 then 150 requests, then 200 in the hold.
    assert [i["target"] for i in run.intervals[:3]] == [50, 150, 200]
    assert s["target"] == s["sent"] == srv.served == 400
    assert s["failure_pattern"]["pattern"] == "none"


def test_connection_close_opens_one_connection_per_request(run_apiload):
    with FaultyServer(every_nth(10**9)) as srv:
        run = run_apiload("--url", srv.url, "--rate", "50rps", "--duration", "1s", "--no-keepalive")
    s = run.summary
    assert s["succeeded"] == 50 == srv.served
    assert s["connections"]["opened"] == 50 and s["connections"]["keep_alive"] is False


def test_sigterm_stops_the_schedule_and_still_summarises(apiload_bin):
    with FaultyServer(every_nth(10**9)) as srv:
        proc = subprocess.Popen([str(apiload_bin), "--url", srv.url, "--rate", "100rps", "--duration", "60s"],
                                stdout=subprocess.PIPE, text=True)
        first = proc.stdout.readline()   # the first interval: one second has passed
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=20)
    records = [json.loads(x) for x in [first, *rest.splitlines()] if x.strip()]
    s = records[-1]["data"]
    assert records[-1]["type"] == "summary" and s["interrupted"] is True
    assert proc.returncode in (0, 1)
    # Only the slots due before the stop count as target, and all of them were sent.
    assert 100 <= s["target"] < 6000 and s["sent"] == s["target"] == srv.served
    assert s["duration_s"] < 60


def test_sigterm_while_waiting_at_the_cap_counts_the_backlog_as_unsent(apiload_bin):
    with FaultyServer(every_nth(10**9), delay_s=1.0) as srv:
        proc = subprocess.Popen([str(apiload_bin), "--url", srv.url, "--rate", "100rps", "--duration", "60s",
                                 "--max-in-flight", "5", "--timeout", "3s"], stdout=subprocess.PIPE, text=True)
        first = proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=20)
    s = json.loads(rest.splitlines()[-1])["data"]
    assert json.loads(first)["data"]["sent"] == 5
    assert s["interrupted"] is True and proc.returncode == 1
    assert s["sent"] + s["unsent"] == s["target"] >= 100
    assert s["unsent"] > 80 and s["achieved_ratio"] < 0.2


def test_preconnected_connections_are_opened_before_the_clock(run_apiload):
    with FaultyServer(every_nth(10**9)) as srv:
        run = run_apiload("--url", srv.url, "--rate", "20rps", "--duration", "1s", "--preconnect", "3")
    assert run.summary["connections"]["opened"] >= 3 == run.intervals[0]["connections_opened"]
    assert run.summary["succeeded"] == 20 == srv.served
