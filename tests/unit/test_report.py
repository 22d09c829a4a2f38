"""The HTML report and its figures, drawn from a crafted store: what each figure shows, not only that it exists."""

from __future__ import annotations

import base64
import json
import re

import pytest

from sdnbench.analysis.compare import compare
from sdnbench.cli import main
from sdnbench.report.figures import build_plots
from sdnbench.report.figures.style import MARKED_HATCH, OKABE_ITO
from sdnbench.results.store import ResultStore

from crafted_store import ALL_FAILED, CONTROLLERS, FLAGGED, ONE_FAILED, craft

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A crafted run with traffic, northbound and southbound rows."""
    return craft(tmp_path_factory.mktemp("crafted") / "run", nbi=True, sbi=True)


@pytest.fixture(scope="module")
def plots(run):
    store = ResultStore.in_rundir(run)
    return {p.name: p for p in build_plots(store, compare(store))}


def bars(ax):
    """The bars of a bar chart (legend patches live in the legend, not on the axes)."""
    from matplotlib.patches import Rectangle

    return [p for p in ax.patches if isinstance(p, Rectangle)]


def test_grouped_bars_one_per_cell_with_failed_cells_marked(plots):
    plot = plots["bars-owd_mean_ms"]
    ax = plot.figure.axes[0]
    drawn = bars(ax)
    # 4 rows x 3 controllers, less the cell whose every repetition failed
    assert len(drawn) == 4 * 3 - 1 == plot.facts["bars"]
    hatched = {p.get_gid() for p in drawn if p.get_hatch() == MARKED_HATCH}
    assert hatched == {"bar osken single-8 udp-cbr size_bytes=128", "bar no-sdn linear-7 udp-cbr size_bytes=128"}
    assert ONE_FAILED[0] in str(hatched) and FLAGGED[0] in str(hatched)
    failed = [t.get_text() for t in ax.texts]
    assert failed == ["failed"] and plot.facts["failed"] == 1            # ryu on linear-7 at 1024 bytes
    assert ALL_FAILED[0] == "ryu"
    # controllers as Okabe-Ito colours, in the run's order
    colours = {p.get_gid().split()[1]: p.get_facecolor() for p in drawn}
    from matplotlib.colors import to_rgba

    assert [colours[c] for c in CONTROLLERS] == [to_rgba(OKABE_ITO[i]) for i in range(3)]


def test_axes_say_what_and_in_which_unit(run, plots):
    ax = plots["bars-owd_mean_ms"].figure.axes[0]
    assert "one-way delay" in ax.get_ylabel() and "[ms]" in ax.get_ylabel()
    assert "lower is better" in ax.get_ylabel()
    assert ax.get_xlabel() == "topology × size_bytes"
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "single-8\nsize_bytes=128", "single-8\nsize_bytes=1024", "linear-7\nsize_bytes=128",
        "linear-7\nsize_bytes=1024"]
    tput = plots["bars-throughput_bps"].figure.axes[0]
    assert "[Mbit/s]" in tput.get_ylabel() and "higher is better" in tput.get_ylabel()
    means = sorted(c.summary.mean for c in compare(ResultStore.in_rundir(run))[0] if c.metric == "throughput_bps")
    heights = sorted(p.get_height() for p in bars(tput))
    assert heights == pytest.approx([m / 1e6 for m in means])     # bit/s drawn in Mbit/s
    assert 4.5 < heights[0] < 5.2                                  # 5000 packets/s of 128 bytes


def test_whiskers_are_the_95_percent_interval(run, plots):
    store = ResultStore.in_rundir(run)
    cell = next(c for c in compare(store)[0] if c.metric == "owd_mean_ms" and c.controller == "ryu"
                and c.row == ("single-8", "udp-cbr", "size_bytes=128"))
    ax = plots["bars-owd_mean_ms"].figure.axes[0]
    spans = [seg[1][1] - seg[0][1] for coll in ax.collections for seg in coll.get_segments()]
    assert any(abs(s - 2 * cell.summary.ci95) < 1e-12 for s in spans)


def test_series_panels_phases_and_attack_window(plots):
    traffic = plots["series-01"]
    assert traffic.facts["panels"] == ["throughput_bps", "owd_mean_ms"]
    assert [ax.get_ylabel() for ax in traffic.figure.axes] == ["throughput [Mbit/s]", "one-way delay [ms]"]
    nbi = next(p for p in plots.values() if p.section == "series" and p.facts["phases"] == ["load", "dos"])
    assert nbi.facts["panels"] == ["throughput_rps", "failed", "latency_p50_ms"]
    ax = nbi.figure.axes[0]
    boundary = [ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == "--"]
    assert boundary == [8.0]                               # the load phase's 8 one-second intervals
    spans = [p.get_x() for p in ax.patches]                # the attack: 2 s to 6 s into the dos phase
    assert spans and all(abs(x - 10.0) < 1e-9 for x in spans)
    assert "attack" in nbi.caption


def test_series_mark_fault_events(plots):
    faulted = plots["series-02"]                      # single-8 at 1024 bytes: osken's controller was killed
    ax = faulted.figure.axes[0]
    dotted = sorted(ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == ":")
    assert dotted == [2.0, 3.2]                       # median over osken's 5 repetitions: 3.0..3.4 s
    assert {t.get_text() for t in ax.texts} == {"kill controller", "switches reconnected"}
    assert "events" in faulted.caption and "events" not in plots["series-01"].caption


def test_delay_distribution_says_it_has_percentiles_only(plots):
    delay = [p for p in plots.values() if p.section == "delay"]
    assert len(delay) == 4                                  # every traffic row (native flows)
    assert all(p.facts == {"curves": 0, "quantile_sets": p.facts["quantile_sets"]} for p in delay)
    assert "only percentiles" in delay[0].caption
    assert delay[0].figure.axes[0].get_xlabel() == "one-way delay [ms]"


def test_southbound_per_controller_and_openflow_version(plots):
    sb = plots["southbound"]
    rate_ax, lat_ax = sb.figure.axes[:2]
    assert len(bars(rate_ax)) == 2 * 2 == sb.facts["bars"]          # 2 switch counts x 2 controllers
    assert sb.facts["latency_points"] == 2 * 2 * 3
    legend = [t.get_text() for t in sb.figure.legends[0].get_texts()]
    assert legend == ["osken (OpenFlow 1.3)", "pox (OpenFlow 1.0)"]
    assert "k responses/s" in rate_ax.get_ylabel() and "latency [ms]" in lat_ax.get_ylabel()


def test_report_command_writes_a_self_contained_page(run, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out)]) == 0
    html = (out / "report.html").read_text()
    assert "name: crafted" in html and "sweep: {size_bytes: [128, 1024]}" in html    # the experiment file
    images = re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)"', html)
    figures = sorted(p.stem for p in (out / "figures").glob("*.svg"))
    assert len(images) == len(figures) == len(list((out / "figures").glob("*.png"))) >= 8
    assert not re.search(r'(src|href)="(https?:)?//', html)           # nothing fetched from elsewhere
    svg = base64.b64decode(images[0]).decode()
    assert "mean one-way delay" in svg and "failed" in svg             # text stays text in the SVG
    assert "controller did not start" in html and "Stress outcomes" not in html
    assert "6.1.0-test" in html                                        # the environment


def test_exports_carry_units_and_no_nan(tmp_path):
    from sdnbench.analysis.compare import to_csv, to_json
    from sdnbench.results.store import TrialRecord
    from sdnbench.workloads.base import FlowResult

    store = ResultStore.in_rundir(tmp_path)
    store.save_trial(TrialRecord("k", "osken", "single-2", "udp", {}, 1, 0, "ok"),
                     [FlowResult("f0", "native", {"loss_pct": 0.0, "owd_mean_ms": 0.2})])
    cells = compare(store)[0]
    header = to_csv(cells).splitlines()[0].split(",")
    assert header[:7] == ["topology", "workload", "params", "controller", "metric", "unit", "better"]
    # one repetition: no interval, which JSON says with null and why, never NaN
    text = to_json(cells)
    assert "NaN" not in text and "Infinity" not in text
    rows = {r["metric"]: r for r in json.loads(text)}
    assert rows["owd_mean_ms"]["unit"] == "ms" and rows["owd_mean_ms"]["better"] == "lower"
    assert rows["loss_pct"]["ci95"] is None
    assert rows["loss_pct"]["null_reasons"]["ci95"].startswith("one repetition")
