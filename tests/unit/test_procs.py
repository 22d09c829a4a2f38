"""CPU sets for pinning, and the lifecycle of every process sdnbench owns."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from sdnbench.emulation.hosts import RecordedHost
from sdnbench.manifest import Manifest, process_start_time
from sdnbench.procs import (OwnedProcess, ProcessTracker, cpu_set, cpus_left_over, finish_by,
                            kill_recorded, spawn_in, wait_for)


def test_controller_and_generator_cpus_are_disjoint_and_cover_the_allowed_set(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert cpu_set(1) == [0] and cpus_left_over(1) == [1, 2, 3]
    assert cpu_set(3) == [0, 1, 2] and cpus_left_over(3) == [3]


def test_nothing_left_over_means_no_generator_pinning(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert cpus_left_over(2) is None
    assert cpus_left_over(None) is None and cpus_left_over(0) is None
    with pytest.raises(ValueError, match="cpus: 3 asked, this machine has 2"):
        cpu_set(3)


# -- the one process lifecycle ------------------------------------------------------

def gone(pid: int) -> bool:
    """True when pid no longer runs (absent, or a zombie nobody reaped yet)."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.fixture
def spawn():
    """OwnedProcess.spawn, with every process it started killed after the test, also a failed one."""
    started = []

    def start(*args, **kwargs):
        started.append(OwnedProcess.spawn(*args, **kwargs))
        return started[-1]

    yield start
    for proc in started:
        proc.release()


def wait_for_file(path, timeout_s: float = 10.0) -> str:
    assert wait_for(lambda: path.exists() and path.read_text().endswith("\n"), timeout_s), f"no {path}"
    return path.read_text().strip()


IGNORE_TERM = """
import pathlib, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
pathlib.Path(sys.argv[1]).write_text("ready\\n")
time.sleep(60)
"""


def test_a_child_ignoring_sigterm_is_killed_after_the_grace(tmp_path, spawn):
    proc = spawn([*python(IGNORE_TERM), str(tmp_path / "ready")], "stubborn")
    wait_for_file(tmp_path / "ready")
    t0 = time.monotonic()
    code = proc.stop(signal.SIGTERM, grace_s=0.5)
    assert time.monotonic() - t0 >= 0.5
    assert code == -signal.SIGKILL and proc.killed and proc.released
    assert gone(proc.pid)


ON_SIGINT_EXIT_5 = """
import signal, sys, time
signal.signal(signal.SIGINT, lambda *_: sys.exit(5))
open(sys.argv[1], "w").write("ready\\n")
time.sleep(60)
"""


def test_a_tool_ends_on_sigint_as_first_signal_without_sigkill(tmp_path, spawn):
    proc = spawn([*python(ON_SIGINT_EXIT_5), str(tmp_path / "ready")], "tool")
    wait_for_file(tmp_path / "ready")
    assert proc.stop(signal.SIGINT, grace_s=10) == 5 and not proc.killed


def test_a_recorded_pid_whose_start_time_differs_is_not_signalled(spawn):
    proc = spawn(["sleep", "60"], "bystander")
    assert OwnedProcess.adopt(proc.pid, proc.start + 1) is None
    assert kill_recorded(proc.pid, proc.start + 1) is False
    time.sleep(0.2)
    assert proc.alive() and not gone(proc.pid)
    assert kill_recorded(proc.pid, proc.start) is True   # the same PID and start: stopped
    assert proc.wait(5) and proc.returncode == -signal.SIGTERM


def test_clean_stops_an_orphan_a_dead_run_left_behind():
    """As after a SIGKILLed run: the recorded process is not our child; once stopped, its PID is free."""
    out = subprocess.run(["sh", "-c", "setsid sleep 60 >/dev/null 2>&1 & echo $!"], capture_output=True,
                         text=True, check=True).stdout
    pid = int(out)
    start = process_start_time(pid)
    try:
        assert kill_recorded(pid, start) is True
        assert process_start_time(pid) != start
    finally:
        if process_start_time(pid) == start:
            os.kill(pid, signal.SIGKILL)


GRANDCHILD = """
import subprocess, sys, time
child = subprocess.Popen(["sh", "-c", 'trap "" TERM; exec sleep 60'])
open(sys.argv[1], "w").write(f"{child.pid}\\n")
time.sleep(60)
"""


def test_a_grandchild_in_the_group_dies_with_the_leader(tmp_path, spawn):
    proc = spawn([*python(GRANDCHILD), str(tmp_path / "child")], "leader")
    grandchild = int(wait_for_file(tmp_path / "child"))
    assert os.getpgid(grandchild) == proc.pid == os.getpgid(proc.pid)
    # The leader ends on SIGTERM at once; the grandchild ignores it and only SIGKILL to the group ends it.
    assert proc.stop(signal.SIGTERM, grace_s=5) == -signal.SIGTERM and not proc.killed
    assert wait_for(lambda: gone(grandchild), 5)


