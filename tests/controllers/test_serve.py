"""`sdnbench controller`: a real controller served until stopped, then gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from sdnbench.controllers.process import port_listening
from sdnbench.manifest import outstanding
from test_controllers_unit import need


def serve(port: int, tmp_path, *extra: str) -> subprocess.Popen:
    """`sdnbench controller testcontroller` on port, in the background."""
    return subprocess.Popen([sys.executable, "-m", "sdnbench.cli", "controller", "testcontroller", "--openflow",
                             "1.0", "--port", str(port), "--dir", str(tmp_path / "ctl"), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ready_line(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    return json.loads(line)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_serves_until_sigterm_then_stops_what_it_started(port, tmp_path):
    need("testcontroller")
    proc = serve(port, tmp_path)
    try:
        ready = ready_line(proc)
        assert ready["ready"] is True and ready["endpoints"]["openflow"] == f"tcp:127.0.0.1:{port}"
        [pid] = ready["pids"]
        assert port_listening("127.0.0.1", port)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        proc.kill()
    assert not pid_alive(pid)
    assert not port_listening("127.0.0.1", port)
    assert outstanding(tmp_path / "ctl" / "manifest.jsonl") == []


def test_duration_ends_it(port, tmp_path):
    need("testcontroller")
    t0 = time.monotonic()
    proc = serve(port, tmp_path, "--duration", "1")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert json.loads(out.splitlines()[0])["ready"] is True
    assert time.monotonic() - t0 >= 1
    assert not port_listening("127.0.0.1", port)


def test_a_controller_that_dies_is_reported(port, tmp_path):
    need("testcontroller")
    proc = serve(port, tmp_path)
    try:
        [pid] = ready_line(proc)["pids"]
        os.kill(pid, signal.SIGKILL)
        assert proc.wait(timeout=15) == 1
        gone = json.loads(proc.stdout.readline())
        assert gone["ready"] is False and "stopped listening" in gone["error"]
    finally:
        proc.kill()


@pytest.mark.parametrize("kind", ["remote", "none"])
def test_nothing_to_start_is_refused(kind, tmp_path):
    out = subprocess.run([sys.executable, "-m", "sdnbench.cli", "controller", kind, "--dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert f"{kind!r} has no process for sdnbench to start" in out.stderr
