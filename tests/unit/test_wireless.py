"""Wireless networks without root: the experiment keys and their refusals, access points and stations
made from the R1 topologies, the medium axis of the plan, the emulator's media, and the air metrics."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sdnbench.config.loader import ExperimentErrors, parse_experiment
from sdnbench.emulation.links import LINKS, resolve
from sdnbench.emulation.links.air import AIR_METRICS, air_window, emulator_media
from sdnbench.emulation.links.impairment import emulator_link
from sdnbench.errors import ConfigError
from sdnbench.media import MEDIA
from sdnbench.media.wireless_keys import defaults
from sdnbench.metrics import catalog
from sdnbench.paths import native_tool
from sdnbench.runner.plan import expand
from sdnbench.topology import build_topology

EXPERIMENT = """\
name: t
repetitions: 1
controllers:
  - kind: none
topologies:
  - {kind: single, hosts: 2}
  - {kind: tree, depth: 3, fanout: 2}
network:
  link: {bw_mbps: 100}
  medium: MEDIUM
WIRELESS
workloads:
  - name: udp
    flows:
      - {src: first, dst: last, proto: udp, rate_pps: 100, duration_s: 1}
"""


def parse(medium: str = "[wired, wireless]", wireless: str = ""):
    text = EXPERIMENT.replace("MEDIUM", medium).replace("WIRELESS", wireless)
    return parse_experiment(text, Path("exp.yaml"))


def errors_of(medium: str = "wireless", wireless: str = "") -> str:
    with pytest.raises(ConfigError) as info:
        expand(parse(medium, wireless))
    return str(info.value)


def test_the_medium_is_an_axis_beside_the_topology():
    trials = expand(parse())
    assert [t.topology for t in trials] == ["single-2", "single-2-wireless", "tree-3x2", "tree-3x2-wireless"]
    wired, wireless = trials[0].graph, trials[1].graph
    assert wired.medium == "wired" and not wired.cells and wired.links[0].params.bw_mbps == 100
    assert wireless.medium == "wireless" and list(wireless.cells) == ["s1"]
    # The medium replaces the station links' wired shaping; they go through the AP's medium.
    assert all(link.medium == "s1" and not link.params.bw_mbps for link in wireless.links)


def test_a_file_without_a_medium_is_wired_as_before():
    trials = expand(parse_experiment(EXPERIMENT.replace("  medium: MEDIUM\n", "").replace("WIRELESS", ""),
                                     Path("exp.yaml")))
    assert [t.topology for t in trials] == ["single-2", "tree-3x2"]
    assert all(t.graph.medium == "wired" for t in trials)


def test_tree_leaves_are_access_points_and_stations_stand_around_them():
    graph = expand(parse("wireless"))[1].graph
    assert list(graph.cells) == ["s3", "s4", "s6", "s7"]          # the leaf switches, in switch order
    assert [c.radio.position for c in graph.cells.values()] == [(0, 0), (200, 0), (400, 0), (600, 0)]
    core = [link for link in graph.links if link.medium is None]
    assert len(core) == 6 and all(link.params.bw_mbps == 100 for link in core)   # wires keep their shaping
    for cell in graph.cells.values():
        assert len(cell.stations) == 2
        assert all(cell.distance_m(st) == pytest.approx(10) for st in cell.stations)
    describe = MEDIA["wireless"].describe(graph)
    assert describe["wifi_model"] == "dcf" and describe["wifi_association"]["h8"] == "s7"


def test_a_station_placed_near_another_access_point_associates_with_it():
    wireless = """  wireless:
    rate: 24
    model: dcf
    access_points:
      s7: {x_m: 0, y_m: 500, tx_power_dbm: 20}
    stations:
      h1: {x_m: 5, y_m: 480, antenna_gain_dbi: 2, rate: best}
