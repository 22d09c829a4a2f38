"""The state of a run as the dashboard shows it, kept current from the campaign and the store.

Two sources feed it. The campaign's observer callbacks (when the dashboard runs
inside `sdnbench run`) say which trial is running and how many are left. A
follower thread reads the run's store (SQLite in WAL mode, so reading never
blocks the campaign's writes): each newly stored trial's per-second series and
the comparison cells. The same follower serves a finished run, or one another
process is writing (`sdnbench dashboard RUN`), where progress comes from the
store and the experiment file stored with it.

The traffic tools hand their per-second series over when a trial ends, so a
trial's series reach the page when it is stored, not second by second.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from pathlib import Path

from ..runner.observer import CampaignObserver
from .events import EventLog

#: Series points kept per metric for pages that connect later (and for /metrics).
POINTS_KEPT = 20000


def trial_label(controller: str, topology: str, workload: str, params: dict, repetition: int) -> str:
    """How a trial is named on the page: as the progress lines name it."""
    point = " ".join(f"{k}={v}" for k, v in params.items() if k not in ("openflow", "controller_kind"))
    return " ".join(x for x in (controller, topology, workload, point, f"rep {repetition}") if x)


class LiveRun(CampaignObserver):
    """Progress, current trial, series and cells of one run directory, published to an EventLog."""

    def __init__(self, rundir: Path, poll_s: float = 1.0):
        self.rundir, self.poll_s = Path(rundir), poll_s
        self.log = EventLog()
        self._lock = threading.RLock()
        self.observed = False            # progress comes from a campaign in this process
        self.total: int | None = None
        self.done = self.failed = 0
        self.started = time.time()
        self.finished = False
        self.current: dict | None = None
        self.series: dict[str, deque] = {}   # metric -> (t_unix, value, line, controller)
        self.units: dict[str, str] = {}
        self.cells: list[dict] = []
        self.last_values: dict[tuple, float] = {}   # (trial label, flow, metric) -> last point of the latest trial
        self._seen: dict[str, float | None] = {}     # trial key -> ended_at already read
        self._stored_seconds: list[float] = []
        self._last_end: float | None = None   # of the stored trials, when progress is read from the store
        self._wake, self._stop = threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None

    # -- the campaign's side ---------------------------------------------------
    def campaign_started(self, rundir, total, stored):
        with self._lock:
            self.observed, self.total, self.started = True, total, time.time()
        self._publish_progress()

    def trial_started(self, trial):
        with self._lock:
            self.current = {"label": trial_label(trial.controller.label, trial.topology, trial.workload["name"],
                                                 trial.sweep_point, trial.repetition),
                            "controller": trial.controller.label, "started": time.time(),
                            "expected_s": trial.expected_seconds()}
        self.log.publish("trial", self.current)

    def trial_ended(self, trial, status, seconds, summary):
        with self._lock:
            self.done += 1
            self.failed += status != "ok"
            self.current = None
        self.log.publish("trial", {"label": None, "last": {"status": status, "seconds": seconds, "summary": summary}})
        self._publish_progress()
        self._wake.set()   # read the stored trial now, not at the next poll

    def campaign_ended(self):
        with self._lock:
            self.finished, self.current = True, None
        self._wake.set()
        self._publish_progress()

    # -- state -----------------------------------------------------------------
    def progress(self) -> dict:
        """done, total, failed, seconds elapsed and left, finished."""
        with self._lock:
            done, total = self.done, self.total
            finished = self.finished or (total is not None and done >= total)
            # a run read from its store ran from its first trial's start to its last trial's end
            elapsed = (self._last_end if finished and self._last_end else time.time()) - self.started
            if self.observed:
                per_trial = elapsed / done if done else None
            else:
                per_trial = (sum(self._stored_seconds) / len(self._stored_seconds)) if self._stored_seconds else None
            left = None if per_trial is None or total is None else max(0.0, per_trial * (total - done))
            return {"done": done, "total": total, "failed": self.failed, "elapsed_s": elapsed,
                    "left_s": 0.0 if finished else left, "finished": finished}

    def snapshot(self) -> dict:
        """Everything a page that connects now needs, and the cursor of the first event it has not seen."""
        with self._lock:
            return {"cursor": self.log.cursor, "run": self.rundir.resolve().name, "progress": self.progress(), "current": self.current,
                    "cells": self.cells, "units": dict(self.units),
                    "series": {m: list(pts) for m, pts in self.series.items()}}

    def _publish_progress(self) -> None:
        self.log.publish("progress", self.progress())

    # -- the store's side ------------------------------------------------------
    def start(self) -> "LiveRun":
        """Follow the store in a background thread."""
        self._thread = threading.Thread(target=self._follow, name="dashboard-store", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop following (after a last read)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _follow(self) -> None:
        from ..results.store import DB_NAME, ResultStore

        store = None
        while True:
            stopping = self._stop.is_set()
            if store is None and (self.rundir / DB_NAME).exists():
                store = ResultStore.in_rundir(self.rundir)   # this thread's own connection
            if store is not None:
                try:
                    self.read(store)
                except Exception as exc:   # e.g. the store is locked a moment: try again at the next poll
                    self.log.publish("notice", {"text": f"reading the store: {exc!r}"})
            if stopping:
                break
            self._wake.wait(self.poll_s)
            self._wake.clear()
        if store is not None:
            store.close()

    def read(self, store) -> None:
        """Publish the trials stored since the last read, then the cells if any were new."""
        from ..analysis.compare import compare, to_rows
        from ..analysis.table import shown_metrics
        from ..metrics import describe

        if self.total is None:
            self.total = _planned(store)
        new = [t for t in store.trials() if self._seen.get(t.key, -1.0) != t.ended_at]
        if not new:
            return
        for t in new:
            self._seen[t.key] = t.ended_at
            self._publish_series(store, t, describe)
        cells = compare(store)[0]
        shown = set(shown_metrics(cells))
        rows = [r for r in to_rows(cells) if r["metric"] in shown]
        with self._lock:
            self.cells = rows
            self.log.publish("cells", {"cells": rows})
            if not self.observed:
                trials = store.trials()
                self.done, self.failed = len(trials), sum(t.status != "ok" for t in trials)
                timed = [t for t in trials if t.started_at and t.ended_at]
                self._stored_seconds = [t.ended_at - t.started_at for t in timed]
                if timed:
                    self.started = min(t.started_at for t in timed)
                    self._last_end = max(t.ended_at for t in timed)
                self.finished = not _active(self.rundir)
        if not self.observed:
            self._publish_progress()

    def _publish_series(self, store, trial, describe) -> None:
        """One trial's stored series, on the wall clock (start of the trial + t_s)."""
        label = trial_label(trial.controller, trial.topology, trial.workload, trial.params, trial.repetition)
        t0 = trial.started_at or trial.ended_at or time.time()
        points: dict[str, list] = {}
        last: dict[tuple, float] = {}
        for flow in store.metrics(trial.key) or {}:
            for t_s, name, value in store.series(trial.key, flow):
                if value is not None and math.isfinite(value):
                    points.setdefault(name, []).append((t0 + t_s, value, f"{label} {flow}", trial.controller))
                    last[(label, flow, name)] = value
        self.log.publish("result", {"label": label, "status": trial.status, "error": trial.error})
        with self._lock:   # state and event together, so a snapshot never misses or repeats a point
            self.last_values = last or self.last_values
            for name, pts in points.items():
                self.units[name] = describe(name).unit
                self.series.setdefault(name, deque(maxlen=POINTS_KEPT)).extend(pts)
            if points:
                self.log.publish("series", {"label": label, "units": {n: self.units[n] for n in points},
                                            "points": points})


def _planned(store) -> int | None:
    """How many trials the stored experiment plans (None when it no longer expands here)."""
    from ..config.loader import parse_experiment
    from ..runner.plan import expand

    campaign = store.campaign()
    if not campaign:
        return None
    try:
        return len(expand(parse_experiment(campaign["experiment_yaml"], Path(campaign["experiment_path"] or "."))))
    except Exception:   # e.g. a GraphML file it names is gone: count what is stored instead
        return None


def _active(rundir: Path) -> bool:
    """Whether a campaign is still registered as running in rundir."""
    from ..runner.registry import active_rundirs

    return rundir.resolve() in {p.resolve() for p in active_rundirs()}
