"""`sdnbench compare` and `results --baseline`: a planted regression is found, noise between runs is not."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest

from sdnbench.analysis.compare import compare
from sdnbench.analysis.significance import REGRESSION, SAME, UNTESTED, compare_runs, welch_p
from sdnbench.cli import main
from sdnbench.results.store import ResultStore

from crafted_store import craft

PLANTED = ("osken", "single-8", 1024, "owd_mean_ms")
PLANTED_KEY = (("single-8", "udp-cbr", "size_bytes=1024"), "osken", "owd_mean_ms")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three runs of one setup: A, B (same distributions, other draws), C (as B, one cell 20 % slower)."""
    base = tmp_path_factory.mktemp("runs")
    return {"a": craft(base / "a", seed=11), "b": craft(base / "b", seed=12),
            "c": craft(base / "c", seed=12, planted={PLANTED: 1.2})}


def cells(path):
    return compare(ResultStore.in_rundir(path))[0]


def test_noise_between_two_runs_of_one_setup_is_no_change(runs):
    changes = compare_runs(cells(runs["a"]), cells(runs["b"]))
    assert len(changes) > 100
    assert {c.verdict for c in changes.values()} == {SAME}
    # without the adjustment for the number of cells, the same noise looks like changes
    raw = compare_runs(cells(runs["a"]), cells(runs["b"]), correction="none")
    assert any(c.significant for c in raw.values())


def test_a_planted_20_percent_regression_is_found_and_only_it(runs):
    changes = compare_runs(cells(runs["a"]), cells(runs["c"]))
    found = {k: c for k, c in changes.items() if c.significant}
    assert list(found) == [PLANTED_KEY]
    c = found[PLANTED_KEY]
    assert c.verdict == REGRESSION and c.ratio == pytest.approx(1.2, abs=0.05)


def test_compare_command_exit_codes(runs, capsys):
    assert main(["compare", str(runs["a"]), str(runs["b"])]) == 0
    assert "0 regressions" in capsys.readouterr().out
    assert main(["compare", str(runs["a"]), str(runs["c"])]) == 1
    out = capsys.readouterr().out
    assert "1 regressions" in out and "regression: owd_mean_ms of single-8 udp-cbr size_bytes=1024 osken" in out
    # a threshold above the planted effect: no longer a regression
    assert main(["compare", str(runs["a"]), str(runs["c"]), "--threshold", "30"]) == 0
    assert main(["compare", str(runs["a"]), str(runs["c"]) + "-missing"]) == 2
    capsys.readouterr()
    assert main(["compare", str(runs["a"]), str(runs["c"]), "--format", "json", "--metric", "owd_mean_ms"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["regressions"] == 1 and {c["unit"] for c in doc["cells"]} == {"ms"}


def test_results_marks_cells_against_a_baseline_column(runs, capsys):
    assert main(["results", str(runs["c"]), "--baseline", "no-sdn", "--metric", "owd_mean_ms"]) == 0
    table = capsys.readouterr().out
    rows = {ln.split()[0] + " " + ln.split()[2]: ln for ln in table.splitlines() if ln.startswith(("single", "linear"))}
    # every controller is slower than forwarding without one (1.2-1.3x; 1.56x where planted): all marked worse
    assert rows["single-8 size_bytes=1024"].count("▼") == 2
    assert "than no-sdn" in table
    assert main(["results", str(runs["c"]), "--baseline", "nox"]) == 2
    assert main(["results", str(runs["c"]), "--baseline", "no-sdn", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out.split("\nexported")[0])
    planted = next(r for r in rows if r["controller"] == "osken" and r["metric"] == "owd_mean_ms"
                   and r["params"] == "size_bytes=1024" and r["topology"] == "single-8")
    assert planted["vs_baseline"] == REGRESSION and planted["ratio_to_baseline"] == pytest.approx(1.56, abs=0.1)


def test_welch_edge_cases():
    assert welch_p((1.0,), (1.0, 2.0)) is None
    assert welch_p((2.0, 2.0), (2.0, 2.0)) == 1.0
    assert welch_p((2.0, 2.0), (3.0, 3.0)) == 0.0
    one = compare_runs([_cell((1.0,))], [_cell((2.0, 2.1))])
    assert [c.verdict for c in one.values()] == [UNTESTED]


def _cell(values):
    from sdnbench.analysis.compare import Cell
    from sdnbench.analysis.stats import summarize

    return Cell(("t", "w", ""), "c", "loss_pct", summarize(list(values)), 0, values)


def test_progress_bar_on_a_terminal_and_lines_elsewhere():
    from sdnbench.runner.campaign import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    trial = SimpleNamespace(sweep_point={"size_bytes": 128}, controller=SimpleNamespace(label="osken"),
                            topology="single-8", workload={"name": "udp"}, repetition=1)
    tty = Terminal()
    bar = Progress(2, stream=tty)
    bar.trial(trial, "ok", 0.1)
    bar.trial(trial, "ok", 0.1)
    bar.note("done")
    text = tty.getvalue()
    assert "2/2 trials" in text and "left]" in text and "\r" in text            # a bar, redrawn in place
    assert "[1/2] osken single-8 udp size_bytes=128 rep 1: ok" in text and "  done\n" in text
    plain = io.StringIO()
    lines = Progress(2, stream=plain)
    lines.trial(trial, "ok", 0.1)
    assert plain.getvalue() == "[1/2] osken single-8 udp size_bytes=128 rep 1: ok (0.1 s) ~0 s left\n"