"""
    graph = expand(parse("wireless", wireless))[1].graph
    h1 = next(link for link in graph.links if "h1" in (link.a, link.b))
    assert (h1.a, h1.b, h1.medium) == ("h1", "s7", "s7")
    s7 = graph.cells["s7"]
    assert [st.host for st in s7.stations] == ["h1", "h7", "h8"] and s7.radio.tx_power_dbm == 20
    assert s7.stations[0].rate == "best" and s7.stations[1].rate == 24
    assert [st.host for st in graph.cells["s3"].stations] == ["h2"]


def test_refusals_name_file_line_and_what_was_expected():
    msg = errors_of(wireless="  wireless:\n    standard: n\n")
    assert msg.startswith("exp.yaml:12: network.wireless.standard: 802.11n") and "only g" in msg
    msg = errors_of(wireless="  wireless:\n    rate: 11\n")
    assert "exp.yaml:12: network.wireless.rate: expected best or an 802.11g rate" in msg
    msg = errors_of(wireless="  wireless:\n    stations:\n      h1: {x_m: 3}\n")
    assert "network.wireless.stations.h1.y_m: x_m and y_m go together" in msg
    msg = errors_of(wireless="  wireless:\n    model: mininet_wifi\n    rate: 54\n")
    assert "exp.yaml:13: network.wireless.rate: model mininet_wifi sets the rate from the distance" in msg
    msg = errors_of(wireless="  wireless:\n    colour: blue\n")
    assert "network.wireless.colour: unknown key" in msg
    msg = errors_of("[wireless, radio]")
    assert "exp.yaml:10: network.medium[1]: expected one of wired, wireless" in msg
    text = EXPERIMENT.replace("MEDIUM", "wireless\n  links: veth_tc").replace("WIRELESS", "")
    with pytest.raises(ExperimentErrors, match=r"exp.yaml:11: network.links: medium wireless needs links linkemu"):
        parse_experiment(text, Path("exp.yaml"))


def test_a_name_the_topology_lacks_is_refused_at_its_line():
    msg = errors_of(wireless="  wireless:\n    stations:\n      h9: {x_m: 3, y_m: 4}\n")
    assert msg.startswith("exp.yaml:13: network.wireless.stations.h9: no station h9 in any topology")
    own = EXPERIMENT.replace("{kind: single, hosts: 2}", "{kind: single, hosts: 2, wireless: {stations: {h5: {x_m: 1, y_m: 1}}}}")
    with pytest.raises(ConfigError) as info:
        expand(parse_experiment(own.replace("MEDIUM", "wireless").replace("WIRELESS", ""), Path("exp.yaml")))
    assert str(info.value).startswith("exp.yaml:6: topologies[0].wireless.stations.h5: no station h5 in this "
                                      "topology; its stations are h1, h2 (topology single-2, medium wireless)")


MOVING = """  wireless:
    stations:
      h1:
        mobility:
          - {t_s: 0, x_m: 0, y_m: 10}
          - {t_s: 10, x_m: 90, y_m: 10}
          - {t_s: 20, x_m: 150, y_m: 10}
