"""Plain veth links created all at once: one `ip -batch` call instead of three shell round trips each.

Mininet creates a link with a shell command in one node's namespace, then
brings each end up with another (`ifconfig X up`), and a host's MAC with three
more (down, hw ether, up): about 1 s for a 127-switch tree (254 links, 128
hosts), about 8,000 round trips for a 1,000-switch line. Here the
network's Mininet creates every plain link's pair in one iproute2 batch when it
adds its first link (all nodes exist by then): each end straight into its
node's namespace, a host's end with its MAC, root-namespace ends already up.
The links are then `PrecreatedLink`s, which only attach the existing ends.
Shaped and emulated links keep their own classes.
"""

from __future__ import annotations

import subprocess

from mininet.link import Link
from mininet.net import Mininet

# One end of a veth pair: interface name, namespace PID (None: the root namespace), MAC (None: the kernel's).
End = tuple[str, int | None, str | None]


class PrecreatedLink(Link):
    """A plain veth link whose pair BatchLinkMininet has created (named as Mininet names them)."""

    def __init__(self, node1, node2, **params):
        # Ends in the root namespace were brought up by the batch; those in a host's namespace are
        # brought up when the host configures its address (or by Intf, for a host's other ends).
        for node, key in ((node1, "params1"), (node2, "params2")):
            if not node.inNamespace:
                params[key] = {**(params.get(key) or {}), "up": None}
        super().__init__(node1, node2, fast=True, **params)

    @classmethod
    def makeIntfPair(cls, *_args, **_kwargs):
        """The pair exists already."""


class BatchLinkMininet(Mininet):
    """Mininet whose PrecreatedLink pairs are created in one batch, before the first link is added."""

    _pairs_created = False   # a class default: Mininet builds (and adds links) inside its own __init__

    def addLink(self, node1, node2, port1=None, port2=None, cls=None, **params):
        if cls is PrecreatedLink and not self._pairs_created:
            self._pairs_created = True
            create_pairs([self._pair(info) for _a, _b, info in self.topo.links(sort=True, withInfo=True)
                          if info.get("cls") is PrecreatedLink])
        return super().addLink(node1, node2, port1, port2, cls, **params)

    def _pair(self, info: dict) -> list[End]:
        """Both ends of one PrecreatedLink of the topology."""
        ends = []
        for i in (1, 2):
            node = self[info[f"node{i}"]]
            ends.append((f"{node.name}-eth{info[f'port{i}']}", node.pid if node.inNamespace else None,
                         info.get(f"addr{i}")))
        return ends


def _end(name: str, ns: int | None, mac: str | None) -> str:
    """One end of `ip link add ... type veth peer ...`."""
    return f"name {name}" + (f" address {mac}" if mac else "") + (f" netns {ns}" if ns else "")


def batch_commands(pairs: list[list[End]]) -> str:
    """The `ip -batch` script creating these pairs: each end in its namespace, root ends up."""
    adds = [f"link add {_end(*a)} type veth peer {_end(*b)}" for a, b in pairs]
    ups = [f"link set dev {name} up" for pair in pairs for name, ns, _mac in pair if not ns]
    return "".join(line + "\n" for line in adds + ups)


def create_pairs(pairs: list[list[End]]) -> None:
    """Create the pairs in one iproute2 call; RuntimeError with iproute2's words (and its line) if one fails."""
    if not pairs:
        return
    out = subprocess.run(["ip", "-batch", "-"], input=batch_commands(pairs), capture_output=True, text=True,
                         timeout=max(60, len(pairs) / 20))
    if out.returncode != 0:
        raise RuntimeError(f"creating {len(pairs)} veth pairs failed: {out.stderr.strip()}")
