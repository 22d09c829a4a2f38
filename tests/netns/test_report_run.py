"""The report and compare commands on a store made by a real run (switches without a controller)."""

from __future__ import annotations

import re

import pytest

from sdnbench.analysis.compare import compare
from sdnbench.report.figures import build_plots
from sdnbench.results.store import ResultStore
from sdnbench.workloads.traffic.registry import engine_class

from .test_cli_run import sdnbench

pytestmark = pytest.mark.netns

PACKETS = 300

EXPERIMENT = f"""\
name: report-fixture
repetitions: 2
controllers:
  - kind: none
    label: no-sdn
topologies:
  - kind: linear
    switches: 2
workloads:
  - name: udp
    flows:
      - {{proto: udp, rate_pps: 300, count: {PACKETS}, size_bytes: 200}}
    sweep:
      engine: [native, ditg]
cooldown_s: 0
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A real run: one flow measured by the native engine and by D-ITG, two repetitions each."""
    if not engine_class("ditg").availability().ok:
        pytest.skip("D-ITG not installed (make system)")
    base = tmp_path_factory.mktemp("report-run")
    exp = base / "exp.yaml"
    exp.write_text(EXPERIMENT)
    res = sdnbench("run", str(exp), "--out", str(base / "run"))
    assert res.returncode == 0, res.stderr
    trials = ResultStore.in_rundir(base / "run").trials()
    assert all(t.status == "ok" for t in trials), [t.error for t in trials]
    return base / "run"


def test_report_of_a_real_run(run):
    res = sdnbench("report", str(run))
    assert res.returncode == 0, res.stderr
    page = run / "report" / "report.html"
    assert res.stdout.strip() == f"report: {page}"
    html = page.read_text()
    assert "name: report-fixture" in html and "engine: [native, ditg]" in html
    assert len(re.findall(r'<img src="data:image/svg\+xml;base64,', html)) == len(
        list((run / "report" / "figures").glob("*.svg")))
    png = (run / "report" / "figures" / "bars-owd_mean_ms.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_figures_of_a_real_run_show_what_was_measured(run):
    store = ResultStore.in_rundir(run)
    comparison = compare(store)
    plots = {p.name: p for p in build_plots(store, comparison)}
    ax = plots["bars-owd_mean_ms"].figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["linear-2\nengine=native", "linear-2\nengine=ditg"]
    facts = plots["bars-owd_mean_ms"].facts
    assert (facts["bars"], facts["marked"], facts["failed"]) == (2, 0, 0)
    assert "[ms]" in ax.get_ylabel()
    loss = plots["bars-loss_pct"].figure.axes[0]
    assert [p.get_height() for p in loss.patches] == [0.0, 0.0]          # an idle network loses nothing
    delay = [p for p in plots.values() if p.section == "delay"]
    by_engine = {p.title.rsplit("=", 1)[1]: p for p in delay}
    assert by_engine["ditg"].facts["curves"] == 1                         # every packet, from D-ITG's log
    legend = [t.get_text() for t in by_engine["ditg"].figure.legends[0].get_texts()]
    assert legend == [f"no-sdn ({2 * PACKETS} packets)"]
    assert by_engine["native"].facts == {"curves": 0, "quantile_sets": 1}   # percentiles only, said so
    assert "only percentiles" in by_engine["native"].caption
    series = [p for p in plots.values() if p.section == "series"]
    assert series and all(p.facts["panels"][0] == "throughput_bps" for p in series)


def test_compare_a_real_run_with_itself_finds_nothing(run):
    res = sdnbench("compare", str(run), str(run))
    assert res.returncode == 0, res.stderr
    assert "0 regressions, 0 improvements" in res.stdout
