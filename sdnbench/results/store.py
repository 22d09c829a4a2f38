"""SQLite store of a campaign: one transaction per trial, so a crash loses nothing measured.

Tables: campaign (the experiment as run), trial (parameters, status, timings,
environment fingerprint), metric (one value per trial x flow x metric),
series (per-interval values), raw (tool outputs, verbatim), event (what
happened during a trial: injected faults, reconnections, health problems).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

DB_NAME = "results.db"

SCHEMA = """
CREATE TABLE IF NOT EXISTS campaign (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL, experiment_path TEXT, experiment_yaml TEXT NOT NULL,
    created_at REAL NOT NULL, sdnbench_version TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trial (
    key TEXT PRIMARY KEY,
    controller TEXT NOT NULL, topology TEXT NOT NULL, workload TEXT NOT NULL,
    params TEXT NOT NULL, repetition INTEGER NOT NULL, seq INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')), error TEXT,
    started_at REAL, ended_at REAL, timings TEXT, environment TEXT, invalid TEXT);
CREATE TABLE IF NOT EXISTS metric (
    trial_key TEXT NOT NULL REFERENCES trial(key) ON DELETE CASCADE,
    flow_id TEXT NOT NULL, engine TEXT NOT NULL, name TEXT NOT NULL, value REAL,
    PRIMARY KEY (trial_key, flow_id, name));
CREATE TABLE IF NOT EXISTS series (
    trial_key TEXT NOT NULL REFERENCES trial(key) ON DELETE CASCADE,
    flow_id TEXT NOT NULL, t_s REAL NOT NULL, name TEXT NOT NULL, value REAL);
CREATE TABLE IF NOT EXISTS raw (
    trial_key TEXT NOT NULL REFERENCES trial(key) ON DELETE CASCADE,
    name TEXT NOT NULL, content TEXT NOT NULL, PRIMARY KEY (trial_key, name));
CREATE TABLE IF NOT EXISTS event (
    trial_key TEXT NOT NULL REFERENCES trial(key) ON DELETE CASCADE,
    t_unix REAL NOT NULL, t_s REAL NOT NULL, kind TEXT NOT NULL, detail TEXT);
CREATE INDEX IF NOT EXISTS series_by_trial ON series (trial_key, flow_id);
"""


class UncataloguedMetric(ValueError):
    """A result names a metric the catalog does not declare (a programming error)."""


@dataclass
class TrialRecord:
    """Everything stored for one trial."""

    key: str
    controller: str
    topology: str
    workload: str
    params: dict
    repetition: int
    seq: int
    status: str
    error: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    timings: dict | None = None
    environment: dict | None = None
    invalid: list[str] | None = None   # why an ok trial measured the testbed, not the controller

    @property
    def valid(self) -> bool:
        """An ok trial whose testbed did not saturate."""
        return self.status == "ok" and not self.invalid


class ResultStore:
    """Open (or create) the database of one run directory."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.conn = sqlite3.connect(self.path)
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.executescript(SCHEMA)
        # Stores written before trials carried validity get the column (NULL: not judged).
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(trial)")}
        if "invalid" not in columns:
            self.conn.execute("ALTER TABLE trial ADD COLUMN invalid TEXT")

    @classmethod
    def in_rundir(cls, rundir: Path) -> "ResultStore":
        """The store of a run directory."""
        return cls(Path(rundir) / DB_NAME)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    # -- writing -------------------------------------------------------------
    def save_campaign(self, name: str, experiment_path: str, experiment_yaml: str, version: str) -> None:
        """Record the experiment once (kept on resume)."""
        with self.conn:
            self.conn.execute(
                "INSERT OR IGNORE INTO campaign VALUES (1, ?, ?, ?, ?, ?)",
                (name, experiment_path, experiment_yaml, time.time(), version))

    def save_trial(self, rec: TrialRecord, flows=(), raw: dict[str, str] | None = None, events=()) -> None:
        """Store a trial and its flows' metrics, series and raw outputs atomically.

        UncataloguedMetric (nothing stored) for a metric sdnbench.metrics does not know: every
        stored value must say its unit and meaning.
        """
        from ..metrics import catalog

        unknown = sorted({k for fr in flows for k in fr.metrics} - set(catalog()))
        if unknown:
            raise UncataloguedMetric(f"metrics {', '.join(unknown)} are not in the catalog (sdnbench.metrics): "
                                     f"declare them in their workload type's metrics")
        with self.conn:
            self.conn.execute("DELETE FROM trial WHERE key = ?", (rec.key,))
            self.conn.execute(
                "INSERT INTO trial VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (rec.key, rec.controller, rec.topology, rec.workload, json.dumps(rec.params, sort_keys=True),
                 rec.repetition, rec.seq, rec.status, rec.error, rec.started_at, rec.ended_at,
                 json.dumps(rec.timings or {}), json.dumps(rec.environment or {}),
                 json.dumps(rec.invalid) if rec.invalid else None))
            for fr in flows:
                self.conn.executemany(
                    "INSERT INTO metric VALUES (?,?,?,?,?)",
                    [(rec.key, fr.flow_id, fr.engine, k, v) for k, v in fr.metrics.items() if v is not None])
                self.conn.executemany(
                    "INSERT INTO series VALUES (?,?,?,?,?)",
                    [(rec.key, fr.flow_id, pt["t_s"], k, v) for pt in fr.series
                     for k, v in pt.items() if k != "t_s" and v is not None])
                for name, content in fr.raw.items():
                    self.conn.execute("INSERT OR REPLACE INTO raw VALUES (?,?,?)", (rec.key, name, content))
            for name, content in (raw or {}).items():
                self.conn.execute("INSERT OR REPLACE INTO raw VALUES (?,?,?)", (rec.key, name, content))
            self.conn.executemany("INSERT INTO event VALUES (?,?,?,?,?)",
                                  [(rec.key, e["t_unix"], e["t_s"], e["kind"], e.get("detail")) for e in events])

    # -- reading -------------------------------------------------------------
    def done_keys(self) -> set[str]:
        """Keys of trials that completed successfully (skipped on resume)."""
        return {r[0] for r in self.conn.execute("SELECT key FROM trial WHERE status = 'ok'")}

    def campaign(self) -> dict | None:
        """The campaign row."""
        row = self.conn.execute("SELECT name, experiment_path, experiment_yaml, created_at, sdnbench_version "
                                "FROM campaign").fetchone()
        if not row:
            return None
        return dict(zip(("name", "experiment_path", "experiment_yaml", "created_at", "version"), row))

    def trials(self) -> list[TrialRecord]:
        """All trials in plan order."""
        rows = self.conn.execute("SELECT * FROM trial ORDER BY seq").fetchall()
        return [TrialRecord(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], r[8], r[9], r[10],
                            json.loads(r[11] or "{}"), json.loads(r[12] or "{}"), json.loads(r[13] or "[]"))
                for r in rows]

    def metrics(self, trial_key: str) -> dict[str, dict[str, float]]:
        """flow_id -> {metric: value} of one trial."""
        out: dict[str, dict[str, float]] = {}
        for flow, name, value in self.conn.execute(
                "SELECT flow_id, name, value FROM metric WHERE trial_key = ?", (trial_key,)):
            out.setdefault(flow, {})[name] = value
        return out

    def series(self, trial_key: str, flow_id: str) -> list[tuple[float, str, float]]:
        """(t_s, metric, value) rows of one flow."""
        return list(self.conn.execute(
            "SELECT t_s, name, value FROM series WHERE trial_key = ? AND flow_id = ? ORDER BY t_s",
            (trial_key, flow_id)))

    def all_series(self):
        """Every series point with its trial's identity, in plan order (for export)."""
        return self.conn.execute(
            "SELECT t.controller, t.topology, t.workload, t.params, t.repetition, s.flow_id, s.t_s, s.name, s.value "
            "FROM series s JOIN trial t ON t.key = s.trial_key ORDER BY t.seq, s.flow_id, s.t_s, s.name")

    def events(self, trial_key: str) -> list[dict]:
        """What happened during one trial, in time order: {t_unix, t_s, kind, detail}."""
        return [dict(zip(("t_unix", "t_s", "kind", "detail"), row)) for row in self.conn.execute(
            "SELECT t_unix, t_s, kind, detail FROM event WHERE trial_key = ? ORDER BY t_unix", (trial_key,))]

    def all_events(self):
        """Every event with its trial's identity, in plan order (for export)."""
        return self.conn.execute(
            "SELECT t.controller, t.topology, t.workload, t.params, t.repetition, e.t_s, e.kind, e.detail "
            "FROM event e JOIN trial t ON t.key = e.trial_key ORDER BY t.seq, e.t_unix")

    def raw(self, trial_key: str) -> dict[str, str]:
        """Raw tool outputs of one trial."""
        return dict(self.conn.execute("SELECT name, content FROM raw WHERE trial_key = ?", (trial_key,)))
