"""The testbed's own limits: the zero-loss envelope of each topology, packet size and data plane.

With no controller in the way (switches in standalone mode), a UDP flow from
the first host to the last is offered ever higher rates until it loses 0.1 %
or more; the highest rate that lost less is the envelope. Trials offered
more than that measured the testbed, not the controller, and are marked (see
runner/saturation.py). Envelopes are kept per machine in the state directory,
keyed by everything that moves them: kernel, CPU, the data plane's
description (switch kind, datapath, ports, link realisation, versions), the
topology and the packet size.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from .emulation.lock import STATE_DIR

CALIBRATION_FILE = STATE_DIR / "calibration.json"
#: A rate passes when it loses less than this share of its packets (and the sender held it).
LOSS_LIMIT_PCT = 0.1
#: Where the search starts, and the highest rate it tries (the generator's own range is higher).
START_PPS, MAX_PPS = 2_000, 1_000_000
#: The search stops once the failing rate is within this factor of the passing one.
RESOLUTION = 1.1


@dataclass(frozen=True)
class Envelope:
    """The highest rate a topology carried at one packet size with < 0.1 % loss."""

    machine: str
    data_plane: str
    topology: str
    size_bytes: int
    zero_loss_pps: float
    first_lossy_pps: float | None    # the lowest rate that lost 0.1 % or more (None: none did)
    measured_at: float


def machine_key() -> str:
    """What about this machine moves the envelope: kernel, CPU model and count."""
    cpu = "?"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{platform.release()} | {cpu} | {len(os.sched_getaffinity(0))} CPUs"


#: describe() keys that are no part of a data plane's identity: which links are shaped, and how the link
#: emulator's thread was scheduled (known only once it started, so a network described before it starts,
#: as `missing` does, must give the same key as the started one that was calibrated).
NOT_IN_KEY = ("link_shaping", "linkemu_sched", "linkemu_spin_us")


def data_plane_key(described: dict) -> str:
    """A network's data plane as EmulatedNetwork.describe() gives it, the same before and after it starts."""
    return json.dumps({k: v for k, v in described.items() if k not in NOT_IN_KEY}, sort_keys=True)


def load(path: Path | None = None) -> list[Envelope]:
    """Every stored envelope ([] when none)."""
    path = path or CALIBRATION_FILE
    try:
        return [Envelope(**e) for e in json.loads(path.read_text())]
    except (OSError, ValueError, TypeError):
        return []


def save(envelope: Envelope, path: Path | None = None) -> None:
    """Store envelope, replacing an older one of the same machine, data plane, topology and size."""
    path = path or CALIBRATION_FILE
    kept = [e for e in load(path) if (e.machine, e.data_plane, e.topology, e.size_bytes) !=
            (envelope.machine, envelope.data_plane, envelope.topology, envelope.size_bytes)]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([asdict(e) for e in kept + [envelope]], indent=1))
    tmp.replace(path)


def lookup(data_plane: str, topology: str, size_bytes: int, envelopes: list[Envelope] | None = None) -> Envelope | None:
    """This machine's envelope for a data plane, topology and packet size, if calibrated."""
    machine = machine_key()
    for e in envelopes if envelopes is not None else load():
        if (e.machine, e.data_plane, e.topology, e.size_bytes) == (machine, data_plane, topology, size_bytes):
            return e
    return None


def search(passes: Callable[[float], bool], start: float = START_PPS, top: float = MAX_PPS) -> tuple[float, float | None]:
    """(highest passing rate, lowest failing rate) by doubling from start, then bisecting.

    passes(rate) runs one measurement. A start that already fails is halved until one passes
    (or below 1 packet/s, reported as 0).
    """
    low, high = 0.0, None
    rate = min(start, top)
    while high is None:
        if not passes(rate):
            high = rate
        elif rate >= top:
            return rate, None
        else:
            low, rate = rate, min(rate * 2, top)
    while low == 0.0 and high >= 2:
        rate = high / 2
        if passes(rate):
            low = rate
        else:
            high = rate
    while low and high / low > RESOLUTION:
        rate = (low * high) ** 0.5
        if passes(rate):
            low = rate
        else:
            high = rate
    return low, high


