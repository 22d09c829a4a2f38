"""The experimental `cluster:` section: one topology spread over several machines (workers) over ssh.

Checked like every other section (file:line:key errors); what it means at run time is in
sdnbench/emulation/cluster/ and docs/scale-out.md.
"""

from __future__ import annotations

import ipaddress

from ..addresses import is_loopback
from .fields import NAME, REQUIRED, Bool, Context, Field, ListOf, Mapping, Record, Str

PLACEMENTS = ("blocks", "round_robin")
#: Workers one cluster may name: each is an ssh session per node it holds.
MAX_WORKERS = 64


def _address_problem(text: str) -> str | None:
    """An IPv4 or IPv6 address (VXLAN tunnels and the controller address need addresses, not names)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return f"expected an IP address, got {text[:60]!r} (tunnels between workers are set up by address)"
    return None


ADDRESS = Str(predicate=_address_problem)

WORKER = Record("worker", {
    "name": Field(NAME, REQUIRED, "worker name (used in placement and in the environment record)"),
    "address": Field(ADDRESS, REQUIRED, "IP address the head reaches the worker's sshd at; the other workers "
                                        "reach it there too (VXLAN)"),
    "user": Field(Str(), None, "ssh user on this worker (default: cluster.user); not root: passwordless sudo"),
}, doc="A machine that holds part of the topology: sshd, Open vSwitch, Mininet's mnexec, ethtool.")


def _cluster_consistent(cluster: dict, node, ctx: Context, key: str) -> None:
    """Distinct worker names and addresses; explicit placements name known workers."""
    names: set[str] = set()
    addresses: set[str] = set()
    for i, w in enumerate(cluster["workers"]):
        if w["name"] in names:
            ctx.error_at(node, f"{key}.workers[{i}].name", f"worker {w['name']!r} is named twice")
        if str(ipaddress.ip_address(w["address"])) in addresses:
            ctx.error_at(node, f"{key}.workers[{i}].address", f"address {w['address']} is given twice")
        names.add(w["name"])
        addresses.add(str(ipaddress.ip_address(w["address"])))
    for switch, worker in (cluster["switches"] or {}).items():
        if worker not in names:
            ctx.error_at(node, f"{key}.switches.{switch}", f"no worker {worker!r}; workers are "
                                                           f"{', '.join(sorted(names))}")


CLUSTER = Record("cluster", {
    "workers": Field(ListOf(WORKER, max_items=MAX_WORKERS, why="each holds an ssh session per node"), REQUIRED,
                     "machines the topology is spread over"),
    "user": Field(Str(), "root", "ssh user on every worker (a worker's own user overrides it)"),
    "ssh_config": Field(Str(), None, "ssh client configuration file (ssh -F) for every connection to a worker: "
                                     "identity, known_hosts; default: ssh's own"),
    "placement": Field(Str(choices=PLACEMENTS), "blocks",
                       "switches to workers: blocks = contiguous runs of switches per worker (fewest links "
                       "between workers on lines and trees); round_robin = switch i on worker i mod N; "
                       "hosts always go with their switch"),
    "switches": Field(Mapping(Str()), None, "explicit placement, switch name -> worker name (overrides "
                                            "placement for the switches it names)"),
    "clock_sync": Field(Bool(), False, "the workers' clocks are synchronised (PTP, chrony): only then are "
                                       "one-way delays between hosts on different workers measured"),
    "controller_address": Field(ADDRESS, None, "address the workers reach the controller at (default: this "
                                               "machine's source address towards the first worker)"),
}, doc="Experimental: one topology spread over several machines with Mininet's cluster edition, "
       "cross-machine links as VXLAN tunnels (docs/scale-out.md).", extra_check=_cluster_consistent)


def check_cluster_experiment(exp: dict, node, ctx: Context) -> None:
    """What a cluster rules out elsewhere in the file: switch kinds and media it cannot place, controllers on a
    loopback address, and one-way delay without a declared clock sync."""
    cluster = exp["cluster"]
    if cluster is None:
        return
    network = exp["network"] or {}
    if network.get("switch", "ovs") != "ovs":
        ctx.error_at(node, "network.switch", f"a cluster places Open vSwitch bridges (switch: ovs), "
                                             f"not {network['switch']}")
    if any(m != "wired" for m in network.get("medium") or ["wired"]):
        ctx.error_at(node, "network.medium", "a cluster carries wired media only")
    for i, c in enumerate(exp["controllers"]):
        if is_loopback(c["host"]):
            ctx.error_at(node, f"controllers[{i}].host",
                         f"{c['host']} is not reachable from the workers: let the controller listen on an address "
                         f"they reach (0.0.0.0, or cluster.controller_address)")
    if cluster["clock_sync"]:
        return
    for i, w in enumerate(exp["workloads"]):
        for j, flow in enumerate(w.get("flows") or []):
            metered = [flow.get("meter")] + list((w.get("sweep") or {}).get("meter") or [])
            if flow.get("proto") == "udp" and "owd" in metered:
                where = f"workloads[{i}].flows[{j}]"
                # meter: owd is the default: point at the flow when the file does not write it.
                written = [k for k in ctx.lines if k.startswith(where + ".")]
                ctx.error_at(node, f"{where}.meter" if f"{where}.meter" in ctx.lines else min(
                                 written, key=ctx.lines.get, default=where),
                             "meter owd: one-way delay between hosts on different workers needs synchronised clocks: "
                             "declare cluster.clock_sync: true, or use meter: rtt")

