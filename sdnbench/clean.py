"""`sdnbench clean`: remove what killed runs left behind, exactly and only that.

Reads the manifests of runs registered as active (or the run directories
given), and for each resource still held: kills recorded processes whose PID
still belongs to the same process (start time matches), deletes recorded OVS
bridges and root-namespace interfaces that still exist, and puts back global
Open vSwitch settings a run changed (the poll-mode thread's cores).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .emulation import ovs
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
        manifest.released(kind, name)
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
