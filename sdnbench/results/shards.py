"""Which shard of which experiment a store holds: the `shard` table of results.db.

A shard's store has one row; a merged store has one row per shard merged into
it. Each row names the experiment (hash of the validated file and of the whole
plan), the groups and trial keys dealt to the shard, and the host that ran it.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field

from ..errors import SdnbenchError

SCHEMA = """
CREATE TABLE IF NOT EXISTS shard (
    idx INTEGER PRIMARY KEY, count INTEGER NOT NULL,
    experiment_sha256 TEXT NOT NULL, plan_sha256 TEXT NOT NULL, planned_total INTEGER NOT NULL,
    groups TEXT NOT NULL, trial_keys TEXT NOT NULL,
    host TEXT, index_source TEXT, recorded_at REAL NOT NULL);
"""


@dataclass
class ShardRecord:
    """One shard of a campaign as stored."""

    index: int
    count: int
    experiment_sha256: str
    plan_sha256: str
    planned_total: int                 # trials in the whole plan, every shard together
    groups: list[str]
    trial_keys: list[str]              # the trials dealt to this shard
    host: str = field(default_factory=socket.gethostname)
    index_source: str | None = None    # SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, or None (given)
    recorded_at: float = field(default_factory=time.time)

    def same_experiment(self, other: "ShardRecord") -> bool:
        """Both shards cut the same plan into the same number of pieces."""
        return (self.experiment_sha256, self.plan_sha256, self.count) == (
            other.experiment_sha256, other.plan_sha256, other.count)


def shard_records(conn) -> list[ShardRecord]:
    """The store's shard rows by index (none: an unsharded run, whose store has no shard table)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'shard'").fetchone():
        return []
    return [ShardRecord(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), json.loads(r[6]), r[7], r[8], r[9])
            for r in conn.execute("SELECT idx, count, experiment_sha256, plan_sha256, planned_total, groups, "
                                  "trial_keys, host, index_source, recorded_at FROM shard ORDER BY idx")]


def save_shard(conn, rec: ShardRecord) -> None:
    """Insert one shard row (a merge adds each of its inputs')."""
    conn.executescript(SCHEMA)
    with conn:
        conn.execute("INSERT INTO shard VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (rec.index, rec.count, rec.experiment_sha256, rec.plan_sha256, rec.planned_total,
                      json.dumps(rec.groups), json.dumps(rec.trial_keys), rec.host, rec.index_source,
                      rec.recorded_at))


def claim_shard(conn, rec: ShardRecord, resume: bool, rundir) -> None:
    """Record rec in a new store; on --resume, SdnbenchError unless the store holds exactly this shard."""
    existing = shard_records(conn)
    if not existing:
        if resume and conn.execute("SELECT COUNT(*) FROM trial").fetchone()[0]:
            raise SdnbenchError(f"{rundir} holds an unsharded run; resume it without --shard")
        save_shard(conn, rec)
        return
    if len(existing) > 1:
        raise SdnbenchError(f"{rundir} is a merge of {len(existing)} shards; run each shard into its own directory")
    [old] = existing
    if not old.same_experiment(rec):
        raise SdnbenchError(f"{rundir} holds shard {old.index}/{old.count} of another experiment or plan "
                            f"(experiment {old.experiment_sha256[:12]}, this file {rec.experiment_sha256[:12]}); "
                            f"use another --out")
    if old.index != rec.index:
        raise SdnbenchError(f"{rundir} holds shard {old.index}/{old.count}, not {rec.index}/{rec.count}: "
                            f"resume it with --shard {old.index}/{old.count} or use another --out")


def refuse_unsharded_resume(conn, rundir) -> None:
    """SdnbenchError when a plain --resume targets a shard's store (it would run every group)."""
    existing = shard_records(conn)
    if existing:
        first = existing[0]
        raise SdnbenchError(f"{rundir} holds shard {first.index}/{first.count}; resume it with "
                            f"--shard {first.index}/{first.count} (or --shard auto/{first.count})")
