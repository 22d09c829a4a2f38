"""What a running campaign tells those who watch it (the live dashboard, a metrics export).

Observers are called from the campaign's thread, between and around trials: they
must return quickly and never raise into the campaign (`Observers` swallows and
reports their errors, so a broken dashboard cannot fail a measurement).
"""

from __future__ import annotations

import sys
from pathlib import Path

from .plan import Trial


class CampaignObserver:
    """Callbacks of one campaign; each does nothing unless overridden."""

    def campaign_started(self, rundir: Path, total: int, stored: int) -> None:
        """The campaign will run total trials; stored were already in the store (resume)."""

    def trial_started(self, trial: Trial) -> None:
        """A trial begins (its workload is about to run)."""

    def trial_ended(self, trial: Trial, status: str, seconds: float, summary: str) -> None:
        """A trial is stored (ok or failed), with its headline or the reason it failed."""

    def campaign_ended(self) -> None:
        """No more trials will run (finished, stopped or interrupted)."""


class Observers(CampaignObserver):
    """Several observers as one; an observer that raises is reported on stderr and the campaign goes on."""

    def __init__(self, *observers: CampaignObserver):
        self.observers = [o for o in observers if o is not None]

    def _each(self, method: str, *args) -> None:
        for o in self.observers:
            try:
                getattr(o, method)(*args)
            except Exception as exc:   # a watcher's bug must not cost a measurement
                print(f"sdnbench: {type(o).__name__}.{method} failed: {exc!r}", file=sys.stderr, flush=True)

    def campaign_started(self, rundir, total, stored):
        self._each("campaign_started", rundir, total, stored)

    def trial_started(self, trial):
        self._each("trial_started", trial)

    def trial_ended(self, trial, status, seconds, summary):
        self._each("trial_ended", trial, status, seconds, summary)

    def campaign_ended(self):
        self._each("campaign_ended")
