"""Fixtures for sdnbench-ofload tests: built binaries, free ports, controllers on loopback."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import struct
import threading
import subprocess
from pathlib import Path

import pytest

from sdnbench.paths import REPO_ROOT, native_tool
from sdnbench.procs import ProcessTracker, wait_for


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:port."""
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="session")
def ofload_bin() -> Path:
    """The built sdnbench-ofload binary (skips when not built)."""
    path = native_tool("sdnbench-ofload")
    if path is None:
        pytest.skip("sdnbench-ofload not built: cargo build --release -p sdnbench-ofload")
    return path


@pytest.fixture(scope="session")
def responder_bin() -> Path:
    """The built ofload-responder binary (skips when not built)."""
    path = REPO_ROOT / "target" / "release" / "ofload-responder"
    if not path.is_file():
        pytest.skip("ofload-responder not built: cargo build --release -p ofload-responder")
    return path


@pytest.fixture
def tracker(tmp_path):
    """A ProcessTracker whose processes are stopped by PID after the test."""
    t = ProcessTracker()
    yield t
    t.stop_all()


def start_listener(tracker: ProcessTracker, argv: list[str], port: int, log: Path, role: str) -> None:
    """Start a controller on port and wait until it accepts connections."""
    proc = tracker.spawn(argv, role=role, log_path=log)
    if not wait_for(lambda: listening(port) or not proc.alive(), 10):
        pytest.fail(f"{role} did not listen on {port}: {proc.log_tail()}")
    if not proc.alive():
        pytest.fail(f"{role} exited: {proc.log_tail()}")


def start_testcontroller(tracker: ProcessTracker, log: Path, options: list[str] = (), scheme: str = "ptcp") -> int:
    """ovs-testcontroller (L2 learning, installs flows) on a free loopback port; returns the port."""
    exe = shutil.which("ovs-testcontroller")
    if exe is None:
        pytest.skip("ovs-testcontroller missing: apt-get install openvswitch-testcontroller")
    port = free_port()
    start_listener(tracker, [exe, *options, f"{scheme}:{port}:127.0.0.1"], port, log, f"testcontroller-{scheme}")
    return port


@pytest.fixture
def testcontroller(tracker, tmp_path) -> int:
    """ovs-testcontroller listening for plain TCP."""
    return start_testcontroller(tracker, tmp_path / "testcontroller.log")


@pytest.fixture
def responder(tracker, tmp_path, responder_bin) -> int:
    """ofload-responder on a free loopback port."""
    port = free_port()
    start_listener(tracker, [str(responder_bin), "-p", str(port)], port, tmp_path / "responder.log", "responder")
    return port


def run_ofload(binary: Path, port: int, *args: str) -> subprocess.CompletedProcess:
    """Run sdnbench-ofload against 127.0.0.1:port with extra flags."""
    return subprocess.run([str(binary), "-c", "127.0.0.1", "-p", str(port), *args],
                          capture_output=True, text=True, timeout=120)


def read_msg(conn: socket.socket) -> bytes:
    """One whole OpenFlow message from conn; ConnectionError at end of stream."""
    def exactly(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = conn.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("switch closed the connection")
            buf += chunk
        return buf
    head = exactly(8)
    return head + exactly(struct.unpack("!H", head[2:4])[0] - 8)


def accept_switches(lsock: socket.socket, n: int, version: int) -> dict[int, socket.socket]:
    """Play controller for n switches up to FEATURES_REPLY; returns {switch index (dpid - 1): connection}."""
    conns = {}
    for _ in range(n):
        c, _ = lsock.accept()
        c.settimeout(5)
        c.sendall(struct.pack("!BBHI", version, 0, 8, 1) + struct.pack("!BBHI", version, 5, 8, 2))
        while True:
            m = read_msg(c)
            if m[1] == 6:  # FEATURES_REPLY
                conns[struct.unpack("!Q", m[8:16])[0] - 1] = c
                break
    return conns


@contextlib.contextmanager
def fake_controller(serve, *args, backlog: int = 4):
    """Run serve(lsock, *args, stop_event) in a thread on a free port; yield the port; stop and join after."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(backlog)
    stop = threading.Event()
    t = threading.Thread(target=serve, args=(lsock, *args, stop), daemon=True)
    t.start()
    try:
        yield lsock.getsockname()[1]
    finally:
        stop.set()
        t.join(5)
        lsock.close()


def write_links(directory: Path, links: list[list[int]]) -> Path:
    """A --topology file with these [switch, port, switch, port] links."""
    path = directory / "topology.json"
    path.write_text(json.dumps({"links": links}))
    return path
