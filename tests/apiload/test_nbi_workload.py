"""The Python side of northbound load: presets as data, argv, parsing, a real run."""

from __future__ import annotations

import json

import pytest
from apiload_server import FaultyServer, every_nth

from sdnbench.errors import ToolError
from sdnbench.workloads import nbi
from sdnbench.workloads.nbi_presets import FLOW_COOKIE, PRESETS, preset_requests, substitute


def test_placeholders_keep_json_types():
    out = substitute({"dpid": "${dpid}", "path": "/stats/flow/${dpid}", "l": ["${ip}"]}, {"dpid": 7, "ip": "10.0.0.1"})
    assert out == {"dpid": 7, "path": "/stats/flow/7", "l": ["10.0.0.1"]}
    with pytest.raises(KeyError, match="needs variable 'dpid'"):
        substitute("/stats/flow/${dpid}", {})


def test_every_preset_renders_with_its_defaults():
    for name, p in PRESETS.items():
        reqs = preset_requests(name)
        assert reqs, name
        text = json.dumps(reqs)
        assert "${" not in text, f"{name}: unfilled placeholder in {text}"
        assert all(r["path"].startswith("/") and r.get("weight", 1) > 0 for r in reqs), name
        assert isinstance(p["port"], int)


def test_ryu_flowmod_preset_targets_the_given_switch():
    add, delete = preset_requests("ryu-ofctl-flowmod", dpid=3)
    assert add["path"] == "/stats/flowentry/add" and add["body"]["dpid"] == 3
    assert delete["body"]["cookie"] == FLOW_COOKIE == add["body"]["cookie"]
    assert preset_requests("ryu-ofctl", dpid=5)[1]["path"] == "/stats/flow/5"
    with pytest.raises(KeyError, match="known:"):
        preset_requests("nox")


def test_argv_carries_preset_auth_and_stages(tmp_path):
    spec = nbi.NbiSpec(url="http://127.0.0.1:8181", preset="onos",
                       stages=("ramp:0rps:1000rps:5m", "const:1000rps:1m"), keep_alive=False)
    argv = nbi.build_argv("sdnbench-apiload", spec, tmp_path / "r.json")
    assert argv[argv.index("--basic-auth") + 1] == "onos:rocks"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--stage"] == list(spec.stages)
    assert "--no-keepalive" in argv
    with pytest.raises(ValueError):
        nbi.build_argv("x", nbi.NbiSpec(url="http://127.0.0.1:1", preset="onos"), tmp_path / "r.json")


def test_error_lines_and_missing_summaries_raise():
    with pytest.raises(ToolError, match="refusing"):
        nbi.parse_output('{"type": "error", "schema": 1, "data": {"message": "refusing to send load"}}\n')
    with pytest.raises(ToolError, match="no summary"):
        nbi.parse_output("")
    with pytest.raises(ToolError, match="not JSON"):
        nbi.parse_output("Running 10s test\n")


def test_run_nbi_returns_series_and_summary(apiload_bin, tmp_path):
    spec = nbi.NbiSpec(url="", stages=("const:50rps:2s",),
                       requests=({"name": "switches", "path": "/stats/switches", "weight": 3},
                                 {"name": "desc", "path": "/stats/desc/1", "weight": 1}))
    with FaultyServer(every_nth(5, 500)) as srv:
        res = nbi.run_nbi(nbi.NbiSpec(**{**spec.__dict__, "url": srv.url}), tmp_path, binary=apiload_bin)
    assert res.exit_code == 0 and res.passed
    assert len(res.series) == 2 and [r["t_s"] for r in res.series] == [0, 1]
    assert sum(r["sent"] for r in res.series) == 100 == srv.served
    assert sum(r.get("failed_http_500", 0) for r in res.series) == 20
    by_name = {r["name"]: r for r in res.summary["requests"]}
    assert by_name["switches"]["sent"] == 75 and by_name["desc"]["sent"] == 25
    head = nbi.headline(res.summary)
    assert head["error_rate_pct"] == pytest.approx(20.0) and head["failure_pattern"] == "partial"
    assert (tmp_path / "nbi.jsonl").exists()


def test_overload_stage_scales_the_measured_throughput():
    assert nbi.overload_stage({"throughput_rps": 272.8}, 1.5, "5m") == "const:409.2rps:5m"
    with pytest.raises(ValueError):
        nbi.overload_stage({"throughput_rps": 0.0}, 2, "1m")
