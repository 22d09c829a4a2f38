"""The ryu-ofctl preset against a real Ryu ofctl_rest on loopback (skips when Ryu's venv is absent)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import urllib.request

import pytest

from sdnbench.paths import venv_python
from sdnbench.procs import wait_for
from sdnbench.workloads import nbi

#: Ryu 4.34 imports eventlet.wsgi.ALREADY_HANDLED, which eventlet ≥0.30.3 dropped.
LAUNCHER = """
import sys
import eventlet.wsgi
if not hasattr(eventlet.wsgi, "ALREADY_HANDLED"):
    eventlet.wsgi.ALREADY_HANDLED = object()
from ryu.cmd import manager
sys.argv = ["ryu-manager", "--ofp-listen-host", "127.0.0.1", "--ofp-tcp-listen-port", sys.argv[1],
            "--wsapi-host", "127.0.0.1", "--wsapi-port", sys.argv[2], "ryu.app.ofctl_rest"]
manager.main()
"""


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str) -> bool:
    """True once the REST server answers."""
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


@pytest.fixture
def ryu_rest(tmp_path):
    """Base URL of a running Ryu with ofctl_rest and no switch; stopped by process group."""
    python = venv_python("ryu")
    if not python.exists():
        pytest.skip(f"Ryu venv not found at {python} (make venvs, or set SDNBENCH_VENVS)")
    ws_port = free_port()
    log = open(tmp_path / "ryu.log", "wb")
    proc = subprocess.Popen([str(python), "-c", LAUNCHER, str(free_port()), str(ws_port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{ws_port}"
    try:
        if not wait_for(lambda: answers(url + "/stats/switches") or proc.poll() is not None, 60, 0.2) \
                or proc.poll() is not None:
            pytest.fail(f"Ryu did not start: {(tmp_path / 'ryu.log').read_text()[-2000:]}")
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        log.close()


def test_ryu_ofctl_preset_on_real_ryu(ryu_rest, apiload_bin, tmp_path):
    spec = nbi.NbiSpec(url=ryu_rest, preset="ryu-ofctl", variables={"dpid": 1}, stages=("const:70rps:2s",))
    res = nbi.run_nbi(spec, tmp_path, binary=apiload_bin)
    s = res.summary
    by_name = {r["name"]: r for r in s["requests"]}
    # Weights 4:2:1 over 140 requests; /stats/switches answers [] with no switch connected,
    # the per-datapath queries answer Ryu's 404 "No such Datapath".
    assert {k: v["sent"] for k, v in by_name.items()} == {"switches": 80, "flows": 40, "desc": 20}
    assert by_name["switches"]["succeeded"] == 80
    assert s["failed_by_reason"] == {"http_404": 60} and s["failed"] == 60
    assert s["sent"] == s["target"] == 140
    assert res.exit_code == 0, "achieved must hold at 70 rps"
