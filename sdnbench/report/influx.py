"""A run in InfluxDB line protocol, written over InfluxDB's HTTP API (`export --influx`, `run --influx`).

Four measurements, tagged with the run directory's name (`run`) and the trial's
identity, so Grafana (dashboards/grafana.json) shows what the built-in page does:

- `sdnbench_series`: every per-second point, at the trial's start + t_s, field `value`,
  tags controller, topology, workload, params, repetition, flow, metric, unit;
- `sdnbench_trial`: one point per trial at its end, fields its metrics (mean over
  flows), `status`, `seconds`, `valid`;
- `sdnbench_cell`: the comparison cells (mean, sd, ci95, median, min, max, n, failed)
  at the time of the latest trial;
- `sdnbench_progress`: done, total, failed, left_s and the running trial's label.

Line protocol has no NaN: an undefined value is left out of its point.
"""

from __future__ import annotations

import base64
import math
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from ..errors import SdnbenchError
from ..runner.observer import CampaignObserver

BATCH = 5000
#: For InfluxDB 2.x's v1-compatible /write, or 1.x behind a proxy that wants a token.
TOKEN_ENV = "SDNBENCH_INFLUX_TOKEN"


def _escape(text: str, chars: str) -> str:
    for c in "\\" + chars:
        text = text.replace(c, "\\" + c)
    return text


def _field(value) -> str | None:
    """A field value in line protocol, or None for one it cannot hold (NaN, infinity, None)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}i"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return None


def line(measurement: str, tags: dict, fields: dict, t_ns: int) -> str | None:
    """One point; empty tags are left out; None when no field has a value."""
    tag_text = "".join(f",{_escape(k, ',= ')}={_escape(str(v), ',= ')}" for k, v in sorted(tags.items())
                       if v not in (None, ""))
    field_text = ",".join(f"{_escape(k, ',= ')}={f}" for k, f in ((k, _field(v)) for k, v in fields.items())
                          if f is not None)
    if not field_text:
        return None
    return f"{_escape(measurement, ', ')}{tag_text} {field_text} {t_ns}"


def _ns(t_unix: float) -> int:
    return int(round(t_unix * 1e9))


def trial_lines(store, trial, run: str) -> list[str]:
    """The series points and the summary point of one stored trial."""
    from ..analysis.compare import params_text
    from ..metrics import describe

    tags = {"run": run, "controller": trial.controller, "topology": trial.topology, "workload": trial.workload,
            "params": params_text(trial.params), "repetition": trial.repetition}
    t0 = trial.started_at or trial.ended_at or time.time()
    out = []
    per_metric: dict[str, list[float]] = {}
    for flow, metrics in store.metrics(trial.key).items():
        for name, value in metrics.items():
            per_metric.setdefault(name, []).append(value)
        for t_s, name, value in store.series(trial.key, flow):
            out.append(line("sdnbench_series", {**tags, "flow": flow, "metric": name, "unit": describe(name).unit},
                            {"value": float(value)}, _ns(t0 + t_s)))
    fields = {name: float(sum(v) / len(v)) for name, v in per_metric.items() if v}
    fields.update(status=trial.status, valid=trial.valid,
                  seconds=float((trial.ended_at or t0) - t0) if trial.started_at else None)
    out.append(line("sdnbench_trial", tags, fields, _ns(trial.ended_at or t0)))
    return [x for x in out if x]


def cell_lines(store, run: str, t_unix: float) -> list[str]:
    """The comparison cells of the store, as they are now."""
    from ..analysis.compare import compare, to_rows

    out = []
    for row in to_rows(compare(store)[0]):
        tags = {k: row[k] for k in ("topology", "workload", "params", "controller", "metric", "unit")}
        fields = {k: row[k] for k in ("mean", "sd", "ci95", "median", "min", "max")}
        fields.update(n=int(row["n"]), failed=int(row["failed_repetitions"]), valid=bool(row["valid"]))
        out.append(line("sdnbench_cell", {"run": run, **tags}, fields, _ns(t_unix)))
    return [x for x in out if x]


def progress_line(run: str, done: int, total: int | None, failed: int, left_s: float | None, trial: str,
                  t_unix: float) -> str:
    """Where the campaign stands."""
    return line("sdnbench_progress", {"run": run},
                {"done": done, "total": total, "failed": failed, "left_s": left_s, "trial": trial}, _ns(t_unix))


def run_lines(store, run: str) -> list[str]:
    """A whole stored run: every trial, the cells and the final progress."""
    trials = store.trials()
    out = [x for t in trials for x in trial_lines(store, t, run)]
    last = max((t.ended_at for t in trials if t.ended_at), default=None) or time.time()
    out += cell_lines(store, run, last)
    out.append(progress_line(run, len(trials), len(trials), sum(t.status != "ok" for t in trials), 0.0, "", last))
    return out


class InfluxWriter:
    """Writes lines to one database of an InfluxDB 1.x HTTP API (url like http://127.0.0.1:8086)."""

    def __init__(self, url: str, db: str = "sdnbench", timeout_s: float = 10.0):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SdnbenchError(f"--influx {url}: expected http(s)://HOST:PORT")
        self.base = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path.rstrip('/')}"
        self.db, self.timeout_s = db, timeout_s
        self.headers = {}
        if parts.username:
            creds = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            self.headers["Authorization"] = "Basic " + base64.b64encode(creds.encode()).decode()
        elif os.environ.get(TOKEN_ENV):
            self.headers["Authorization"] = f"Token {os.environ[TOKEN_ENV]}"

    def _post(self, path: str, query: dict, body: bytes | None = None) -> None:
        req = urllib.request.Request(f"{self.base}{path}?{urllib.parse.urlencode(query)}", data=body or b"",
                                     headers=self.headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s):
                pass
        except urllib.error.HTTPError as exc:
            raise SdnbenchError(f"InfluxDB at {self.base}: {exc.code} {exc.read().decode(errors='replace')[:300]}")
        except OSError as exc:
            raise SdnbenchError(f"InfluxDB at {self.base}: {exc}") from None

    def create_database(self) -> None:
        """CREATE DATABASE (a no-op when it exists)."""
        self._post("/query", {"q": f'CREATE DATABASE "{self.db}"'})

    def write(self, lines: list[str]) -> int:
        """Write lines in batches; returns how many."""
        for i in range(0, len(lines), BATCH):
            self._post("/write", {"db": self.db, "precision": "ns"}, "\n".join(lines[i:i + BATCH]).encode())
        return len(lines)


