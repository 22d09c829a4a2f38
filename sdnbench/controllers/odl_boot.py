"""Reading an OpenDaylight boot from Karaf's log: ready, failed, still progressing, or stalled.

OpenDaylight's readiness check (infrautils) logs a diagnosis every second while
Karaf boots, e.g. `diag: Booting {INSTALLED=0, RESOLVED=28, ..., WAITING=5,
ACTIVE=328, ...}`, then "System ready" (openflowplugin opens its OpenFlow ports
only after that) or, after 300 s, "diag failure". Some boots of this release
never get there: a Declarative Services component (seen with AAA's H2 store and
openflowplugin's provider) stays "Waiting" and the counts stop changing, which
otherwise costs the whole 300 s. A boot whose counts have not changed for
STALL_S is reported as stalled, so the adapter can start a fresh one at once.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

READY_LINE = "System ready"
FAILED_LINE = "diag failure"    # infrautils' readiness check gave up on a bundle
#: A healthy boot changes its bundle counts every few seconds; this long unchanged is a stall.
STALL_S = 90.0
_DIAG = re.compile(r"checkBundleDiagInfos: Elapsed time \d+s, remaining time \d+s, diag: (\w+ \{[^}]*\})")


class KarafBoot:
    """One boot's log, read as it grows; `state()` says where the boot stands."""

    def __init__(self, log: Path | None, stall_s: float = STALL_S, clock=time.monotonic):
        self.log, self.stall_s, self.clock = log, stall_s, clock
        self._last_diag: str | None = None
        self._since = clock()

    def text(self) -> str:
        """The log so far ('' before Karaf writes it)."""
        try:
            return self.log.read_text(errors="replace") if self.log else ""
        except OSError:
            return ""

    def state(self) -> str:
        """'ready', 'failed', 'stalled' (no progress for stall_s) or 'booting'."""
        text = self.text()
        if READY_LINE in text:
            return "ready"
        if FAILED_LINE in text:
            return "failed"
        diags = _DIAG.findall(text)
        now = self.clock()
        if diags and diags[-1] != self._last_diag:
            self._last_diag, self._since = diags[-1], now
        if self._last_diag is not None and now - self._since >= self.stall_s:
            return "stalled"
        return "booting"

    def diagnosis(self, errors: int = 6) -> str:
        """What a failed boot's log says: its first ERROR lines (the cause comes first, the shutdown's
        errors last), its last readiness diagnosis and the components still waiting."""
        text = self.text().splitlines()
        picked = [line for line in text if "| ERROR |" in line][:errors]
        diags = [line for line in text if "checkBundleDiagInfos:" in line]
        if diags:
            picked.append(diags[-1])
        waiting = [line for line in text if "is waiting for dependencies" in line]
        picked.extend(waiting[-3:])
        return "\n".join(picked or text[-15:])
