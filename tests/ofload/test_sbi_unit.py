"""Unit tests of the sbi workload's command line and output parsing (no controller needed)."""

from __future__ import annotations

import json

import pytest

from sdnbench.errors import ToolError
from sdnbench.workloads import sbi

SUMMARY = {
    "tool": "sdnbench-ofload", "switches_connected": 8, "valid": True,
    "responses_per_s": {"n": 3, "mean": 1000.0, "sd": 10.0, "min": 990.0, "max": 1010.0},
    "matched_per_s": {"n": 3, "mean": 1000.0, "sd": 10.0, "min": 990.0, "max": 1010.0},
    "latency_us": {"count": 3000, "mean": 90.0, "p50": 80.0, "p90": 120.0, "p99": 300.0, "p999": 400.0, "max": 500.0, "min": 10.0,
                   "sample_every": 1},
    "totals": {"unmatched": 0, "duplicates": 2, "timeouts": 0, "decode_errors": 0},
    "totals_all_phases": {"decode_errors": 1},
    "generator_cpu": {"cores_used": 0.4},
}


def lines(*records: tuple[str, dict]) -> str:
    return "\n".join(json.dumps({"type": t, "schema": 1, "data": d}) for t, d in records) + "\n"


def test_argv_maps_options_to_cbench_style_flags():
    opts = sbi.OfloadOptions(switches=8, macs_per_switch=500, loops=4, ms_per_loop=500, warmup_loops=2,
                             window=64, threads=1, buffered=False, timeout_ms=750)
    argv = sbi.ofload_argv("/bin/ofload", "10.0.0.1", 6633, "1.3", opts)
    assert argv[:5] == ["/bin/ofload", "-c", "10.0.0.1", "-p", "6633"]
    pairs = dict(zip(argv[5::1], argv[6::1]))
    assert pairs["-V"] == "1.3" and pairs["-s"] == "8" and pairs["-M"] == "500"
    assert pairs["-l"] == "4" and pairs["-m"] == "500" and pairs["-w"] == "2" and pairs["-W"] == "64"
    assert "-t" in argv and "--no-buffer" in argv and pairs["--timeout"] == "750ms"


def test_argv_rejects_unknown_openflow_version():
    with pytest.raises(ValueError):
        sbi.ofload_argv("x", "h", 1, "1.5", sbi.OfloadOptions())


def test_parse_output_splits_records_and_metrics_flatten():
    out = lines(("interval", {"loop": 0}), ("interval", {"loop": 1}), ("summary", SUMMARY))
    intervals, summary, errors = sbi.parse_output(out)
    assert [i["loop"] for i in intervals] == [0, 1] and errors == []
    m = sbi.metrics_from_summary(summary)
    assert m["responses_per_s_mean"] == 1000.0 and m["responses_per_s_sd"] == 10.0
    assert m["latency_p99_us"] == 300.0 and m["duplicates"] == 2
    assert m["decode_errors"] == 1, "decode errors count over all phases"
    assert m["valid"] is True and set(m) == set(sbi.METRICS)


def test_parse_output_rejects_garbage_and_wrong_schema():
    with pytest.raises(ToolError, match="not JSON"):
        sbi.parse_output("RESULT: 8 switches\n")
    with pytest.raises(ToolError, match="schema"):
        sbi.parse_output(json.dumps({"type": "summary", "schema": 2, "data": {}}))


def test_missing_binary_names_the_build_command(monkeypatch):
    monkeypatch.setattr(sbi, "native_tool", lambda name: None)
    with pytest.raises(ToolError, match="cargo build --release -p sdnbench-ofload"):
        sbi.run_ofload("127.0.0.1", 6653)


def test_mean_ci95_matches_hand_computation():
    r = sbi.mean_ci95([10.0, 12.0, 14.0])
    assert r["n"] == 3 and r["mean"] == 12.0 and r["sd"] == 2.0
    assert abs(r["ci95"] - 4.303 * 2.0 / 3 ** 0.5) < 1e-3
    assert sbi.mean_ci95([5.0]) == {"n": 1, "mean": 5.0, "sd": None, "ci95": None}
    assert sbi.mean_ci95([None])["n"] == 0


def test_aggregate_over_repetitions():
    def result(rate: float, valid: bool) -> sbi.SbiResult:
        s = dict(SUMMARY, valid=valid, responses_per_s={"n": 3, "mean": rate, "sd": 1.0, "min": rate, "max": rate})
        return sbi.SbiResult(sbi.metrics_from_summary(s), s, [], [], 0, "", "")
    agg = sbi.aggregate([result(100.0, True), result(200.0, True), result(300.0, False)])
    assert agg["responses_per_s_mean"]["mean"] == 200.0 and agg["responses_per_s_mean"]["n"] == 3
    assert agg["latency_p99_us"]["sd"] == 0.0
    assert agg["valid"] == {"n": 3, "all": False}


def test_profile_sets_packet_in_flags_and_at_least_its_hosts():
    from sdnbench.controllers.base import SouthboundProfile

    prof = SouthboundProfile(packet_in_reason="action", packet_in_table=1, packet_in_cookie=77, vlan=100,
                             min_macs_per_switch=5000, throughput_window=16)
    opts = sbi.apply_profile(sbi.OfloadOptions(macs_per_switch=1000), prof)
    assert (opts.macs_per_switch, opts.window) == (5000, 16)
    argv = sbi.ofload_argv("x", "h", 1, "1.3", opts)
    pairs = dict(zip(argv, argv[1:]))
    assert (pairs["--packet-in-reason"], pairs["--packet-in-table"], pairs["--packet-in-cookie"], pairs["--vlan"]) \
        == ("action", "1", "77", "100")
    assert sbi.apply_profile(sbi.OfloadOptions(macs_per_switch=10 ** 6, window=64), prof).macs_per_switch == 10 ** 6
    assert sbi.apply_profile(sbi.OfloadOptions(window=64), prof).window == 64, "the workload's window wins"
    assert sbi.apply_profile(sbi.OfloadOptions(throughput=False), prof).window is None
    plain = sbi.apply_profile(sbi.OfloadOptions(), SouthboundProfile())
    assert plain == sbi.OfloadOptions()
    assert not any(a.startswith("--packet-in") or a == "--vlan" for a in sbi.ofload_argv("x", "h", 1, "1.0", plain))