class InfluxObserver(CampaignObserver):
    """Writes each trial to InfluxDB as soon as it is stored, with the cells and progress (run --influx)."""

    def __init__(self, writer: InfluxWriter):
        self.writer, self.store, self.run = writer, None, ""
        self.total, self.done, self.failed, self.started = None, 0, 0, time.time()

    def campaign_started(self, rundir: Path, total: int, stored: int) -> None:
        from ..results.store import ResultStore

        self.writer.create_database()
        self.store, self.run, self.total, self.started = ResultStore.in_rundir(rundir), Path(rundir).resolve().name, total, \
            time.time()
        self.writer.write([progress_line(self.run, 0, total, 0, None, "", time.time())])

    def trial_started(self, trial) -> None:
        from ..dashboard.live import trial_label

        label = trial_label(trial.controller.label, trial.topology, trial.workload["name"], trial.sweep_point,
                            trial.repetition)
        self.writer.write([progress_line(self.run, self.done, self.total, self.failed, self._left(), label,
                                         time.time())])

    def trial_ended(self, trial, status, seconds, summary) -> None:
        self.done += 1
        self.failed += status != "ok"
        stored = next((t for t in self.store.trials() if t.key == trial.key), None)
        now = time.time()
        lines = trial_lines(self.store, stored, self.run) if stored else []
        lines += cell_lines(self.store, self.run, now)
        lines.append(progress_line(self.run, self.done, self.total, self.failed, self._left(), "", now))
        self.writer.write(lines)

    def campaign_ended(self) -> None:
        if self.store is not None:
            self.store.close()

    def _left(self) -> float | None:
        if not self.done or self.total is None:
            return None
        return (time.time() - self.started) / self.done * (self.total - self.done)
