"""sdnbench-ofload against real controllers on loopback: ovs-testcontroller, the fast responder, a misbehaving fake."""

from __future__ import annotations

import json
import socket
import struct
import threading

import pytest

from sdnbench.paths import REPO_ROOT
from sdnbench.workloads import sbi

from .conftest import fake_controller, free_port, run_ofload


def records(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def summary_of(stdout: str) -> dict:
    return next(r["data"] for r in records(stdout) if r["type"] == "summary")


def assert_every_answer_matched(s: dict) -> None:
    t = s["totals"]
    assert t["responses"] > 0
    assert t["unmatched"] == 0 and t["late"] == 0 and t["timeouts"] == 0, t
    assert t["matched"] + t["duplicates"] == t["responses"], t


def test_throughput_against_testcontroller_of10_is_stable_and_matched(ofload_bin, testcontroller):
    p = run_ofload(ofload_bin, testcontroller, "-s", "8", "-M", "1000", "-l", "5", "-m", "500", "-w", "1", "-t", "-T", "1")
    assert p.returncode == 0, p.stdout + p.stderr
    s = summary_of(p.stdout)
    assert s["switches_connected"] == 8
    rate = s["responses_per_s"]
    assert rate["n"] == 4 and rate["min"] > 0
    assert rate["sd"] < 0.5 * rate["mean"], f"unstable rate {rate}"
    assert_every_answer_matched(s)
    assert s["latency_us"]["p50"] > 0 and s["latency_us"]["p99"] >= s["latency_us"]["p50"]
    measured = [r["data"] for r in records(p.stdout) if r["type"] == "interval" and not r["data"]["warmup"]]
    assert len(measured) == 4 and all(i["matched"] > 0 for i in measured)
    assert sum(i["responses"] for i in measured) == s["totals"]["responses"]


def test_of13_latency_through_sbi_workload(ofload_bin, testcontroller):
    opts = sbi.OfloadOptions(switches=8, loops=3, ms_per_loop=500, throughput=False, threads=1)
    r = sbi.run_ofload("127.0.0.1", testcontroller, "1.3", opts)
    assert r.summary["openflow_version"] == "1.3" and r.summary["mode"] == "latency"
    assert r.metrics["switches_connected"] == 8
    assert r.metrics["responses_per_s_mean"] > 0 and r.metrics["unmatched"] == 0
    assert 0 < r.metrics["latency_p50_us"] <= r.metrics["latency_p99_us"] <= r.metrics["latency_max_us"]
    assert_every_answer_matched(r.summary)


def test_every_packet_in_the_responder_answered_is_counted(ofload_bin, responder_bin, tracker, tmp_path):
    port, switches = free_port(), 4
    log = tmp_path / "responder.out"
    with open(log, "w") as out:
        proc = tracker.spawn([str(responder_bin), "-p", str(port), "--duration-s", "6"], role="responder", stdout=out)
    from .conftest import listening
    from sdnbench.procs import wait_for
    assert wait_for(lambda: listening(port), 10)
    p = run_ofload(ofload_bin, port, "-s", str(switches), "-l", "3", "-m", "300", "-w", "1")
    assert p.returncode == 0, p.stdout + p.stderr
    proc.popen.wait(15)
    answered = json.loads(log.read_text().splitlines()[-1])["data"]["packet_ins_answered"]
    s = summary_of(p.stdout)["totals_all_phases"]
    # Latency mode: at most one PACKET_IN per switch is in flight when the run stops,
    # and each switch sent one learning PACKET_IN that is answered but not a test request.
    test_answers = answered - switches
    assert s["matched"] <= test_answers <= s["matched"] + switches, (answered, s)
    assert s["sent"] - switches <= s["matched"] <= s["sent"], s
    assert s["unmatched"] == 0


def test_output_follows_the_schema(ofload_bin, responder):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO_ROOT / "schemas" / "ofload.schema.json").read_text())
    for version in ("1.0", "1.3"):
        p = run_ofload(ofload_bin, responder, "-V", version, "-s", "2", "-l", "2", "-m", "200", "-t", "-W", "16")
        assert p.returncode == 0, p.stderr
        recs = records(p.stdout)
        assert [r["type"] for r in recs] == ["interval", "interval", "summary"]
        for r in recs:
            jsonschema.validate(r, schema)


