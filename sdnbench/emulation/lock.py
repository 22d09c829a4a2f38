"""One emulated network at a time per machine.

Mininet names interfaces after nodes (s1-eth1) in the root namespace and OVS
bridges after switches, so two networks at once would collide. A run holds
this lock while its network exists; another waits and says whose turn it is.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path

STATE_DIR = Path(os.environ.get("SDNBENCH_STATE_DIR", "/var/lib/sdnbench"))


class NetworkLock:
    """An exclusive flock on the machine's emulation lock file."""

    def __init__(self, path: Path | None = None):
        self.path = path or STATE_DIR / "emulation.lock"
        self._fd: int | None = None

    def acquire(self, timeout_s: float = 3600.0, say=lambda m: print(m, file=sys.stderr)) -> None:
        """Wait for the lock, telling the user who holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout_s
        told = False
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not told:
                    holder = os.pread(self._fd, 64, 0).decode(errors="replace").strip() or "?"
                    say(f"waiting for another sdnbench network (pid {holder}) to finish")
                    told = True
                if time.monotonic() > deadline:
                    raise TimeoutError("another sdnbench network held the machine too long") from None
                time.sleep(0.5)
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, str(os.getpid()).encode(), 0)

    def release(self) -> None:
        """Give the lock up."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