def test_the_manifest_shows_the_process_before_stop_and_released_after(tmp_path):
    manifest = Manifest(tmp_path)
    tracker = ProcessTracker(manifest)
    try:
        proc = tracker.spawn(["sleep", "60"], "sleeper")
        [rec] = manifest.outstanding()
        assert rec["name"] == str(proc.pid) and rec["role"] == "sleeper" and rec["argv"] == ["sleep", "60"]
        assert rec["start"] == process_start_time(proc.pid) == proc.start
    finally:
        tracker.stop_all()
    assert manifest.outstanding() == [] and gone(proc.pid)


class SlowManifest(Manifest):
    """Takes its time to write a process record, and notes whether the program had run meanwhile."""

    def __init__(self, rundir, marker):
        super().__init__(rundir)
        self.marker = marker

    def process(self, pid, argv, role, start=None):
        time.sleep(0.3)
        self.ran_before_record = self.marker.exists()
        super().process(pid, argv, role, start)


def test_the_record_is_written_before_the_program_runs(tmp_path, spawn):
    marker = tmp_path / "ran"
    manifest = SlowManifest(tmp_path, marker)
    spawn(["touch", str(marker)], "tool", manifest)
    assert manifest.ran_before_record is False
    assert wait_for(marker.exists, 5)


class BrokenManifest(Manifest):
    def process(self, pid, argv, role, start=None):
        raise OSError("disk full")


def test_a_failure_to_record_means_the_program_never_runs(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(OSError, match="disk full"):
        OwnedProcess.spawn(["touch", str(marker)], "tool", BrokenManifest(tmp_path))
    time.sleep(0.2)
    assert not marker.exists()


def test_a_missing_program_fails_at_spawn_and_is_not_recorded(tmp_path):
    manifest = Manifest(tmp_path)
    with pytest.raises(FileNotFoundError):
        OwnedProcess.spawn(["sdnbench-no-such-tool"], "tool", manifest)
    assert manifest.outstanding() == []


class SessionHost:
    """A host like a Mininet host or the tests' namespaces: popen starts a session (here without a namespace)."""

    name = "h1"

    def popen(self, argv, **kwargs):
        return subprocess.Popen(argv, start_new_session=True, **kwargs)


def test_a_host_popen_starts_recorded_group_leaders_with_output_files(tmp_path):
    manifest = Manifest(tmp_path)
    proc = spawn_in(SessionHost(), ["sh", "-c", "echo out; echo err >&2; exec sleep 0.5"], "probe", manifest,
                    stdout=tmp_path / "p.out", stderr=tmp_path / "p.err", label="probe on h1")
    assert os.getpgid(proc.pid) == proc.pid
    assert [r["role"] for r in manifest.outstanding()] == ["probe@h1"]
    assert finish_by([proc], time.monotonic() + 10) == [0]
    assert (tmp_path / "p.out").read_text() == "out\n" and proc.stderr_tail() == "err"
    assert str(proc.fail("broke")) == "probe on h1: broke; stderr: err"
    assert manifest.outstanding() == []


def test_finish_by_stops_what_outlives_the_deadline_with_the_first_signal(tmp_path, spawn):
    quick = spawn(["sh", "-c", "exit 4"], "quick")
    slow = spawn([*python(ON_SIGINT_EXIT_5), str(tmp_path / "ready")], "slow")
    wait_for_file(tmp_path / "ready")
    t0 = time.monotonic()
    assert finish_by([quick, slow], t0 + 0.3, signal.SIGINT, 5) == [4, 5]
    assert time.monotonic() - t0 >= 0.3
    assert quick.released and slow.released and not slow.killed


def test_a_process_leading_no_group_is_signalled_alone(spawn):
    """A host whose popen does not start a session: the process shares our group, so only its PID is hit."""
    proc = spawn(["sleep", "60"], "tool", popen=subprocess.Popen)
    assert os.getpgid(proc.pid) == os.getpgid(0) != proc.pid
    assert proc.stop(signal.SIGTERM, 5) == -signal.SIGTERM   # and this test lives on


def test_cpus_pin_the_program(spawn):
    cpu = sorted(os.sched_getaffinity(0))[0]
    proc = spawn(["sleep", "60"], "pinned", cpus=[cpu])
    assert os.sched_getaffinity(proc.pid) == {cpu}


def test_a_recorded_host_records_what_it_starts_and_reaps_it(tmp_path):
    manifest = Manifest(tmp_path)
    host = RecordedHost(SessionHost(), manifest)
    tool = spawn_in(host, ["sleep", "60"], "iperf3-server")
    probe = host.popen(["sh", "-c", "exit 3"])      # what network.reachability does with ping
    assert probe.wait(10) == 3
    assert sorted(r["role"] for r in manifest.outstanding()) == ["iperf3-server@h1", "tool@h1"]
    host.reap()
    assert manifest.outstanding() == [] and gone(tool.pid) and host.started == []