"""


def test_mobility_is_read_checked_and_accepted():
    trials = expand(parse("wireless", MOVING))
    single = trials[0].graph
    h1 = single.cells["s1"].stations[0]
    assert h1.host == "h1" and [w.t_s for w in h1.mobility] == [0, 10, 20]
    assert h1.radio.position == (0, 10) and single.cells["s1"].distance_m(h1) == pytest.approx(10)
    env = MEDIA["wireless"].describe(single)
    assert env["wifi_mobility"] == {"h1": {"waypoints": 3, "until_s": 20, "end_distance_m": pytest.approx(150.33, abs=0.01)}}
    assert "wifi_mobility" not in MEDIA["wireless"].describe(expand(parse("wireless"))[0].graph)
    plan = "  wireless:\n    stations:\n      h1:\n        mobility:\n{}"
    backwards = "          - {t_s: 0, x_m: 0, y_m: 10}\n          - {t_s: 0, x_m: 90, y_m: 10}\n"
    assert "mobility[1].t_s: expected a time after 0 s" in errors_of(wireless=plan.format(backwards))
    late = "          - {t_s: 5, x_m: 0, y_m: 10}\n          - {t_s: 9, x_m: 90, y_m: 10}\n"
    assert "mobility[0].t_s: the first waypoint is where the station starts" in errors_of(wireless=plan.format(late))
    both = MOVING.replace("      h1:\n", "      h1:\n        x_m: 3\n        y_m: 4\n")
    assert "stations.h1.x_m: a moving station starts at its first waypoint" in errors_of(wireless=both)


def test_a_moving_station_joins_the_access_point_nearest_its_start_and_stays():
    # tree-3x2: leaves s3 (x 0), s4 (200), s6 (400), s7 (600). h1 starts near s4 and walks past s6.
    plan = MOVING.replace("x_m: 0, y_m: 10", "x_m: 210, y_m: 0").replace("x_m: 150", "x_m: 420")
    graph = expand(parse("wireless", plan))[1].graph
    assert [st.host for st in graph.cells["s4"].stations] == ["h1", "h3", "h4"]
    assert MEDIA["wireless"].describe(graph)["wifi_mobility"]["h1"]["end_distance_m"] == pytest.approx(220.23, abs=0.01)


def test_the_builder_keeps_a_mobility_plan():
    from sdnbench.media.wireless import apply

    settings = defaults()
    settings["stations"] = {"h1": {"x_m": None, "y_m": None, "tx_power_dbm": None, "antenna_gain_dbi": None,
                                   "rate": None, "mobility": [{"t_s": 0, "x_m": 1, "y_m": 2},
                                                              {"t_s": 3, "x_m": 4, "y_m": 5}]}}
    graph = apply(build_topology({"kind": "single", "hosts": 2}), settings)
    assert [w.t_s for w in graph.cells["s1"].stations[0].mobility] == [0, 3]


def test_a_host_with_two_links_is_not_a_station():
    from sdnbench.topology.graph import LinkParams, TopologyGraph
    from sdnbench.media.wireless import apply

    g = TopologyGraph("x")
    s1, s2, h = g.add_switch(), g.add_switch(), g.add_host()
    g.add_link(h, s1, LinkParams(), "edge")
    g.add_link(h, s2, LinkParams(), "edge")
    with pytest.raises(ConfigError, match="host h1 has more than one link"):
        apply(g, None)


def test_auto_picks_the_link_emulator_for_station_links():
    graph = expand(parse("wireless"))[0].graph
    assert not LINKS.get("veth_tc").availability(graph.links).ok
    assert "wireless medium" in LINKS.get("veth_tc").availability(graph.links).detail
    assert resolve("auto", graph.links) == "linkemu"


def _config(graph) -> dict:
    inner = {i: (f"lk{i}a", f"lk{i}b") for i, link in enumerate(graph.links) if link.medium}
    names = {i: f"{graph.links[i].a}-{graph.links[i].b}" for i in inner}
    return {"links": [emulator_link(names[i], pair, graph.links[i]) for i, pair in inner.items()],
            "media": emulator_media(graph.cells, names, graph.links)}


def test_emulator_media_one_per_access_point():
    config = _config(expand(parse("wireless"))[1].graph)
    assert [m["name"] for m in config["media"]] == ["s3", "s4", "s6", "s7"]
    s4 = config["media"][1]
    assert (s4["model"], s4["standard"], s4["slot"]) == ("dcf", "g", "short")
    assert s4["ap"] == {"tx_power_dbm": 14, "gain_dbi": 5, "position": [200, 0.0, 0.0]}
    assert s4["propagation"] == {"exponent": 3, "shadowing_sigma_db": 0}
    assert [(s["link"], s["station_end"], s["rate"]) for s in s4["stations"]] == [("h3-s4", "a", "best"),
                                                                                  ("h4-s4", "a", "best")]
    # Station links carry no impairment of their own (the emulator refuses one on a dcf cell).
    assert all(set(link["a_to_b"]) == {"seed"} for link in config["links"])
    compat = _config(expand(parse("wireless", "  wireless: {model: mininet_wifi}\n"))[0].graph)
    assert compat["media"][0]["model"] == "compat"


def test_a_moving_station_gives_the_emulator_its_waypoints():
    config = _config(expand(parse("wireless", MOVING))[0].graph)
    h1, h2 = config["media"][0]["stations"]
    assert h1["waypoints"] == [{"t_s": 0, "position": [0, 10, 0.0]}, {"t_s": 10, "position": [90, 10, 0.0]},
                               {"t_s": 20, "position": [150, 10, 0.0]}]
    assert "position" not in h1 and "waypoints" not in h2 and len(h2["position"]) == 3


@pytest.mark.parametrize("wireless", ["", "  wireless: {model: mininet_wifi, slot: long}\n", MOVING,
                                      MOVING.replace("  wireless:\n", "  wireless:\n    model: mininet_wifi\n")])
def test_the_emulator_accepts_the_configuration(tmp_path, wireless):
    tool = native_tool("sdnbench-linkemu")
    if tool is None:
        pytest.skip("sdnbench-linkemu is not built")
    path = tmp_path / "linkemu.json"
    path.write_text(json.dumps(_config(expand(parse("wireless", wireless))[1].graph)))
    res = subprocess.run([tool, "--config", path, "--check"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def _dir(link, way, medium, **air):
    base = {"medium": medium, "station": 0, "way": way, "rate_mbps": 54, "attempts": 100, "retries": 10,
            "collisions": 6, "frame_errors": 4, "delivered_pkts": 95, "retry_drops": 1, "queue_drops": 2,
            "airtime_us": 1000.0, "airtime_share": 0.25}
    return {"link": link, "dir": "a>b", "air": {**base, **air}}


def test_air_counters_become_catalogued_trial_metrics():
    record = {"links": [_dir("h1-s1", "up", "s1"), _dir("h1-s1", "down", "s1", rate_mbps=24, airtime_share=0.5),
                        _dir("h2-s2", "up", "s2", attempts=0, rate_mbps=0, retries=0, airtime_share=0.1),
                        {"link": "s1-s2", "dir": "a>b"}]}
    metrics, stations = air_window(record, {"h1-s1": "s1", "h2-s2": "s2"})
    assert metrics["wifi_airtime_pct"] == pytest.approx(75.0)        # the busiest medium
    assert metrics["wifi_attempts"] == 200 and metrics["wifi_retries"] == 20
    assert metrics["wifi_retry_pct"] == pytest.approx(10.0)
    assert (metrics["wifi_rate_min_mbps"], metrics["wifi_rate_max_mbps"]) == (24.0, 54.0)
    assert set(metrics) <= set(AIR_METRICS) <= set(catalog())
    rows = json.loads(stations)
    assert [(r["link"], r["access_point"], r["way"]) for r in rows][:2] == [("h1-s1", "s1", "up"), ("h1-s1", "s1", "down")]
    assert air_window({"links": [{"link": "s1-s2", "dir": "a>b"}]}, {}) == ({}, None)


def test_the_r1_wireless_example_plans_its_three_topologies_as_wireless():
    from sdnbench.config.loader import load_experiment

    exp = load_experiment(Path(__file__).resolve().parents[2] / "examples" / "r1-pox-vs-ryu-wireless.yaml")
    trials = expand(exp)
    assert sorted({t.topology for t in trials}) == ["linear-7-wireless", "single-8-wireless", "tree-3x2-wireless"]
    assert all(cell.distance_m(st) == pytest.approx(50) for t in trials for cell in t.graph.cells.values()
               for st in cell.stations)


def test_calibration_targets_each_topology_on_each_medium_as_the_rows_name_them():
    from sdnbench import calibration

    exp = parse()
    targets = calibration.targets(exp)
    assert [label for label, _ in targets] == ["single-2", "single-2-wireless", "tree-3x2", "tree-3x2-wireless"]
    assert [graph.medium for _, graph in targets][:2] == ["wired", "wireless"]
    # Described without starting (no manifest): the wireless row's key names the emulator and the medium.
    key = json.loads(calibration.data_plane_of(exp, targets[1][1]))
    assert key["links"] == "linkemu" and key["medium"] == "wireless"
