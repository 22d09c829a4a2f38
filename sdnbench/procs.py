"""Processes sdnbench owns: one way to start them, record them, and stop them.

Controllers, traffic tools and attack senders all start through
`OwnedProcess.spawn`. Each process leads its own session (process group ==
PID), is written to the run's manifest with its start time before its program
runs, and is stopped by escalation: a polite signal to its group, a grace
period, SIGKILL to the group, reap, `released` in the manifest. Nothing is
ever matched by name: no `pkill`, no `killall`.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from .errors import ToolError
from .manifest import Manifest, process_start_time

# Why a gate: Popen only returns a PID once the child has exec'd, so a plain
# spawn-then-record leaves a moment in which a crash of sdnbench leaks a running,
# unrecorded program. Every owned process therefore starts as this shell, which
# waits for one line on stdin and only then execs the real argv (same PID, same
# start time). sdnbench sends the line after the manifest holds the PID and start
# time; if sdnbench dies first, stdin reaches EOF and the gate exits 125 without
# running anything. The program then gets /dev/null as stdin.
_GATE = 'read -r go || exit 125; exec "$@" </dev/null'
GATE_NAME = "sdnbench-gate"


def cpu_set(count: int | None) -> list[int] | None:
    """The first `count` CPUs this process may use, for pinning a controller."""
    if not count:
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if count > len(allowed):
        raise ValueError(f"cpus: {count} asked, this machine has {len(allowed)}")
    return allowed[:count]


def cpus_left_over(count: int | None) -> list[int] | None:
    """The CPUs a controller pinned with cpu_set(count) does not use (None: no pinning, or none left)."""
    if not count:
        return None
    rest = sorted(os.sched_getaffinity(0))[count:]
    return rest or None


def _exited(pidfd: int, timeout_s: float | None = 0.0) -> bool:
    """True once the process behind pidfd has ended, waiting up to timeout_s (None: no limit)."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    ms = None if timeout_s is None else math.ceil(max(0.0, timeout_s) * 1000)
    return bool(poller.poll(ms))


def _signal_group(pidfd: int, pid: int, sig: int) -> None:
    """Signal pid's process group when pid leads one, else (a host without setsid) pid alone.

    Callers make sure pid is still theirs: unreaped (a child), or not yet ended (a
    recorded process, checked right before; Linux hands out PIDs cyclically, so a
    PID is reused only after the counter wrapped, never within that moment). A
    group id is a PID, so while pid is ours no other process can lead group pid.
    """
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            signal.pidfd_send_signal(pidfd, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _check_executable(name: str, env: dict | None, cwd) -> None:
    """FileNotFoundError now, as Popen would raise it, when name cannot be run (the gate would exit 127)."""
    if os.sep in name:
        found = os.access(os.path.join(str(cwd or "."), name), os.X_OK)
    elif env is None:
        found = shutil.which(name) is not None
    else:
        found = shutil.which(name, path=env.get("PATH", os.defpath)) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)


def _sink(target, files: contextlib.ExitStack, mode: str = "wb"):
    """(what Popen gets, the Path when target is one) for a stdout/stderr argument."""
    if target is None:
        return subprocess.DEVNULL, None
    if isinstance(target, Path):
        target.parent.mkdir(parents=True, exist_ok=True)
        return files.enter_context(open(target, mode)), target
    return target, None


