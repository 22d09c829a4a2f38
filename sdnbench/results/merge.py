"""Combine the stores of a campaign's shards into one store that `results`, `report` and `compare` read.

Refused: stores that are not shards, shards of another experiment or plan or
another number of shards, a shard given twice, a trial stored in two stores,
and environments that differ where a measurement depends on it (envmatch.py).
A campaign with shards or trials missing is refused unless allowed; then every
gap is listed. Nothing is written until every check has passed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SdnbenchError
from .envmatch import mismatches, reported
from .shards import ShardRecord, save_shard, shard_records
from .store import DB_NAME, ResultStore

#: Tables copied trial by trial, children after their trial.
TABLES = ("trial", "metric", "series", "raw", "event")


class MergeRefused(SdnbenchError):
    """The stores cannot be combined into one campaign."""


@dataclass
class Shardstore:
    """One input: its run directory, open store and shard rows."""

    rundir: Path
    store: ResultStore
    shards: list[ShardRecord]

    @property
    def name(self) -> str:
        return str(self.rundir)


@dataclass
class MergeResult:
    """What a merge combined and what it lacks."""

    trials: int = 0
    failed: int = 0
    shards: list[int] = field(default_factory=list)
    missing_shards: list[int] = field(default_factory=list)
    missing_trials: int = 0
    missing_keys: list[str] = field(default_factory=list)    # of shards that are present
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing_shards and not self.missing_trials


def open_inputs(rundirs: list[Path]) -> list[Shardstore]:
    """Open every run directory's store; MergeRefused for one that is no shard."""
    inputs = []
    for rundir in rundirs:
        if not (rundir / DB_NAME).exists():
            raise MergeRefused(f"{rundir}: no {DB_NAME} here (is it a shard's run directory?)")
        store = ResultStore.in_rundir(rundir)
        shards = shard_records(store.conn)
        if not shards:
            raise MergeRefused(f"{rundir}: not a shard (run with `sdnbench run FILE --shard I/N`)")
        inputs.append(Shardstore(rundir, store, shards))
    return inputs


def check(inputs: list[Shardstore], ignore_env: set[str] = frozenset()) -> MergeResult:
    """Every check of a merge; MergeRefused naming the first kind of problem found."""
    first = inputs[0]
    ref = first.shards[0]
    for inp in inputs:
        for rec in inp.shards:
            if not rec.same_experiment(ref):
                raise MergeRefused(
                    f"{inp.name} (shard {rec.index}/{rec.count}, experiment {rec.experiment_sha256[:12]}, plan "
                    f"{rec.plan_sha256[:12]}) and {first.name} (shard {ref.index}/{ref.count}, experiment "
                    f"{ref.experiment_sha256[:12]}, plan {ref.plan_sha256[:12]}) are not shards of one campaign: "
                    f"the experiment file, sdnbench's plan or the number of shards differ")
    owner: dict[int, str] = {}
    for inp in inputs:
        for rec in inp.shards:
            if rec.index in owner:
                raise MergeRefused(f"shard {rec.index}/{rec.count} is in both {owner[rec.index]} and {inp.name}; "
                                   f"give one of them (a shard run twice measured its trials twice)")
            owner[rec.index] = inp.name
    stored: dict[str, list] = {inp.name: inp.store.trials() for inp in inputs}
    where: dict[str, str] = {}
    for name, trials in stored.items():
        for t in trials:
            if t.key in where:
                raise MergeRefused(f"trial {t.key} is stored in both {where[t.key]} and {name}; a merge keeps "
                                   f"one measurement of each trial: give only one of these stores")
            where[t.key] = name
    problems = mismatches(stored, ignore_env)
    if problems:
        raise MergeRefused("the shards ran on different environments, so their cells would not be comparable:\n  "
                           + "\n  ".join(problems)
                           + "\n(run every shard on one kind of machine and software image, or name a field "
                             "with --ignore-env FIELD to merge anyway)")
    result = MergeResult(trials=len(where), failed=sum(t.status != "ok" for ts in stored.values() for t in ts),
                         shards=sorted(owner))
    result.missing_shards = [i for i in range(ref.count) if i not in owner]
    planned = [k for inp in inputs for rec in inp.shards for k in rec.trial_keys]
    result.missing_keys = [k for k in planned if k not in where]
    result.missing_trials = ref.planned_total - len(planned) + len(result.missing_keys)
    result.notes = reported(stored)
    hosts = sorted({(rec.index, rec.host) for inp in inputs for rec in inp.shards})
    result.notes.append("hosts: " + ", ".join(f"shard {i} on {host}" for i, host in hosts))
    return result


def merge(rundirs: list[Path], out: Path, allow_incomplete: bool = False,
          ignore_env: set[str] = frozenset()) -> MergeResult:
    """Check the shards' stores and write their union to out/results.db."""
    if len({Path(d).resolve() for d in rundirs}) != len(rundirs):
        raise MergeRefused("a run directory is given twice")
    if out.exists() and any(out.iterdir()):
        raise MergeRefused(f"{out} is not empty; give a new directory for the merged store")
    inputs = open_inputs([Path(d) for d in rundirs])
    try:
        result = check(inputs, ignore_env)
        if not result.complete and not allow_incomplete:
            raise MergeRefused("incomplete campaign: " + gaps(result)
                               + "\n(run or resume the missing shards, or merge anyway with --allow-incomplete)")
        _write(inputs, out)
    finally:
        for inp in inputs:
            inp.store.close()
    return result


def gaps(result: MergeResult) -> str:
    """'shards 2, 3 missing; 10 trials not stored (...)' for a message."""
    parts = []
    if result.missing_shards:
        parts.append(f"shard{'s' if len(result.missing_shards) > 1 else ''} "
                     f"{', '.join(map(str, result.missing_shards))} missing")
    if result.missing_trials:
        listed = ", ".join(result.missing_keys[:5]) + (" ..." if len(result.missing_keys) > 5 else "")
        parts.append(f"{result.missing_trials} planned trials in no store"
                     + (f" (of shards present: {listed})" if listed else ""))
    return "; ".join(parts)


def _write(inputs: list[Shardstore], out: Path) -> None:
    """The merged store: the first input's campaign row, every input's trials with their data and shard rows."""
    out.mkdir(parents=True, exist_ok=True)
    merged = ResultStore.in_rundir(out)
    conn = merged.conn
    try:
        for i, inp in enumerate(inputs):
            conn.execute("ATTACH DATABASE ? AS src", (str(inp.store.path),))
            with conn:
                if i == 0:
                    conn.execute("INSERT INTO campaign SELECT * FROM src.campaign")
                for table in TABLES:
                    columns = ", ".join(r[1] for r in conn.execute(f"PRAGMA main.table_info({table})"))
                    conn.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM src.{table}")
            conn.execute("DETACH DATABASE src")
            for rec in inp.shards:
                save_shard(conn, rec)
        # the earliest shard's start is the campaign's
        with conn:
            conn.execute("UPDATE campaign SET created_at = ?", (min(_created(inp) for inp in inputs),))
    except sqlite3.Error as exc:
        raise SdnbenchError(f"writing {out / DB_NAME}: {exc}") from exc
    finally:
        merged.close()


def _created(inp: Shardstore) -> float:
    campaign = inp.store.campaign()
    return campaign["created_at"] if campaign else float("inf")
