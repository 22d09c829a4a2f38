"""The userspace link realisation without root: link keys in the experiment file, per-link values in
topology files, the emulator's configuration, the automatic choice, and how a trial window is judged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sdnbench.config.loader import parse_experiment
from sdnbench.emulation import capabilities
from sdnbench.emulation.capabilities import Capability
from sdnbench.emulation.links import LINKS, resolve
from sdnbench.emulation.links import linkemu as linkemu_module
from sdnbench.emulation.links.emulator import JsonlTail, judge
from sdnbench.emulation.links.impairment import emulator_direction, emulator_link, tclink_unsupported
from sdnbench.errors import ConfigError
from sdnbench.manifest import Manifest
from sdnbench.paths import native_tool
from sdnbench.topology import build_topology
from sdnbench.topology.custom import link_values
from sdnbench.topology.graph import LinkParams

EXPERIMENT = """\
name: t
controllers:
  - kind: none
topologies:
  - kind: linear
    switches: 2
    core_link: {link}
workloads:
  - name: udp
    flows:
      - {{proto: udp, rate_pps: 100, duration_s: 2}}
"""


def core_link(text: str) -> LinkParams:
    exp = parse_experiment(EXPERIMENT.format(link=text), Path("exp.yaml"))
    return next(link.params for link in build_topology(exp.topologies[0]).links if link.role == "core")


@pytest.fixture
def no_netem(monkeypatch):
    """A kernel with HTB and without netem, whatever this machine has."""
    def fake(kind):
        ok = kind == "htb"
        return Capability(kind, ok, f"tc qdisc {kind} {'works' if ok else 'unavailable: unknown'}")
    monkeypatch.setattr(capabilities, "qdisc_available", fake)


@pytest.fixture
def built(monkeypatch):
    """sdnbench-linkemu counts as built."""
    monkeypatch.setattr(linkemu_module, "native_tool", lambda name: Path("/bin/true"))


def test_netem_like_keys_reach_the_link():
    p = core_link("{delay_ms: 5, jitter_ms: 1, delay_distribution: normal, loss_model: gilbert_elliott, "
                  "loss_p_pct: 1, loss_r_pct: 25, rate_mbps: 10, rate_overhead_bytes: 24, queue_pkts: 50}")
    assert (p.delay_ms, p.jitter_ms, p.delay_distribution, p.loss_p_pct, p.rate_mbps, p.queue_pkts) == \
        (5, 1, "normal", 1, 10, 50)
    assert p.needs_netem() and not LinkParams(bw_mbps=10).needs_netem()


@pytest.mark.parametrize("link, problem", [
    ("{loss_pct: 1, loss_p_pct: 2}", "core_link.loss_p_pct: belongs to loss_model gilbert_elliott, not bernoulli"),
    ("{loss_model: 4state}", "core_link.loss_p13_pct: required by loss_model 4state"),
    ("{reorder_pct: 10}", "core_link.reorder_pct: needs delay_ms"),
    ("{delay_ms: 5, delay_distribution: pareto}", "core_link.delay_distribution: needs jitter_ms"),
    ("{rate_overhead_bytes: 24}", "core_link.rate_overhead_bytes: needs rate_mbps"),
    ("{delay_ms: 5, reorder_pct: 5, keep_order: true}", "core_link.keep_order: contradicts reorder_pct"),
    ("{loss_model: 4state, loss_p13_pct: 60, loss_p14_pct: 50}", "loss_p13_pct + loss_p14_pct exceed 100"),
])
def test_inconsistent_links_are_refused_with_the_key(link, problem):
    with pytest.raises(ConfigError) as info:
        core_link(link)
    assert problem in str(info.value)


def test_graphml_edge_attributes_shape_their_link(tmp_path):
    path = tmp_path / "t.graphml"
    path.write_text("""<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="d" for="edge" attr.name="delay_ms" attr.type="double"/>
  <key id="l" for="edge" attr.name="loss_pct" attr.type="double"/>
  <graph edgedefault="undirected">
    <node id="a"/><node id="b"/><node id="c"/>
    <edge source="a" target="b"><data key="d">12.5</data></edge>
    <edge source="b" target="c"><data key="l">150</data></edge>
  </graph>
