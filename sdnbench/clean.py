"""`sdnbench clean`: remove what killed runs left behind, exactly and only that.

Reads the manifests of runs registered as active (or the run directories
given), and for each resource still held: kills recorded processes whose PID
still belongs to the same process (start time matches), deletes recorded OVS
bridges and root-namespace interfaces that still exist, and puts back global
Open vSwitch settings a run changed (the poll-mode thread's cores). What a
cluster run created on its workers is removed there over ssh, by the same rules.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .emulation import ovs
from .emulation.cluster.worker import REMOTE_KINDS, Worker, removal_script
from .manifest import MANIFEST_NAME, Manifest, outstanding
from .procs import kill_recorded
from .runner import registry

# Processes first (tools, then controllers, then host shells, whose exit frees
# the namespaces), then bridges, then the interfaces that remain.
_ORDER = {"process": 0, "bridge": 1, "interface": 2, "ovs_setting": 3}


def clean_rundir(rundir: Path, say=print) -> int:
    """Release everything rundir's manifest still holds; returns how many were removed."""
    manifest = Manifest(rundir)
    held = sorted(outstanding(rundir / MANIFEST_NAME), key=lambda r: (_ORDER.get(r["kind"], 9),
                                                                      r.get("role") == "host"))
    removed = 0
    bridges = None
    for rec in held:
        kind, name = rec["kind"], rec["name"]
        if kind == "process":
            if kill_recorded(int(name), rec.get("start")):
                say(f"killed {rec.get('role', 'process')} pid {name} ({' '.join(rec.get('argv', [])[:3])})")
                removed += 1
        elif kind == "bridge":
            bridges = ovs.existing_bridges() if bridges is None else bridges
            if name in bridges:
                ovs.delete_bridge(name)
                say(f"deleted OVS bridge {name}")
                removed += 1
        elif kind == "ovs_setting":
            ovs.set_other_config(name, rec.get("previous"))
            say(f"restored Open vSwitch other_config:{name}")
            removed += 1
        elif kind == "interface":
            if Path(f"/sys/class/net/{name}").exists():
                subprocess.run(["ip", "link", "del", name], capture_output=True)
                say(f"deleted interface {name}")
                removed += 1
        elif kind in REMOTE_KINDS:
            continue   # below, one ssh session per worker, after the local ssh clients are gone
        manifest.released(kind, name)
    return removed + _clean_workers(manifest, [r for r in held if r["kind"] in REMOTE_KINDS], say)


def _clean_workers(manifest: Manifest, held: list[dict], say) -> int:
    """Remove a cluster run's recorded processes, bridges and interfaces on each worker over ssh."""
    removed = 0
    for name in dict.fromkeys(r["worker"] for r in held):
        recs = [r for r in held if r["worker"] == name]
        worker = Worker.from_record(recs[0])
        try:
            out = worker.check(removal_script(recs), "cleaning", 120)
        except Exception as exc:   # an unreachable worker keeps its records for the next clean
            say(f"worker {name}: {exc}")
            continue
        for line in out.splitlines():
            say(f"worker {name}: {line}")
            removed += 1
        for rec in recs:
            manifest.released(rec["kind"], rec["name"])
    return removed


def clean(rundirs: list[Path] | None = None, say=print) -> int:
    """Clean the given run directories, or every registered active run."""
    targets = rundirs if rundirs else registry.active_rundirs()
    total = 0
    for rundir in targets:
        if not (rundir / MANIFEST_NAME).exists():
            registry.unregister(rundir)
            continue
        total += clean_rundir(rundir, say)
        registry.unregister(rundir)
    if total == 0:
        say("nothing to clean")
    return total
