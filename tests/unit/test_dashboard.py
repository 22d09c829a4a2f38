"""The dashboard's server parts without a browser: listening address, token, state, /metrics, observers."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("httpx", reason="starlette's test client needs httpx (pip install -e '.[test]')")

from starlette.testclient import TestClient  # noqa: E402

from crafted_store import craft  # noqa: E402
from sdnbench.dashboard.app import make_app  # noqa: E402
from sdnbench.dashboard.live import LiveRun  # noqa: E402
from sdnbench.dashboard.server import Dashboard, is_loopback, parse_listen  # noqa: E402
from sdnbench.errors import SdnbenchError  # noqa: E402
from sdnbench.results.store import ResultStore  # noqa: E402
from sdnbench.runner.observer import CampaignObserver, Observers  # noqa: E402


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> LiveRun:
    rundir = craft(tmp_path_factory.mktemp("crafted") / "run")
    run = LiveRun(rundir)
    store = ResultStore.in_rundir(rundir)
    run.read(store)
    store.close()
    return run


def test_listen_addresses():
    assert parse_listen("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_listen("[::1]:0") == ("::1", 0)
    for bad in ("8765", "host:", ":80", "h:99999"):
        with pytest.raises(SdnbenchError, match="HOST:PORT"):
            parse_listen(bad)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.9.9.9")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1") and not is_loopback("example.org")


def test_token_only_off_loopback(tmp_path):
    on_loopback = Dashboard(tmp_path, "127.0.0.1:0")
    try:
        assert on_loopback.token is None and "token" not in on_loopback.url and on_loopback.port > 0
    finally:
        on_loopback.sock.close()
    with pytest.raises(SdnbenchError, match="cannot listen"):
        Dashboard(tmp_path, "192.0.2.1:0")   # not an address of this machine: refused before any token use


def test_token_gate(live):
    client = TestClient(make_app(live, token="s3cret"))
    assert client.get("/api/state").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert client.get("/?token=s3cret").status_code == 200
    assert client.get("/api/state").status_code == 200   # the cookie the page got with ?token=


def test_state_of_a_finished_run(live):
    state = TestClient(make_app(live)).get("/api/state").json()
    assert state["progress"]["done"] == 60 and state["progress"]["total"] == 60 and state["progress"]["failed"] == 6
    assert state["progress"]["finished"] and state["progress"]["left_s"] == 0
    # 3 controllers x 2 topologies x 2 sizes x 5 repetitions x 5 s, less the 6 failed repetitions
    assert len(state["series"]["throughput_bps"]) == (60 - 6) * 5
    cell = next(c for c in state["cells"] if c["controller"] == "osken" and c["topology"] == "single-8"
                and c["params"] == "size_bytes=128" and c["metric"] == "owd_mean_ms")
    assert cell["n"] == 4 and cell["failed_repetitions"] == 1 and cell["unit"] == "ms"


def test_metrics_endpoint(live):
    text = TestClient(make_app(live)).get("/metrics").text
    assert "sdnbench_trials_done 60.0" in text and "sdnbench_trials_failed 6.0" in text
    assert 'sdnbench_cell_mean{controller="ryu",metric="loss_pct",params="size_bytes=128",topology="linear-7",' \
           'unit="%",workload="udp-cbr"}' in text
    assert 'sdnbench_series_last{flow="f0:h1->h8",metric="throughput_bps"' in text


def test_events_start_with_a_snapshot(live):
    live.log.publish("progress", {"done": 1})
    with TestClient(make_app(live)).stream("GET", "/events") as r:
        first = next(r.iter_lines())
        assert first == "event: snapshot"


def test_a_failing_observer_does_not_stop_the_campaign(capsys):
    class Broken(CampaignObserver):
        def trial_started(self, trial):
            raise RuntimeError("boom")

    seen = []

    class Counting(CampaignObserver):
        def trial_started(self, trial):
            seen.append(trial)

    Observers(Broken(), None, Counting()).trial_started("t")
    assert seen == ["t"] and "Broken.trial_started failed" in capsys.readouterr().err
