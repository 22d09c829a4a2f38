"""A wireless network in a real run: os-ken manages two access points (Open vSwitch switches) whose
stations reach each other through sdnbench-linkemu's 802.11g media, a saturated station's UDP goodput is
the medium's, and every trial stores the air metrics and the medium in its environment."""

from __future__ import annotations

import json
import sqlite3

import pytest

from sdnbench.controllers import ADAPTERS
from sdnbench.manifest import MANIFEST_NAME, outstanding

from .helpers import skip_unless_built
from .test_cli_run import sdnbench
from .test_linkemu_run import interfaces

pytestmark = pytest.mark.netns

#: One station alone on its medium at 54 Mbit/s, 1,024-byte UDP payloads, short slots (docs/wireless.md).
ONE_STATION_MBPS = 24.86

# linear-2 with 3 hosts: h1 on s1, h2 and h3 on s2. h1 -> h3 crosses s1's medium (h1 alone sends) and
# s2's (its AP alone sends), so each medium carries the flow once. 4,883 packets/s of 1,024 B is
# 40 Mbit/s: more than the medium carries.
EXPERIMENT = """\
name: wireless
repetitions: 1
controllers:
  - kind: osken
topologies:
  - {kind: linear, switches: 2, hosts: 3}
network:
  medium: wireless
  wireless: {rate: best, station_distance_m: 10}
workloads:
  - name: saturate
    flows:
      - {src: h1, dst: h3, proto: udp, size_bytes: 1024, rate_pps: 4883, duration_s: 4}
  - name: reach
    flows:
      - {src: h2, dst: h1, proto: udp, rate_pps: 50, duration_s: 1}
      - {src: h3, dst: h2, proto: udp, rate_pps: 50, duration_s: 1}
cooldown_s: 0
"""


def test_stations_reach_each_other_and_share_their_access_points_medium(tmp_path):
    skip_unless_built("sdnbench-tgen", "sdnbench-linkemu")
    if not ADAPTERS["osken"].availability().ok:
        pytest.skip("os-ken not installed (make controllers)")
    exp = tmp_path / "exp.yaml"
    exp.write_text(EXPERIMENT)
    rundir = tmp_path / "run"
    res = sdnbench("run", str(exp), "--out", str(rundir))
    assert res.returncode == 0, res.stderr
    with sqlite3.connect(rundir / "results.db") as conn:
        trials = conn.execute("SELECT key, workload, status, error, environment FROM trial ORDER BY seq").fetchall()
        # Every host pair the workloads name was pinged both ways before measuring: a failed check fails them.
        assert [(w, s) for _, w, s, _, _ in trials] == [("saturate", "ok"), ("reach", "ok")], trials
        key = trials[0][0]
        metrics = dict(conn.execute("SELECT name, value FROM metric WHERE trial_key = ? AND flow_id = 'links'",
                                    (key,)).fetchall())
        goodput = conn.execute("SELECT value FROM metric WHERE trial_key = ? AND name = 'throughput_bps' "
                               "AND flow_id != 'links'", (key,)).fetchone()[0] / 1e6
        stations = json.loads(conn.execute("SELECT content FROM raw WHERE trial_key = ? AND name = "
                                           "'wifi_stations.json'", (key,)).fetchone()[0])
    env = json.loads(trials[0][4])
    print(f"goodput {goodput:.2f} Mbit/s (closed form {ONE_STATION_MBPS}); air metrics {metrics}")
    assert env["links"] == "linkemu" and env["medium"] == "wireless" and env["wifi_model"] == "dcf"
    assert env["wifi_association"] == {"h1": "s1", "h2": "s2", "h3": "s2"}
    assert goodput == pytest.approx(ONE_STATION_MBPS, rel=0.10)
    assert metrics["wifi_rate_min_mbps"] == metrics["wifi_rate_max_mbps"] == 54
    assert metrics["wifi_airtime_pct"] > 50 and metrics["wifi_queue_drops"] > 0   # saturated: the queue overflows
    assert metrics["wifi_collisions"] < 0.01 * metrics["wifi_attempts"]          # one sender per medium
    up = next(s for s in stations if s["link"] == "h1-s1" and s["way"] == "up")
    assert up["access_point"] == "s1" and up["airtime_share"] > 0.5
    assert outstanding(rundir / MANIFEST_NAME) == []
    assert interfaces() == set()
