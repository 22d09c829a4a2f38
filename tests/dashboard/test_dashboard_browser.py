"""The dashboard page in headless Chromium while a run is being written: progress, the running trial,
series that grow as trials are stored, and cells that appear."""

from __future__ import annotations

import os
import threading

from sdnbench.dashboard.server import Dashboard
from sdnbench.results.store import ResultStore

from .run_writer import PLAN, SECONDS, start_run, write_trial

TIMEOUT_MS = 15000


def test_page_follows_a_run_being_written(tmp_path, browser):
    rundir = tmp_path / "run"
    start_run(rundir).close()
    dash = Dashboard(rundir, "127.0.0.1:0").start()
    live = dash.live
    live.campaign_started(rundir, len(PLAN), 0)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    go, done = threading.Event(), threading.Event()

    def campaign():
        store = ResultStore.in_rundir(rundir)   # the campaign's thread has its own connection, as in a run
        for seq in range(len(PLAN)):
            go.wait(30)
            go.clear()
            write_trial(store, seq, live, run_s=1.5)
            done.set()
        store.close()

    writer = threading.Thread(target=campaign, daemon=True)
    writer.start()
    try:
        page.goto(dash.url)
        page.wait_for_function("document.getElementById('status').textContent === 'running'", timeout=TIMEOUT_MS)
        assert page.text_content("#total") == str(len(PLAN))
        assert page.locator("#cells tbody tr").count() == 0

        go.set()   # trial 1 runs: the page names it, then shows its series and its cells
        page.wait_for_function("document.getElementById('current').dataset.running === '1'", timeout=TIMEOUT_MS)
        assert page.text_content("#current") == "osken single-2 udp-cbr rep 1"
        chart = '.chart[data-metric="throughput_bps"]'
        page.wait_for_selector(f'{chart}[data-points="{SECONDS}"]', timeout=TIMEOUT_MS)
        page.wait_for_function("document.getElementById('done').textContent === '1'", timeout=TIMEOUT_MS)
        page.wait_for_selector("#cells tbody tr", timeout=TIMEOUT_MS)
        assert "osken" in page.text_content("#cells thead")
        assert "ryu" not in page.text_content("#cells thead")
        assert page.locator(f"{chart} polyline").count() == 1

        done.clear()
        go.set()   # trial 2 (ryu): the same chart grows by its points, a ryu column appears
        page.wait_for_selector(f'{chart}[data-points="{2 * SECONDS}"]', timeout=TIMEOUT_MS)
        page.wait_for_function("document.querySelector('#cells thead').textContent.includes('ryu')",
                               timeout=TIMEOUT_MS)
        assert page.locator(f"{chart} polyline").count() == 2
        row = page.locator('#cells tbody tr[data-row^="single-2|udp-cbr||throughput_bps"]')
        # the cells' means as stored: osken 1 001 010 bit/s, ryu 2 001 010 bit/s (one repetition each)
        assert "1 M" in row.text_content() and "2 M" in row.text_content()

        for _ in range(2, len(PLAN)):
            done.clear()
            go.set()
            assert done.wait(30)
        live.campaign_ended()
        page.wait_for_function("document.getElementById('status').textContent === 'finished'", timeout=TIMEOUT_MS)
        page.wait_for_selector(f'{chart}[data-points="{len(PLAN) * SECONDS}"]', timeout=TIMEOUT_MS)
        assert page.text_content("#done") == str(len(PLAN))
        shot = os.environ.get("SDNBENCH_DASHBOARD_SCREENSHOT")
        if shot:   # docs/dashboard.png is taken this way
            page.screenshot(path=shot, full_page=True)
    finally:
        go.set()
        page.close()
        dash.stop()
        writer.join(timeout=30)
