"""InfluxDB export against a real influxd: what `export --influx` and `run --influx` write is read back by
every query of the Grafana dashboard in the repo (dashboards/grafana.json), as Grafana would send it."""

from __future__ import annotations

import json
import statistics
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from sdnbench.cli import main
from sdnbench.report.influx import InfluxObserver, InfluxWriter, line
from sdnbench.results.store import ResultStore

from .run_writer import PLAN, SECONDS, plan_trial, start_run, throughput, write_trial

GRAFANA = Path(__file__).resolve().parents[2] / "dashboards" / "grafana.json"


def influxql(url: str, q: str, db: str = "sdnbench") -> list[dict]:
    """The series an InfluxQL query returns (fails the test on an error)."""
    query = urllib.parse.urlencode({"db": db, "q": q, "epoch": "ms"})
    with urllib.request.urlopen(f"{url}/query?{query}", timeout=10) as r:
        result = json.load(r)["results"][0]
    assert "error" not in result, f"{q}: {result['error']}"
    return result.get("series", [])


def grafana_query(q: str, run: str, metric: str, span_ms: tuple[int, int]) -> str:
    """q with Grafana's variables and macros replaced as Grafana replaces them."""
    return (q.replace("$timeFilter", f"time >= {span_ms[0]}ms and time <= {span_ms[1]}ms")
            .replace("$__interval", "1s").replace("$run", run).replace("$metric", metric))


def written_run(tmp_path: Path) -> Path:
    rundir = tmp_path / "written-run"
    store = start_run(rundir)
    for seq in range(len(PLAN)):
        write_trial(store, seq)
    store.close()
    return rundir


def test_line_protocol_escapes_and_drops_undefined_values():
    assert line("m", {"a b": "x,y", "empty": ""}, {"v": 1.5, "n": 2, "s": 'say "hi"', "nan": float("nan")}, 7) \
        == 'm,a\\ b=x\\,y v=1.5,n=2i,s="say \\"hi\\"" 7'
    assert line("m", {}, {"nan": float("nan")}, 7) is None


def test_grafana_panels_read_back_the_exported_run(tmp_path, influxd):
    rundir = written_run(tmp_path)
    assert main(["export", str(rundir), "--influx", influxd]) == 0
    run = rundir.name
    trials = ResultStore.in_rundir(rundir).trials()
    start = min(t.started_at for t in trials)
    span = (int(start * 1000) - 1000, int(max(t.ended_at for t in trials) * 1000) + SECONDS * 1000)
    dash = json.loads(GRAFANA.read_text())
    variables = {v["name"]: v["query"] for v in dash["templating"]["list"]}
    runs = influxql(influxd, variables["run"])[0]["values"]
    assert [run, ] == [v[1] for v in runs]
    metrics = sorted(v[1] for v in influxql(influxd, variables["metric"].replace("$run", run))[0]["values"])
    assert metrics == ["owd_mean_ms", "throughput_bps"]

    answers: dict[str, dict[str, list]] = {}
    for panel in dash["panels"]:
        for target in panel["targets"]:
            for metric in (metrics if panel.get("repeat") == "metric" else [""]):
                series = influxql(influxd, grafana_query(target["query"], run, metric, span))
                assert series, f"panel {panel['title']!r} ({metric or 'no metric'}) read nothing back"
                answers.setdefault(panel["title"], {})[metric] = series

    def single(title):
        (s,) = answers[title][""]
        return s["values"][0][1]

    assert (single("Trials done"), single("Trials planned"), single("Failed"), single("Time left")) == (4, 4, 0, 0.0)
    assert single("Current trial") == ""
    # the repeated series panel: one line per controller x repetition x flow, each second as stored
    lines = answers["$metric"]["throughput_bps"]
    assert len(lines) == len(PLAN)
    for s in lines:
        ctrl, rep = s["tags"]["controller"], int(s["tags"]["repetition"])
        assert [v[1] for v in s["values"]] == [throughput(ctrl, rep, t) for t in range(SECONDS)]
    assert len(answers["$metric"]["owd_mean_ms"]) == len(PLAN)
    # the cells table: means over repetitions as analysis.compare computes them
    cells = {(s["tags"]["controller"], s["tags"]["metric"]): dict(zip(s["columns"], s["values"][0]))
             for s in answers["Finished cells"][""]}
    for ctrl in ("osken", "ryu"):
        want = statistics.mean(statistics.mean(throughput(ctrl, rep, t) for t in range(SECONDS)) for rep in (1, 2))
        got = cells[(ctrl, "throughput_bps")]
        assert got["mean"] == pytest.approx(want) and got["n"] == 2 and got["failed"] == 0 and got["valid"] is True
    assert {m for _, m in cells} >= {"throughput_bps", "owd_mean_ms", "loss_pct", "host_cpu_max_pct"}


def test_run_influx_writes_each_trial_as_it_ends(tmp_path, influxd):
    rundir = tmp_path / "live-run"
    store = start_run(rundir)
    observer = InfluxObserver(InfluxWriter(influxd, "live"))
    observer.campaign_started(rundir, len(PLAN), 0)
    observer.trial_started(plan_trial(*PLAN[0], 0))
    (progress,) = influxql(influxd, 'SELECT last("trial"), last("done") FROM "sdnbench_progress"', "live")
    assert progress["values"][0][1:] == ["osken single-2 udp-cbr rep 1", 0]
    for seq in range(2):
        write_trial(store, seq, observer)
        (count,) = influxql(influxd, 'SELECT count("value") FROM "sdnbench_series" WHERE "metric" = '
                                     "'throughput_bps'", "live")
        assert count["values"][0][1] == (seq + 1) * SECONDS   # written as the trial ended, not at the end
    observer.campaign_ended()
    (progress,) = influxql(influxd, 'SELECT last("done"), last("total") FROM "sdnbench_progress"', "live")
    assert progress["values"][0][1:] == [2, len(PLAN)]
    store.close()
