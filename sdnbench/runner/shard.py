"""Split a campaign's groups between N machines: which groups shard I of N runs.

The unit is the group (controller x topology x whether it builds a network):
it owns one controller and one network, so it cannot be cut. Groups are
sorted by their key and dealt round-robin, so every machine computes the same
deal from the same experiment file, whatever order or speed the shards run at.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import SdnbenchError
from .plan import Trial

#: Where job schedulers put the index of an array task, in the order they are looked up.
INDEX_VARIABLES = ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX")
#: More shards than this is surely a typo (the plan's trial limit is far below machines x groups).
MAX_SHARDS = 10_000


class ShardError(SdnbenchError):
    """A --shard value or scheduler index that names no shard."""


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (0-based), and the environment variable the index came from."""

    index: int
    count: int
    source: str | None = None

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def describe(self) -> str:
        """'shard 2/4' and where the index came from."""
        origin = f" (index from {self.source}={self.index})" if self.source else ""
        return f"shard {self}{origin}"


def parse_shard(text: str, index_env: str | None = None, environ: Mapping[str, str] | None = None) -> Shard:
    """A Shard from 'I/N' or 'auto/N'; auto reads index_env, else the first of INDEX_VARIABLES that is set."""
    environ = os.environ if environ is None else environ
    index_text, sep, count_text = text.partition("/")
    if not sep or not count_text.strip().isdigit():
        raise ShardError(f"--shard {text!r}: expected I/N (e.g. 0/4) or auto/N (index from "
                         f"{' or '.join(INDEX_VARIABLES)})")
    count = int(count_text)
    if not 1 <= count <= MAX_SHARDS:
        raise ShardError(f"--shard {text}: N must lie between 1 and {MAX_SHARDS}")
    source = None
    if index_text == "auto" or index_env:
        if index_text not in ("auto", ""):
            raise ShardError(f"--shard {text} with --shard-index-env {index_env}: give auto/{count} to read the "
                             f"index from {index_env}")
        source, index_text = _index_from_env(index_env, environ)
    if not index_text.isdigit():
        where = f"{source}={index_text!r}" if source else f"--shard {text}"
        raise ShardError(f"{where}: the shard index must be a whole number from 0 to {count - 1}")
    index = int(index_text)
    if index >= count:
        where = f"{source}={index}" if source else f"--shard {text}"
        hint = (" (a Slurm array must count from 0: --array=0-" + str(count - 1) + ")"
                if source == "SLURM_ARRAY_TASK_ID" else "")
        raise ShardError(f"{where}: index out of range for {count} shards; expected 0 to {count - 1}{hint}")
    return Shard(index, count, source)


def _index_from_env(name: str | None, environ: Mapping[str, str]) -> tuple[str, str]:
    """(variable, value) of the scheduler's array index; ShardError naming what was looked for."""
    names = (name,) if name else INDEX_VARIABLES
    for var in names:
        value = environ.get(var)
        if value is not None:
            return var, value.strip()
    raise ShardError(f"--shard auto: {' and '.join(names)} {'is' if len(names) == 1 else 'are'} not set; run "
                     f"inside a Slurm array or a Kubernetes Indexed Job, or give the index: --shard I/N")


def group_key(trial: Trial) -> str:
    """The stable name of a trial's group: 'controller|topology|network' (or '|no-network')."""
    controller, topology, needs_network = trial.group
    return f"{controller}|{topology}|{'network' if needs_network else 'no-network'}"


def deal(trials: list[Trial], count: int) -> dict[str, int]:
    """group key -> shard index: groups in key order, dealt round-robin."""
    keys = sorted({group_key(t) for t in trials})
    return {key: i % count for i, key in enumerate(keys)}


def select(trials: list[Trial], shard: Shard) -> list[Trial]:
    """The trials of the groups dealt to shard, in plan order."""
    owner = deal(trials, shard.count)
    return [t for t in trials if owner[group_key(t)] == shard.index]


def experiment_hash(raw: dict) -> str:
    """sha256 of the validated experiment (comments and layout of the file do not count)."""
    return hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()


def plan_hash(trials: list[Trial]) -> str:
    """sha256 of the whole plan's trial keys in order: two shards of one plan agree on it."""
    return hashlib.sha256("\n".join(t.key for t in trials).encode()).hexdigest()


def claim(store, exp, trials: list[Trial], shard: Shard, resume: bool, rundir, say=None) -> list[Trial]:
    """Record the shard in the store (or check it is the one resumed) and return its trials."""
    from ..results.shards import ShardRecord, claim_shard

    mine = select(trials, shard)
    groups = sorted({group_key(t) for t in mine})
    claim_shard(store.conn, ShardRecord(shard.index, shard.count, experiment_hash(exp.raw), plan_hash(trials),
                                        len(trials), groups, [t.key for t in mine], index_source=shard.source),
                resume, rundir)
    total_groups = len({group_key(t) for t in trials})
    line = (f"{shard.describe()}: {len(groups)} of {total_groups} groups, {len(mine)} of {len(trials)} trials"
            + ("" if groups else " (nothing to run: more shards than groups)"))
    (say or (lambda m: print(m, file=sys.stderr, flush=True)))(f"  {line}")
    return mine