class OwnedProcess:
    """A process sdnbench started (or a manifest recorded), pinned by a pidfd so a recycled PID is never hit."""

    def __init__(self, pid: int, start: int | None, argv: list[str], role: str, pidfd: int, *,
                 popen: subprocess.Popen | None = None, manifest: Manifest | None = None,
                 stdout_path: Path | None = None, stderr_path: Path | None = None, label: str | None = None):
        self.pid, self.start, self.argv, self.role = pid, start, argv, role
        self.popen, self.manifest = popen, manifest
        self.stdout_path, self.stderr_path = stdout_path, stderr_path
        self.label = label or f"{Path(argv[0]).name} ({role})"
        self.killed = False          # True once a stop had to escalate to SIGKILL
        self.released = False
        self._pidfd = pidfd
        self._lock = threading.Lock()

    @classmethod
    def spawn(cls, argv: list, role: str, manifest: Manifest | None = None, *,
              popen: Callable[..., subprocess.Popen] | None = None, stdout=None, stderr=None,
              log_path: Path | None = None, env: dict | None = None, cwd=None,
              cpus: list[int] | None = None, label: str | None = None) -> "OwnedProcess":
        """Start argv in its own session, record it in manifest, then let it run.

        popen is how to start: None for a local process (a new session here), or
        a host's popen for a process inside an emulated host; that popen must make
        it a session leader, as Mininet's `mnexec -d` does.
        stdout/stderr: a Path (written), a file, subprocess.PIPE or None (discarded);
        stderr None follows stdout. log_path: both appended to one file.
        """
        argv = [str(a) for a in argv]
        _check_executable(argv[0], env, cwd)
        with contextlib.ExitStack() as files:
            if log_path is not None:
                out, out_path = _sink(Path(log_path), files, "ab")
            else:
                out, out_path = _sink(stdout, files)
            if stderr is None:
                err, err_path = (subprocess.STDOUT if stdout is not None or log_path is not None
                                 else subprocess.DEVNULL), None
            else:
                err, err_path = _sink(stderr, files)
            gate_r, gate_w = os.pipe()
            try:
                start = popen or _local_popen
                child = start(["/bin/sh", "-c", _GATE, GATE_NAME, *argv], stdin=gate_r, stdout=out,
                              stderr=err, env=env, cwd=None if cwd is None else str(cwd))
            except BaseException:
                os.close(gate_w)
                raise
            finally:
                os.close(gate_r)
        pidfd = None
        try:
            # The child is unreaped, so its PID is surely ours while the pidfd opens.
            pidfd = os.pidfd_open(child.pid)
            proc = cls(child.pid, process_start_time(child.pid), argv, role, pidfd, popen=child,
                       manifest=manifest, stdout_path=out_path, stderr_path=err_path, label=label)
            if cpus:
                os.sched_setaffinity(child.pid, cpus)   # inherited by the program the gate execs
            if manifest is not None:
                manifest.process(proc.pid, argv, role, start=proc.start)
        except BaseException:
            os.close(gate_w)   # the gate reads EOF and exits: argv never runs
            child.wait()
            if pidfd is not None:
                os.close(pidfd)
            raise
        try:
            os.write(gate_w, b"go\n")
        except BrokenPipeError:
            pass   # the child ended before the gate (e.g. a host's launcher failed): its exit code says so
        finally:
            os.close(gate_w)
        return proc

    @classmethod
    def adopt(cls, pid: int, start: int | None, argv: list[str] = (), role: str = "recorded") -> "OwnedProcess | None":
        """A recorded process that is not our child, or None when pid no longer is the one that started at start."""
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            return None
        # Read after the pidfd opened: a matching start time means the pidfd holds that very process.
        current = process_start_time(pid)
        if current is None or (start is not None and current != start):
            os.close(pidfd)
            return None
        return cls(pid, current, list(argv) or [str(pid)], role, pidfd)

    def alive(self) -> bool:
        """True while the process runs (an ended child stays unreaped until release())."""
        with self._lock:
            return not self.released and not _exited(self._pidfd)

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait up to timeout_s (None: no limit) for the process to end; True once it has."""
        with self._lock:
            if self.released:
                return True
            fd = os.dup(self._pidfd)   # release() may close the original meanwhile
        try:
            return _exited(fd, timeout_s)
        finally:
            os.close(fd)

    @property
    def returncode(self) -> int | None:
        """The exit code once ended (negative: killed by that signal); None while running or not our child."""
        if self.popen is None:
            return None
        if self.popen.returncode is not None:
            return self.popen.returncode
        try:
            # WNOWAIT: look without reaping, so the PID (and its group id) stay ours until release().
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return self.popen.poll()   # reaped elsewhere (Popen.communicate)
        if info is None:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def send_signal(self, sig: int) -> None:
        """Signal the process group while the PID is still ours."""
        with self._lock:
            if self.released:
                return
            if self.popen is None and _exited(self._pidfd):
                return   # not our child: once it ended, its parent may reap it and free the PID
            _signal_group(self._pidfd, self.pid, sig)

    def stop(self, first: int = signal.SIGTERM, grace_s: float = 5.0) -> int | None:
        """first to the group, SIGKILL after grace_s, reap, release; the exit code. Idempotent."""
        stop_processes([self], first, grace_s)
        return self.returncode

    def release(self) -> None:
        """SIGKILL what is left of the group, reap, and mark the process released in the manifest. Idempotent."""
        with self._lock:
            if self.released:
                return
            if self.popen is not None and self.popen.returncode is None:
                # Unreaped, the leader keeps its PID and group id ours: children that outlived it die too.
                _signal_group(self._pidfd, self.pid, signal.SIGKILL)
                try:
                    self.popen.wait(10)
                except subprocess.TimeoutExpired:
                    return   # stuck in the kernel: stays in the manifest for `sdnbench clean`
            self.released = True
            os.close(self._pidfd)
        if self.manifest is not None:
            self.manifest.released("process", str(self.pid))

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the process's log (its stdout file), for error messages."""
        return "\n".join(self._tail(self.stdout_path, lines))

    def stderr_tail(self, lines: int = 8) -> str:
        """The last lines of the process's stderr (or stdout when stderr is empty), on one line."""
        for path in (self.stderr_path, self.stdout_path):
            tail = self._tail(path, lines)
            if tail:
                return " | ".join(tail)
        return "(no output)"

    @staticmethod
    def _tail(path: Path | None, lines: int) -> list[str]:
        if path is None or not path.exists():
            return []
        return path.read_text(errors="replace").strip().splitlines()[-lines:]

    def fail(self, what: str) -> ToolError:
        """A ToolError naming the process (its label), what went wrong and its stderr tail."""
        return ToolError(f"{self.label}: {what}; stderr: {self.stderr_tail()}")