</graphml>""")
    with pytest.raises(ConfigError, match="edge b - c: loss_pct: expected a number from 0 to 100"):
        build_topology({"kind": "graphml", "path": str(path)})
    path.write_text(path.read_text().replace(">150<", ">2<"))
    g = build_topology({"kind": "graphml", "path": str(path), "core_link": {"jitter_ms": 1}})
    core = [link.params for link in g.links if link.role == "core"]
    assert (core[0].delay_ms, core[0].jitter_ms, core[1].loss_pct, core[1].delay_ms) == (12.5, 1, 2, None)


def test_custom_topo_options_in_mininet_or_sdnbench_names():
    assert link_values({"bw": 10, "delay": "250us", "jitter": "1ms", "loss": 2, "max_queue_size": 30,
                        "port1": 1}) == {"bw_mbps": 10, "delay_ms": 0.25, "jitter_ms": 1.0, "loss_pct": 2,
                                         "queue_pkts": 30}
    assert link_values({"delay_ms": 3, "delay": "9ms"}) == {"delay_ms": 3}


def test_emulator_configuration_of_a_link():
    p = core_link("{delay_ms: 5, jitter_ms: 0.5, delay_distribution: normal, loss_model: 4state, "
                  "loss_p13_pct: 1, duplicate_pct: 2, rate_mbps: 10, queue_bytes: 100000}")
    d = emulator_direction(p, 7)
    assert d == {"seed": 7, "delay_ns": 5_000_000, "jitter_ns": 500_000, "rate_bps": 10_000_000,
                 "delay_distribution": "normal", "duplicate_pct": 2, "limit_bytes": 100000,
                 "loss": {"model": "four_state", "p13_pct": 1}}
    assert emulator_direction(LinkParams(loss_pct=1, loss_correlation_pct=25), 1)["loss"] == \
        {"model": "bernoulli", "loss_pct": 1, "correlation_pct": 25}
    assert "loss" not in emulator_direction(LinkParams(delay_ms=1), 1)


def test_the_emulator_accepts_what_sdnbench_writes(tmp_path):
    tool = native_tool("sdnbench-linkemu")
    if tool is None:
        pytest.skip("sdnbench-linkemu not built (cargo build --release -p sdnbench-linkemu)")
    g = build_topology({"kind": "linear", "switches": 2, "core_link": {
        "delay_ms": 5, "jitter_ms": 1, "delay_distribution": "paretonormal", "delay_correlation_pct": 25,
        "reorder_pct": 5, "reorder_gap": 3, "loss_model": "gilbert_elliott", "loss_p_pct": 1, "loss_bad_pct": 80,
        "corrupt_pct": 1, "rate_mbps": 10, "rate_overhead_bytes": 24, "queue_pkts": 100}})
    cfg = tmp_path / "c.json"
    core = next(link for link in g.links if link.role == "core")
    cfg.write_text(json.dumps({"links": [emulator_link("s1-s2", ("lk0a", "lk0b"), core)]}))
    res = subprocess.run([tool, "--config", cfg, "--check"], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_tclink_gives_only_delay_uniform_jitter_bernoulli_loss_and_limit():
    assert tclink_unsupported(LinkParams(delay_ms=5, jitter_ms=1, loss_pct=1, queue_pkts=10,
                                         delay_distribution="uniform")) == []
    assert tclink_unsupported(LinkParams(delay_ms=5, duplicate_pct=1, loss_model="gilbert_elliott",
                                         loss_p_pct=1)) == ["loss_model", "loss_p_pct", "duplicate_pct"]


def test_auto_keeps_veth_tc_unless_links_need_the_emulator(no_netem, built):
    shaped = build_topology({"kind": "single", "hosts": 2, "link": {"bw_mbps": 10}}).links
    delayed = build_topology({"kind": "single", "hosts": 2, "link": {"delay_ms": 5}}).links
    assert resolve("auto", shaped) == "veth_tc" and resolve("auto", []) == "veth_tc"
    assert resolve("auto", delayed) == "linkemu"
    assert resolve("veth_tc", delayed) == "veth_tc"


def test_auto_takes_the_emulator_for_what_tclink_lacks_even_with_netem(monkeypatch, built):
    monkeypatch.setattr(capabilities, "qdisc_available", lambda kind: Capability(kind, True, "works"))
    dup = build_topology({"kind": "single", "hosts": 2, "link": {"delay_ms": 5, "duplicate_pct": 1}}).links
    cap = LINKS.get("veth_tc").availability(dup)
    assert not cap.ok and "duplicate_pct" in cap.detail and "linkemu" in cap.fix
    assert resolve("auto", dup) == "linkemu"


def test_linkemu_refuses_when_not_built(monkeypatch):
    monkeypatch.setattr(linkemu_module, "native_tool", lambda name: None)
    cap = LINKS.get("linkemu").availability([])
    assert not cap.ok and "cargo build --release -p sdnbench-linkemu" in cap.fix


def test_only_impaired_links_go_through_the_emulator(tmp_path, built):
    pytest.importorskip("mininet.link", reason="Mininet not installed (apt-get install mininet)")
    g = build_topology({"kind": "linear", "switches": 2, "hosts_per_switch": 1,
                        "core_link": {"delay_ms": 5, "bw_mbps": 20}, "edge_link": {"bw_mbps": 10}})
    manifest = Manifest(tmp_path)
    kind = LINKS.get("linkemu")(g, manifest)
    core = next(i for i, link in enumerate(g.links) if link.role == "core")
    opts = kind.options(g.links[core])
    assert opts["inner"] == (f"lk{core}a", f"lk{core}b") and opts["cls"].__name__ == "EmulatedLink"
    assert opts["bw"] == 20 and opts["intf"].__name__ == "TCIntf"
    edge = next(link for link in g.links if link.role == "edge")
    assert kind.options(edge)["cls"].__name__ == "TCLink"
    assert {r["name"] for r in manifest.outstanding()} == {f"lk{core}a", f"lk{core}b"}
    kind.teardown()
    assert manifest.outstanding() == []
    assert kind.describe() == {"links": "linkemu", "link_shaping": "htb+linkemu", "linkemu_links": 1}


def _direction(**kw) -> dict:
    d = {"link": "s1-s2", "dir": "a>b", "released_pkts": 100, "late_p50_us": 1.0, "late_p99_us": 20.0,
         "late_max_us": 80.0, "ring_drop_pkts": 0, "tx_error_pkts": 0, "truncated_pkts": 0}
    return {**d, **kw}


def test_a_window_in_time_is_valid_and_a_late_one_is_not():
    metrics, problems = judge({"links": [_direction(), _direction(dir="b>a", released_pkts=0, late_p99_us=0)]})
    assert problems == [] and metrics["link_timing_valid"] == 1.0 and metrics["link_late_p99_us"] == 20.0
    metrics, problems = judge({"links": [_direction(late_p99_us=450.0), _direction(dir="b>a", ring_drop_pkts=3)]})
    assert metrics["link_timing_valid"] == 0.0 and metrics["link_emulator_drops"] == 3
    assert "450 µs on s1-s2 a>b (limit 100 µs)" in problems[0] and "dropped 3 frames" in problems[1]


def test_tail_reads_only_complete_lines(tmp_path):
    path = tmp_path / "out.jsonl"
    tail = JsonlTail(path)
    assert tail.new() == []
    path.write_text('{"a": 1}\n{"b"')
    assert tail.new() == [{"a": 1}]
    with open(path, "a") as f:
        f.write(': 2}\n')
    assert tail.new() == [{"b": 2}]
