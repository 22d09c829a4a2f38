"""Real tools for the dashboard's tests: Debian's chromium through playwright, and a private influxd."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def free_port() -> int:
    """A loopback TCP port free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def browser():
    """Headless Debian chromium driven by playwright (never a browser playwright downloads)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install chromium; scripts/setup-system.sh)")
    with sync_playwright() as p:
        # --no-sandbox: tests run as root, where chromium's sandbox refuses to start.
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


INFLUXD_CONFIG = """\
reporting-disabled = true
bind-address = "127.0.0.1:{rpc}"
[meta]
  dir = "{dir}/meta"
  logging-enabled = false
[data]
  dir = "{dir}/data"
  wal-dir = "{dir}/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
[http]
  bind-address = "127.0.0.1:{http}"
  log-enabled = false
  pprof-enabled = false
"""


@pytest.fixture
def influxd(tmp_path):
    """A private InfluxDB 1.x on loopback (its own config and data dir), stopped by its PID afterwards."""
    exe = shutil.which("influxd")
    if exe is None:
        pytest.skip("influxd is not installed (apt-get install influxdb; scripts/setup-system.sh)")
    http, rpc = free_port(), free_port()
    conf = tmp_path / "influxdb.conf"
    conf.write_text(INFLUXD_CONFIG.format(dir=tmp_path / "influxdb", rpc=rpc, http=http))
    log = open(tmp_path / "influxd.log", "wb")
    proc = subprocess.Popen([exe, "-config", str(conf)], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, env={**os.environ, "INFLUXDB_DATA_QUERY_LOG_ENABLED": "false"})
    url = f"http://127.0.0.1:{http}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/ping", timeout=1) as r:
                    if r.status == 204:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"influxd did not start: {(tmp_path / 'influxd.log').read_text()[-2000:]}")
                time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
