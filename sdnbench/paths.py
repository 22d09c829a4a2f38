"""Where sdnbench finds its own installed parts: controller venvs and native tools.

`make demo` installs controller environments into `<repo>/.venvs/<name>`,
controllers built from source (OpenDaylight) into `<repo>/.controllers/<name>`,
and native tools into `<repo>/target/release`. Each can be moved with an
environment variable (SDNBENCH_VENVS, SDNBENCH_CONTROLLERS, SDNBENCH_BIN_DIR)
for installed copies.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def venvs_dir() -> Path:
    """Directory holding one virtualenv per controller (ryu, osken, faucet)."""
    return Path(os.environ.get("SDNBENCH_VENVS", REPO_ROOT / ".venvs"))


def venv_python(name: str) -> Path:
    """The python interpreter of the controller venv `name`."""
    return venvs_dir() / name / "bin" / "python"


def controllers_dir() -> Path:
    """Directory holding controllers built by sdnbench's setup (odl/: OpenDaylight's Karaf)."""
    return Path(os.environ.get("SDNBENCH_CONTROLLERS", REPO_ROOT / ".controllers"))


def native_tool(name: str) -> Path | None:
    """Path of a native sdnbench tool (e.g. sdnbench-tgen), or None when not built."""
    candidates = []
    if os.environ.get("SDNBENCH_BIN_DIR"):
        candidates.append(Path(os.environ["SDNBENCH_BIN_DIR"]) / name)
    candidates.append(REPO_ROOT / "target" / "release" / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    found = shutil.which(name)
    return Path(found) if found else None


def build_hint(name: str) -> str:
    """The command that builds a missing native tool."""
    return f"cargo build --release -p {name}   (or: make build)"
