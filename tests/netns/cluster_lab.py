"""Cluster workers simulated on this machine: network namespaces, each with its own sshd and Open vSwitch.

Each worker is a namespace `sdnbwN` joined to a Linux bridge in the root namespace; in it run an sshd
(Debian's openssh-server binary with a temporary configuration, host key and authorised root key,
`PermitTunnel yes`, `SetEnv OVS_RUNDIR=...` so every login's ovs-vsctl finds the worker's own database)
and an ovsdb-server + ovs-vswitchd (userspace datapath) in the worker's own run directory. The head's
ssh configuration is a temporary file with its own known_hosts holding every worker's host key, so no
ssh ever prompts and the machine's ~/.ssh is never read or written. Everything the lab starts is an
OwnedProcess stopped by PID; everything it creates is deleted by name in close().
Results from such a lab are functional only: every worker shares one kernel and two cores.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sdnbench.procs import OwnedProcess, stop_processes, wait_for

PREFIX = "sdnbw"
SUBNET = "10.250.77"
SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
SSHD = Path("/usr/sbin/sshd")
PRIVSEP = Path("/run/sshd")   # sshd refuses to start without its (empty) privilege-separation directory


def sh(*argv: str, ns: str | None = None, check: bool = True, env: dict | None = None) -> str:
    """Run a command (in namespace ns); its stdout."""
    full = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    res = subprocess.run(full, capture_output=True, text=True, env=env, timeout=60)
    if check and res.returncode != 0:
        raise RuntimeError(f"{' '.join(full)}: {res.stderr.strip()}")
    return res.stdout


@dataclass
class LabWorker:
    """One simulated worker."""

    name: str
    ns: str
    address: str
    dir: Path
    procs: list[OwnedProcess] = field(default_factory=list)

    @property
    def rundir(self) -> Path:
        return self.dir / "run"

    def env(self) -> dict:
        """The environment of this worker's Open vSwitch tools."""
        import os

        return {**os.environ, "OVS_RUNDIR": str(self.rundir), "OVS_DBDIR": str(self.rundir),
                "OVS_LOGDIR": str(self.rundir)}

    def vsctl(self, *args: str) -> str:
        """ovs-vsctl against this worker's database (from the root namespace: a unix socket)."""
        return sh("ovs-vsctl", "--timeout=10", f"--db=unix:{self.rundir}/db.sock", *args)

    def interfaces(self) -> set[str]:
        """Interface names in the worker's namespace."""
        return {line.split(":")[1].strip().split("@")[0] for line in sh("ip", "-o", "link", ns=self.ns).splitlines()}

    def pids(self) -> set[int]:
        """Processes in the worker's namespace."""
        return {int(p) for p in sh("ip", "netns", "pids", self.ns).split()}


