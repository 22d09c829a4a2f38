"""Machine-wide list of runs that may hold resources, for `sdnbench clean`.

A run directory can be anywhere (`--out`), so each active run leaves a pointer
file under the state directory; it is removed when the run ends cleanly.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..emulation.lock import STATE_DIR

ACTIVE_DIR = STATE_DIR / "active"


def _pointer(rundir: Path) -> Path:
    digest = hashlib.sha1(str(Path(rundir).resolve()).encode()).hexdigest()[:16]
    return ACTIVE_DIR / digest


def register(rundir: Path) -> None:
    """Note that rundir may create resources."""
    ACTIVE_DIR.mkdir(parents=True, exist_ok=True)
    _pointer(rundir).write_text(str(Path(rundir).resolve()))


def unregister(rundir: Path) -> None:
    """rundir holds nothing any more."""
    _pointer(rundir).unlink(missing_ok=True)


def active_rundirs() -> list[Path]:
    """Run directories that registered and did not unregister."""
    if not ACTIVE_DIR.is_dir():
        return []
    return [Path(p.read_text().strip()) for p in sorted(ACTIVE_DIR.iterdir()) if p.is_file()]
