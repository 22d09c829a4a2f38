"""A worker machine as sdnbench reaches it: ssh with fixed options, and removal of exactly what a run recorded.

Every command goes through the cluster's ssh client configuration with agent forwarding off (the cluster
edition forwards the head's agent to workers as root) and BatchMode on (never a password or host-key
prompt that would hang a run). What a run creates on a worker is recorded in the run's manifest as
`remote_process` (PID and start time on the worker), `remote_bridge` and `remote_interface`, each with the
worker's address and user, so that `sdnbench clean` can remove it after a crash; nothing is ever removed by
name pattern (`mn -c`) or by process name.
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass, replace

from ...errors import CapabilityError

REMOTE_KINDS = ("remote_process", "remote_bridge", "remote_interface")


@dataclass(frozen=True)
class Worker:
    """One worker: where to reach its sshd and as whom."""

    name: str
    address: str
    user: str = "root"
    ssh_config: str | None = None
    control_path: str | None = None   # a running ssh master's socket (one login for all commands)

    @property
    def dest(self) -> str:
        """user@address."""
        return f"{self.user}@{self.address}"

    def ssh_options(self, master: bool = False) -> list[str]:
        """ssh options of every connection; master: those of the connection others share."""
        opts = (["-F", self.ssh_config] if self.ssh_config else []) + ["-q",
            "-o", "BatchMode=yes", "-o", "ForwardAgent=no", "-o", "ConnectTimeout=10"]
        if master:
            return opts + ["-o", "ControlMaster=yes", "-o", "ControlPersist=no", "-N"]
        if self.control_path:
            opts += ["-o", "ControlMaster=no"]
        return opts + (["-o", f"ControlPath={self.control_path}"] if self.control_path else [])

    def ssh(self, tty: bool = False) -> list[str]:
        """The ssh argv up to the remote command (-tt: a pty, as the cluster edition's node shells want)."""
        return ["ssh", *self.ssh_options(), *(["-tt"] if tty else []), self.dest]

    def sudo(self) -> str:
        """What runs a command as root on the worker ('' for root)."""
        return "" if self.user == "root" else "sudo -E "

    def run(self, script: str, timeout_s: float = 60.0) -> subprocess.CompletedProcess:
        """Run a shell script as root on the worker; its output as text."""
        return subprocess.run([*self.ssh(), f"{self.sudo()}sh -c {shlex.quote(script)}"], capture_output=True,
                              text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)

    def check(self, script: str, what: str, timeout_s: float = 60.0) -> str:
        """run() that raises CapabilityError naming the worker when the script fails; its stdout."""
        try:
            res = self.run(script, timeout_s)
        except subprocess.TimeoutExpired:
            raise CapabilityError(f"worker {self.name} ({self.dest}): {what} took over {timeout_s:.0f} s") from None
        if res.returncode != 0:
            raise CapabilityError(f"worker {self.name} ({self.dest}): {what} failed (exit {res.returncode}): "
                                  f"{(res.stderr or res.stdout).strip()[-300:]}")
        return res.stdout

    def vsctl(self, *commands: list[str], timeout: float = 30.0, options: tuple[str, ...] = ()) -> str:
        """ovs-vsctl on the worker, with sdnbench.emulation.ovs.vsctl's signature."""
        from ..ovs import vsctl_argv

        return self.check(shlex.join(vsctl_argv(*commands, timeout=timeout, options=options)), "ovs-vsctl",
                          timeout + 15)

    def record(self) -> dict:
        """The fields a manifest record needs to reach this worker again (without the run's ssh master)."""
        return {"worker": self.name, "address": self.address, "user": self.user, "ssh_config": self.ssh_config}

    @classmethod
    def from_record(cls, rec: dict) -> "Worker":
        """The worker a manifest record names."""
        return cls(rec["worker"], rec["address"], rec.get("user") or "root", rec.get("ssh_config"))

    def with_master(self, control_path: str | None) -> "Worker":
        """The same worker reached through an ssh master's socket."""
        return replace(self, control_path=control_path)


def record_name(worker: str, name: str) -> str:
    """A remote resource's manifest name: unique across workers (PID 42 may exist on each)."""
    return f"{worker}/{name}"


_STAT_FIELD = "sed 's/.*) //' /proc/{pid}/stat 2>/dev/null | cut -d' ' -f{field}"


def removal_script(records: list[dict]) -> str:
    """Shell script removing recorded remote resources that still exist: processes whose PID still has the
    recorded start time (their process group when they lead one), then bridges, then interfaces; one line
    of output per removal."""
    lines = []
    for rec in (r for r in records if r["kind"] == "remote_process"):
        pid, start = int(rec["pid"]), int(rec["start"])
        started, group = _STAT_FIELD.format(pid=pid, field=20), _STAT_FIELD.format(pid=pid, field=3)
        lines.append(f'if [ "$({started})" = "{start}" ]; then if [ "$({group})" = "{pid}" ]; '
                     f'then kill -KILL -- -{pid}; else kill -KILL {pid}; fi; echo "killed process {pid}"; fi')
    for rec in (r for r in records if r["kind"] == "remote_bridge"):
        name = shlex.quote(rec["name"].split("/", 1)[1])
        lines.append(f"if ovs-vsctl --timeout=10 br-exists {name}; then ovs-vsctl --timeout=10 del-br {name} "
                     f"&& echo 'deleted bridge '{name}; fi")
    for rec in (r for r in records if r["kind"] == "remote_interface"):
        name = shlex.quote(rec["name"].split("/", 1)[1])
        lines.append(f"if [ -e /sys/class/net/{name} ]; then ip link del {name} && echo 'deleted interface '{name}; fi")
    return "\n".join(lines + ["true"])


def probe_script(bridges: list[str], interfaces: list[str]) -> str:
    """Shell script printing the worker's boot id, whether it has the kernel datapath, and which of our
    bridge and interface names already exist there (a killed run's, or another tool's)."""
    names = " ".join(shlex.quote(n) for n in interfaces)
    brs = " ".join(shlex.quote(n) for n in bridges)
    return "\n".join([
        "set -e", "command -v mnexec >/dev/null", "command -v ethtool >/dev/null",
        "echo boot_id $(cat /proc/sys/kernel/random/boot_id)",
        "if [ -d /sys/module/openvswitch ]; then echo kernel_datapath yes; else echo kernel_datapath no; fi",
        "ovs-vsctl --timeout=10 list-br > /dev/null",
        f"for b in {brs}; do if ovs-vsctl --timeout=10 br-exists $b; then echo bridge $b; fi; done" if brs else "",
        f"for i in {names}; do if [ -e /sys/class/net/$i ]; then echo interface $i; fi; done" if names else "",
    ])


def parse_probe(out: str) -> dict:
    """boot_id, kernel_datapath (bool) and the existing bridges and interfaces from probe_script's output."""
    found: dict = {"bridges": [], "interfaces": [], "boot_id": None, "kernel_datapath": False}
    for line in out.splitlines():
        word, _, value = line.strip().partition(" ")
        if word == "boot_id":
            found["boot_id"] = value
        elif word == "kernel_datapath":
            found["kernel_datapath"] = value == "yes"
        elif word in ("bridge", "interface"):
            found[word + "s"].append(value)
    return found