def measure(net, size_bytes: int, duration_s: float, workdir: Path, say: Callable[[str], None]) -> tuple[float, float | None]:
    """Search the envelope of a started network (no controller) from its first host to its last."""
    from .workloads.traffic.base import FlowSpec
    from .workloads.traffic.registry import make_engine

    engine = make_engine("native")
    src, dst = net.graph.hosts[0].name, net.graph.hosts[-1].name
    step = [0]

    def passes(rate: float) -> bool:
        step[0] += 1
        flow = FlowSpec(f"cal{step[0]}", src, dst, "udp", size_bytes=size_bytes, rate_pps=round(rate),
                        duration_s=duration_s)
        [res] = engine.run([flow], net.hosts, workdir / f"step{step[0]:02d}")
        loss, ratio = res.metrics.get("loss_pct"), res.metrics.get("tx_rate_ratio") or 0.0
        ok = loss is not None and loss < LOSS_LIMIT_PCT and ratio >= 0.95
        say(f"    {rate:>10,.0f} packets/s: loss {loss if loss is not None else float('nan'):.3f} %, "
            f"sent {ratio:.0%} of the rate -> {'pass' if ok else 'fail'}")
        return ok

    return search(passes)


def calibrate(label: str, graph, network: dict, sizes: list[int], rundir: Path, duration_s: float = 2.0,
              say: Callable[[str], None] = print) -> list[Envelope]:
    """Measure and store the envelopes of one topology (on its medium; `label` as in the trials' rows)
    at each packet size."""
    from .emulation.network import EmulatedNetwork
    from .manifest import Manifest
    from .runner import registry

    rundir.mkdir(parents=True, exist_ok=True)
    registry.register(rundir)
    manifest = Manifest(rundir)
    # Calibration runs standalone switches, which only OpenFlow kinds have (a P4 switch forwards nothing
    # until a controller programs it): with a list of kinds, the first one is measured.
    chosen = network["switch"]
    net = EmulatedNetwork(graph, manifest, network["datapath"], "1.3", "standalone",
                          switch=chosen if isinstance(chosen, str) else chosen[0], links=network["links"])
    out = []
    try:
        net.start()
        if net.reachability([(graph.hosts[0].name, graph.hosts[-1].name)]):
            raise RuntimeError(f"{label}: {graph.hosts[-1].name} not reachable from {graph.hosts[0].name}")
        plane = data_plane_key(net.describe())
        for size in sizes:
            say(f"  {label}, {size} B payload:")
            low, high = measure(net, size, duration_s, rundir / f"{label}-{size}", say)
            env = Envelope(machine_key(), plane, label, size, low, high, time.time())
            save(env)
            out.append(env)
    finally:
        net.stop()
        if not manifest.outstanding():
            registry.unregister(rundir)
    return out


def targets(exp) -> list[tuple[str, object]]:
    """(row label, graph) of every topology of exp on every medium, as the trials' rows have them: a
    wireless row's envelope is measured through its medium."""
    from .media import MEDIA
    from .runner.plan import media, topology_graph
    from .topology import topology_label

    return [(MEDIA[m].label(topology_label(spec)), topology_graph(exp, i, m))
            for i, spec in enumerate(exp.topologies) for m in media(exp)]


def experiment_sizes(exp) -> list[int]:
    """The payload sizes an experiment's rate-limited flows use (sweeps included); 64 B when none is given."""
    sizes = set()
    for w in exp.workloads:
        for f in w.get("flows") or []:
            if f["proto"] != "tcp":
                sizes.add(f["size_bytes"] or 64)
        sizes.update(w.get("sweep", {}).get("size_bytes", []))
    return sorted(sizes)


def data_plane_of(exp, graph) -> str:
    """The data plane key a topology of exp would have (the network is described, not started)."""
    from .emulation.network import EmulatedNetwork

    # Never started, so it needs no manifest: describe() reads the kinds' settings and versions only.
    from .runner.plan import switches

    net = EmulatedNetwork(graph, None, exp.network["datapath"], "1.3", "standalone",
                          lock=False, switch=switches(exp)[0], links=exp.network["links"])
    return data_plane_key(net.describe())


def missing(exp, sizes: list[int] | None = None) -> list[tuple[str, object, list[int]]]:
    """(row label, graph, sizes) of exp's topologies and media that this machine has no envelope for."""
    stored, out = load(), []
    for label, graph in targets(exp):
        plane = data_plane_of(exp, graph)
        todo = [s for s in sizes or experiment_sizes(exp) if lookup(plane, label, s, stored) is None]
        if todo:
            out.append((label, graph, todo))
    return out
