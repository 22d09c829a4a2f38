"""Ryu 4.34 (PyPI) with its own simple_switch apps, in its own pinned venv.

Started through launchers/ryu_launcher.py, which restores
eventlet.wsgi.ALREADY_HANDLED before Ryu is imported. spec.app overrides the
app (a Ryu module name, several separated by commas); the default is
ryu.app.simple_switch for OpenFlow 1.0 and ryu.app.simple_switch_13 for 1.3.
With spec.rest_port, ryu.app.ofctl_rest serves REST on 127.0.0.1:rest_port.
"""

from __future__ import annotations

from pathlib import Path

from ..paths import venv_python
from .base import Availability
from .process import ProcessAdapter, launcher, run_version, venv_availability

DEFAULT_APPS = {"1.0": "ryu.app.simple_switch", "1.3": "ryu.app.simple_switch_13"}
# Imports Ryu exactly as the launcher does (ALREADY_HANDLED first) and prints its version.
_CHECK = ("import eventlet.wsgi as w; w.ALREADY_HANDLED = getattr(w, 'ALREADY_HANDLED', object()); "
          "import ryu.cmd.manager; from importlib.metadata import version; print(version('ryu'))")


class RyuAdapter(ProcessAdapter):
    """Ryu's ryu-manager with simple_switch (OF1.0) or simple_switch_13 (OF1.3)."""

    kind = "ryu"
    venv = "ryu"
    openflow_versions = ("1.0", "1.3")

    @classmethod
    def availability(cls) -> Availability:
        """Is the ryu venv there and does Ryu import the way the launcher imports it?"""
        return venv_availability("ryu", ["-c", _CHECK], "Ryu")

    def ryu_apps(self) -> list[str]:
        """Ryu modules to load."""
        apps = (self.spec.app or DEFAULT_APPS[self.spec.openflow]).split(",")
        if self.spec.rest_port and "ryu.app.ofctl_rest" not in apps:
            apps.append("ryu.app.ofctl_rest")
        return apps

    def command(self, rundir: Path) -> list[str]:
        """python ryu_launcher.py <ryu-manager flags> <apps>."""
        argv = [str(venv_python("ryu")), str(launcher("ryu_launcher.py")),
                "--ofp-listen-host", self.spec.host, "--ofp-tcp-listen-port", str(self.spec.port)]
        if self.spec.rest_port:
            # Ryu's REST server binds 0.0.0.0 unless told otherwise.
            argv += ["--wsapi-host", "127.0.0.1", "--wsapi-port", str(self.spec.rest_port)]
        return argv + self.ryu_apps()

    def query_version(self) -> str:
        """Ryu's package version in the venv."""
        return "ryu " + run_version([str(venv_python("ryu")), str(launcher("ryu_launcher.py")),
                                     "--sdnbench-version"])

    @classmethod
    def northbound_problem(cls, spec) -> str | None:
        """Why northbound load cannot run against this controller as specified."""
        return None if spec.rest_port else "ryu serves ofctl_rest only with rest_port (e.g. rest_port: 8080)"


#: The adapter this module registers (sdnbench.controllers.ADAPTER_MODULES).
ADAPTER = RyuAdapter
