"""POX from a user's checkout (it is not on PyPI): OpenFlow 1.0 only.

The checkout is spec.options["pox_dir"] or the SDNBENCH_POX_DIR environment
variable; its pox.py runs with Debian's /usr/bin/python3 (or
spec.options["python"]). spec.app is a space-separated list of POX components
(default "forwarding.l2_learning").
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import ControllerError
from .base import Availability
from .process import ProcessAdapter, run_version

ENV = "SDNBENCH_POX_DIR"
DEFAULT_APP = "forwarding.l2_learning"
FIX = f"git clone https://github.com/noxrepo/pox DIR && export {ENV}=DIR"


def pox_python() -> str:
    """The interpreter that runs pox.py: Debian's python3 when present."""
    return "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable


def checkout_problem(path: Path | None) -> str | None:
    """Why path is not a usable POX checkout, or None when it is."""
    if path is None:
        return f"no POX checkout: set {ENV} (or the controller option pox_dir)"
    if not (path / "pox.py").is_file():
        return f"{path} is not a POX checkout (no pox.py)"
    return None


class PoxAdapter(ProcessAdapter):
    """pox.py openflow.of_01 --port=P --address=H forwarding.l2_learning."""

    kind = "pox"
    openflow_versions = ("1.0",)

    @classmethod
    def availability(cls) -> Availability:
        """Is SDNBENCH_POX_DIR a POX checkout?"""
        path = Path(os.environ[ENV]) if os.environ.get(ENV) else None
        problem = checkout_problem(path)
        if problem:
            return Availability(False, problem, FIX)
        return Availability(True, f"POX {git_version(path)} at {path}")

    def pox_dir(self) -> Path:
        """The checkout this adapter runs: the spec's option first, then the environment."""
        given = self.spec.options.get("pox_dir") or os.environ.get(ENV)
        path = Path(given).expanduser() if given else None
        problem = checkout_problem(path)
        if problem:
            raise ControllerError(f"{self.spec.label}: {problem}; fix: {FIX}")
        return path

    def usable(self) -> Availability:
        """Availability that also honours spec.options['pox_dir']."""
        try:
            path = self.pox_dir()
        except ControllerError as exc:
            return Availability(False, str(exc), FIX)
        return Availability(True, f"POX {git_version(path)} at {path}")

    def workdir(self) -> Path:
        """POX runs from its checkout."""
        return self.pox_dir()

    def command(self, rundir: Path) -> list[str]:
        """python3 pox.py openflow.of_01 --port=P --address=H <components>."""
        python = self.spec.options.get("python") or pox_python()
        return [python, str(self.pox_dir() / "pox.py"), "openflow.of_01",
                f"--port={self.spec.port}", f"--address={self.spec.host}",
                *(self.spec.app or DEFAULT_APP).split()]

    def query_version(self) -> str:
        """The checkout's `git describe`."""
        return "pox " + git_version(self.pox_dir())


def git_version(path: Path) -> str:
    """`git describe --tags --always --dirty` of a checkout, or 'unknown'."""
    return run_version(["git", "-C", str(path), "describe", "--tags", "--always", "--dirty"])


#: The adapter this module registers (sdnbench.controllers.ADAPTER_MODULES).
ADAPTER = PoxAdapter