def test_many_switches_complete_the_handshake(ofload_bin, responder):
    p = run_ofload(ofload_bin, responder, "-s", "1000", "-l", "2", "-m", "300", "-T", "1")
    assert p.returncode == 0, p.stderr
    s = summary_of(p.stdout)
    assert s["switches_connected"] == 1000 and s["totals"]["matched"] > 0


def test_exit_codes(ofload_bin, responder):
    p = run_ofload(ofload_bin, responder, "-s", "1", "-l", "2", "-m", "100", "--min-rate", "1e12")
    assert p.returncode == 1 and summary_of(p.stdout)["thresholds_met"] is False
    p = run_ofload(ofload_bin, free_port(), "-s", "1", "-l", "2", "-m", "100", "--connect-timeout", "2s")
    assert p.returncode == 2
    err = records(p.stdout)[-1]
    assert err["type"] == "error" and "handshake" in err["data"]["message"]
    p = run_ofload(ofload_bin, responder, "-s", "1", "-l", "2", "-w", "2")
    assert p.returncode == 2 and "warmup" in records(p.stdout)[-1]["data"]["message"]


def truncating_controller(lsock: socket.socket, stop: threading.Event) -> None:
    """OpenFlow 1.0 controller that sends one truncated FLOW_MOD, then answers with PACKET_OUTs."""
    conn, _ = lsock.accept()
    conn.settimeout(0.2)
    conn.sendall(struct.pack("!BBHI", 1, 0, 8, 1) + struct.pack("!BBHI", 1, 5, 8, 2))
    buf, broke = b"", False
    while not stop.is_set():
        try:
            data = conn.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break  # the switch closed the connection at the end of the run
        if not data:
            break
        buf += data
        while len(buf) >= 8 and len(buf) >= struct.unpack("!H", buf[2:4])[0]:
            n = struct.unpack("!H", buf[2:4])[0]
            msg, buf = buf[:n], buf[n:]
            if msg[1] != 10:  # only PACKET_IN matters here
                continue
            if not broke:
                conn.sendall(struct.pack("!BBHI", 1, 14, 12, 99) + b"\0" * 4)  # FLOW_MOD cut at 12 bytes
                broke = True
            xid, buffer_id = struct.unpack("!II", msg[4:12])
            action = struct.pack("!HHHH", 0, 8, 2, 0xFFFF)
            try:
                conn.sendall(struct.pack("!BBHIIHH", 1, 13, 24, xid, buffer_id, 1, 8) + action)
            except OSError:
                stop.set()
                break
    conn.close()


def test_malformed_controller_message_is_counted_not_fatal(ofload_bin):
    with fake_controller(truncating_controller) as port:
        p = run_ofload(ofload_bin, port, "-s", "1", "-l", "3", "-m", "300", "-w", "1", "--no-learn-dst")
    assert p.returncode == 0, p.stdout + p.stderr
    s = summary_of(p.stdout)
    assert s["totals_all_phases"]["decode_errors"] == 1
    assert "truncated flow_mod" in s["first_decode_error"]
    assert "truncated flow_mod" in p.stderr
    assert s["totals"]["matched"] > 0 and s["totals"]["unmatched"] == 0


def test_unbuffered_requests_are_matched_by_content(ofload_bin, responder):
    """Without buffer ids each request gets a FLOW_MOD (matched by source MAC) and a PACKET_OUT (by payload)."""
    for version in ("1.0", "1.3"):
        p = run_ofload(ofload_bin, responder, "-V", version, "-s", "4", "-M", "100", "-l", "3", "-m", "300",
                       "-t", "-W", "64", "--no-buffer")
        assert p.returncode == 0, p.stderr
        t = summary_of(p.stdout)["totals"]
        assert t["matched"] > 0 and t["unmatched"] == 0 and t["late"] == 0, t
        # Pairs can straddle a loop boundary, so allow the in-flight window (4 switches x 64).
        assert abs(t["duplicates"] - t["matched"]) <= 256, t
        assert t["responses"] == t["matched"] + t["duplicates"]