class WorkerLab:
    """Two (or more) workers on this machine; use as a context manager."""

    def __init__(self, count: int = 2, port_base: int = 0):
        self.base = Path(tempfile.mkdtemp(prefix="sdnbench-cluster-"))
        self.base.chmod(0o755)
        self.bridge = f"{PREFIX}br0"
        self.head = f"{SUBNET}.1"
        self.workers = [LabWorker(f"w{i}", f"{PREFIX}{i}", f"{SUBNET}.{10 + i}", self.base / f"w{i}")
                        for i in range(1, count + 1)]
        self.procs: list[OwnedProcess] = []
        self.created_privsep = False
        self.ssh_config = self.base / "ssh_config"

    # -- lifecycle ---------------------------------------------------------
    def __enter__(self) -> "WorkerLab":
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _open(self) -> None:
        leftovers = [w.ns for w in self.workers if Path(f"/run/netns/{w.ns}").exists()]
        if leftovers or Path(f"/sys/class/net/{self.bridge}").exists():
            raise RuntimeError(f"{', '.join(leftovers) or self.bridge} already exist (a killed test's?)")
        if not PRIVSEP.exists():
            PRIVSEP.mkdir(mode=0o755)
            self.created_privsep = True
        sh("ip", "link", "add", self.bridge, "type", "bridge")
        sh("ip", "addr", "add", f"{self.head}/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        self._keys()
        for w in self.workers:
            self._namespace(w)
            self._ovs(w)
            self._sshd(w)

    def close(self) -> None:
        """Stop every process by PID, delete the namespaces, the bridge and the files."""
        stop_processes([p for w in self.workers for p in w.procs] + self.procs, grace_s=5.0)
        for w in self.workers:
            if Path(f"/run/netns/{w.ns}").exists():
                sh("ip", "netns", "del", w.ns, check=False)
            if Path(f"/sys/class/net/{w.ns}-h").exists():
                sh("ip", "link", "del", f"{w.ns}-h", check=False)
        if Path(f"/sys/class/net/{self.bridge}").exists():
            sh("ip", "link", "del", self.bridge, check=False)
        if self.created_privsep:
            shutil.rmtree(PRIVSEP, ignore_errors=True)
        shutil.rmtree(self.base, ignore_errors=True)

    def start(self, argv: list[str], role: str, ns: str | None = None, env: dict | None = None,
              log: Path | None = None) -> OwnedProcess:
        """Start and own a process (in namespace ns); `ip netns exec` execs it, so the PID is the program's."""
        full = (["ip", "netns", "exec", ns] if ns else []) + argv
        proc = OwnedProcess.spawn(full, role, env=env, stdout=log or self.base / f"{role}.log")
        (next(w for w in self.workers if w.ns == ns).procs if ns else self.procs).append(proc)
        return proc

    # -- pieces ------------------------------------------------------------
    def _keys(self) -> None:
        """The head's root key, each worker's host key, known_hosts with all of them, and the ssh config."""
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sdnbench-cluster-test", "-f", str(self.base / "id"))
        shutil.copy(self.base / "id.pub", self.base / "authorized_keys")
        known = []
        for w in self.workers:
            w.dir.mkdir()
            w.rundir.mkdir()
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", w.name, "-f", str(w.dir / "host_key"))
            known.append(f"{w.address} {' '.join((w.dir / 'host_key.pub').read_text().split()[:2])}")
        (self.base / "known_hosts").write_text("\n".join(known) + "\n")
        # Scoped to ssh -F: strict host-key checking against the lab's known_hosts only.
        self.ssh_config.write_text("\n".join([
            "Host *", "  User root", f"  IdentityFile {self.base / 'id'}", "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {self.base / 'known_hosts'}", "  GlobalKnownHostsFile /dev/null",
            "  StrictHostKeyChecking yes", "  CheckHostIP no", "  LogLevel ERROR", ""]))

    def _namespace(self, w: LabWorker) -> None:
        sh("ip", "netns", "add", w.ns)
        sh("ip", "link", "add", f"{w.ns}-h", "type", "veth", "peer", "name", f"{w.ns}-w")
        sh("ip", "link", "set", f"{w.ns}-w", "netns", w.ns)
        sh("ip", "link", "set", f"{w.ns}-h", "master", self.bridge, "up")
        sh("ip", "link", "set", "lo", "up", ns=w.ns)
        sh("ip", "addr", "add", f"{w.address}/24", "dev", f"{w.ns}-w", ns=w.ns)
        sh("ip", "link", "set", f"{w.ns}-w", "up", ns=w.ns)

    def _ovs(self, w: LabWorker) -> None:
        """ovsdb-server and ovs-vswitchd of the worker, in its namespace, with its own run directory."""
        run, env = w.rundir, w.env()
        sh("ovsdb-tool", "create", str(run / "conf.db"), str(SCHEMA))
        self.start(["ovsdb-server", str(run / "conf.db"), f"--remote=punix:{run}/db.sock",
                    f"--unixctl={run}/ovsdb-server.ctl", "--no-chdir"], f"ovsdb-{w.name}", w.ns, env,
                   run / "ovsdb-server.out")
        if not wait_for(lambda: (run / "db.sock").exists(), 10):
            raise RuntimeError(f"{w.name}: ovsdb-server did not start: {(run / 'ovsdb-server.out').read_text()}")
        sh("ovs-vsctl", "--no-wait", f"--db=unix:{run}/db.sock", "init")
        self.start(["ovs-vswitchd", f"unix:{run}/db.sock", f"--unixctl={run}/ovs-vswitchd.ctl", "--no-chdir"],
                   f"vswitchd-{w.name}", w.ns, env, run / "ovs-vswitchd.out")
        if not wait_for(lambda: (run / "ovs-vswitchd.ctl").exists(), 10):
            raise RuntimeError(f"{w.name}: ovs-vswitchd did not start: {(run / 'ovs-vswitchd.out').read_text()}")
        w.vsctl("show")

    def _sshd(self, w: LabWorker) -> None:
        """The worker's sshd: root by key only, tunnels allowed, OVS_RUNDIR in every session."""
        config = w.dir / "sshd_config"
        config.write_text("\n".join([
            f"ListenAddress {w.address}", "Port 22", f"HostKey {w.dir / 'host_key'}", "PidFile none",
            f"AuthorizedKeysFile {self.base / 'authorized_keys'}", "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "UsePAM no", "StrictModes no", "UseDNS no", "PermitTunnel yes", "PrintMotd no", "PrintLastLog no",
            # The cluster edition opens a session per node shell and per remote command, over one master.
            "MaxSessions 1000", "MaxStartups 200:30:400", "LogLevel ERROR",
            f"SetEnv OVS_RUNDIR={w.rundir} OVS_DBDIR={w.rundir} OVS_LOGDIR={w.rundir}", ""]))
        proc = self.start([str(SSHD), "-D", "-e", "-f", str(config)], f"sshd-{w.name}", w.ns,
                          log=w.dir / "sshd.log")

        def listening() -> bool:
            return f"{w.address}:22 " in sh("ss", "-Hltn", ns=w.ns) or not proc.alive()

        if not wait_for(listening, 10) or not proc.alive():
            raise RuntimeError(f"{w.name}: sshd did not start: {(w.dir / 'sshd.log').read_text()}")

    # -- what the test asks ------------------------------------------------
    def cluster_section(self, **extra) -> dict:
        """The experiment's cluster section for these workers (as the config loader returns it)."""
        return {"workers": [{"name": w.name, "address": w.address, "user": None} for w in self.workers],
                "user": "root", "ssh_config": str(self.ssh_config), "placement": "blocks", "switches": None,
                "clock_sync": False, "controller_address": None, **extra}

    def ssh(self, w: LabWorker, command: str) -> str:
        """Run a command on a worker through the lab's ssh configuration (as the head does)."""
        return sh("ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", w.address, command)