def _local_popen(argv: list[str], **kwargs) -> subprocess.Popen:
    """How a process on this machine starts: a new session, so it leads its own group."""
    return subprocess.Popen(argv, start_new_session=True, **kwargs)


def stop_processes(procs: Iterable[OwnedProcess], first: int = signal.SIGTERM, grace_s: float = 5.0) -> None:
    """Stop all at once: first to every group, one grace period, SIGKILL the late ones, release all.

    SIGTERM suits controllers; tools that flush their logs or print counts on
    SIGINT (ITGRecv, hping3) get SIGINT.
    """
    procs = list(procs)
    live = [p for p in procs if p.alive()]
    for p in live:
        p.send_signal(first)
    deadline = time.monotonic() + grace_s
    for p in live:
        if not p.wait(deadline - time.monotonic()):
            p.killed = True
            p.send_signal(signal.SIGKILL)
            p.wait(5)
    for p in procs:
        p.release()


def finish_by(procs: Iterable[OwnedProcess], deadline: float | None, first: int = signal.SIGTERM,
              grace_s: float = 5.0) -> list[int | None]:
    """Wait for procs until the monotonic deadline (None: no limit), stop those still running; their exit codes."""
    procs = list(procs)
    for p in procs:
        p.wait(None if deadline is None else deadline - time.monotonic())
    stop_processes(procs, first, grace_s)
    return [p.returncode for p in procs]


class ProcessTracker:
    """The processes one owner started (a run's controllers, a host's tools), recorded in its manifest."""

    def __init__(self, manifest: Manifest | None = None):
        self.manifest = manifest
        self.processes: list[OwnedProcess] = []
        self._lock = threading.Lock()   # attack threads start tools in one host at once

    def spawn(self, argv: list, role: str, **how) -> OwnedProcess:
        """OwnedProcess.spawn with this tracker's manifest; keeps the process to stop it later."""
        proc = OwnedProcess.spawn(argv, role, self.manifest, **how)
        with self._lock:
            for p in self.processes:
                if p.popen is not None and p.popen.returncode is not None:
                    p.release()   # its caller reaped it (Popen.wait): free the pidfd now
            self.processes[:] = [p for p in self.processes if not p.released] + [proc]
        return proc

    def stop_all(self, first: int = signal.SIGTERM, grace_s: float = 5.0) -> None:
        """Stop every process still running (all at once), newest first."""
        with self._lock:
            procs, self.processes[:] = self.processes[::-1], []
        stop_processes(procs, first, grace_s)


def spawn_in(host, argv: list, role: str, manifest: Manifest | None = None, **how) -> OwnedProcess:
    """Start argv inside an emulated host.

    A host that owns its processes (emulation.hosts.RecordedHost has spawn())
    records them in its run's manifest and stops them when it is reaped; other
    handles (the tests' namespaces) are started through their popen and
    recorded in manifest when one is given.
    """
    if hasattr(host, "spawn"):
        return host.spawn(argv, role, **how)
    return OwnedProcess.spawn(argv, f"{role}@{host.name}", manifest, popen=host.popen, **how)


def kill_recorded(pid: int, start: int | None, grace_s: float = 3.0) -> bool:
    """Stop a process group a manifest recorded, if pid is still the process that started at start."""
    proc = OwnedProcess.adopt(pid, start)
    if proc is None:
        return False
    proc.stop(signal.SIGTERM, grace_s)
    if _parent_of(pid) != os.getpid():
        # The pidfd tells when it ended; its parent (init, once the run that started it
        # died) reaps it a moment later. Wait for that, so the PID no longer names it.
        wait_for(lambda: process_start_time(pid) != proc.start, grace_s)
    return True


def _parent_of(pid: int) -> int | None:
    """The parent PID of pid (field 4 of /proc/PID/stat), or None when pid is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[1])


def wait_for(predicate, timeout_s: float, interval_s: float = 0.05) -> bool:
    """Poll predicate until it is true or timeout_s passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval_s)
