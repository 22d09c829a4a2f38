"""Links impaired in user space by sdnbench-linkemu: netem's delay, jitter, loss, duplication,
corruption, reordering, rate and queue limit on any kernel.

An impaired link a—b is two veth pairs: a's interface (a-ethN, in a's namespace) with an inner end
`lk<i>a`, and b's interface with `lk<i>b`. The nodes keep real interfaces, so any switch kind attaches
them as it would a plain veth. Once the network is up, one emulator process for the whole network
starts in a namespace of its own, the inner ends move into it, and it forwards frames between each
pair with the link's impairments, each direction on its own. Links without impairments stay plain
veth pairs (with HTB where they have a bw_mbps, as in veth_tc); bw_mbps on an impaired link is HTB on
its two outer ends.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from ...paths import build_hint, native_tool
from .. import offload
from ..capabilities import Capability
from .base import LinkKind, LinkWindow
from .emulator import TOOL, Emulator, EmulatorWindow
from .air import emulator_media
from .impairment import emulator_link
from .veth_tc import quiet_htb_quantum_warning


@functools.lru_cache(maxsize=1)
def _emulated_link_class():
    """Mininet's Link, cut in two veth pairs whose inner ends the emulator joins (Mininet imported on use)."""
    from mininet.link import Link
    from mininet.util import quietRun

    class EmulatedLink(Link):
        """node1's interface <-> inner[0] ... emulator ... inner[1] <-> node2's interface."""

        def __init__(self, node1, node2, inner: tuple[str, str] = ("", ""), **params):
            self.inner = inner
            super().__init__(node1, node2, **params)

        def makeIntfPair(self, intfname1, intfname2, addr1=None, addr2=None, node1=None, node2=None,
                         deleteIntfs=True):
            """Two pairs instead of one; each inner end stays in the root namespace until the emulator takes it."""
            for name, addr, node, inner in ((intfname1, addr1, node1, self.inner[0]),
                                            (intfname2, addr2, node2, self.inner[1])):
                mac = f" address {addr}" if addr else ""
                out = quietRun(f"ip link add name {inner} type veth peer name {name}{mac} netns {node.pid}")
                if out:
                    raise RuntimeError(f"cannot create the veth pair {inner}/{name}: {out.strip()}")

    return EmulatedLink


class LinkEmu(LinkKind):
    """Impaired links through one sdnbench-linkemu process; other links are plain veth pairs."""

    name = "linkemu"

    def __init__(self, graph, manifest):
        super().__init__(graph, manifest)
        # Inner end names by link index: short (15 characters at most), unique within the network.
        self.inner = {i: (f"lk{i}a", f"lk{i}b") for i, link in enumerate(graph.links)
                      if link.params.needs_netem() or link.medium}
        # The emulator's name of each link it carries.
        self.names = {i: f"{graph.links[i].a}-{graph.links[i].b}" for i in self.inner}
        self._index = {id(link): i for i, link in enumerate(graph.links)}
        # No manifest: a network only described, never started (calibration's data-plane key).
        self.emulator = Emulator(Path(manifest.path).parent / "linkemu", manifest) if manifest is not None else None

    @classmethod
    def availability(cls, links: Iterable = ()) -> Capability:
        """Needs the built sdnbench-linkemu (and HTB where links also ask for bw_mbps)."""
        from .. import capabilities

        links = list(links)
        if native_tool(TOOL) is None:
            return Capability(TOOL, False, f"{TOOL} is not built", build_hint(TOOL))
        if any(link.params.bw_mbps for link in links):
            htb = capabilities.qdisc_available("htb")
            if not htb.ok:
                return Capability("htb", False, f"links ask for a bandwidth limit but {htb.detail}", htb.fix)
        return Capability(cls.name, True, f"impaired links through {native_tool(TOOL)} (delay, jitter, loss, "
                                          "duplication, corruption, reordering, rate in user space)")

    def plain(self, link) -> bool:
        """A link with neither impairment, bandwidth limit nor wireless medium is a bare veth pair."""
        return not (link.params.bw_mbps or link.params.needs_netem() or link.medium)

    def options(self, link) -> dict:
        """EmulatedLink for an impaired link (HTB too with bw_mbps), TCLink for bw_mbps alone, else nothing."""
        opts: dict = {}
        if link.params.bw_mbps:
            from mininet.link import TCIntf, TCLink

            quiet_htb_quantum_warning()
            opts = {"cls": TCLink, "bw": link.params.bw_mbps}
        i = self._index[id(link)]
        if i in self.inner:
            for name in self.inner[i]:
                if Path(f"/sys/class/net/{name}").exists():
                    raise RuntimeError(f"interface {name} already exists (left by a killed run? "
                                       f"`sdnbench clean` removes it)")
                self.manifest.created("interface", name)
            opts["cls"] = _emulated_link_class()
            opts["inner"] = self.inner[i]
            if link.params.bw_mbps:
                opts["intf"] = TCIntf
        return opts

    def started(self, net) -> None:
        """Offloads off on all four ends of each impaired link, then the emulator takes the inner ends."""
        if not self.inner:
            return
        pairs = set(self.inner.values())
        by_node: dict = {}
        for ml in net.links:
            if getattr(ml, "inner", None) in pairs:
                for intf in (ml.intf1, ml.intf2):
                    by_node.setdefault(intf.node, []).append(intf.name)
        # AF_PACKET forwards frames as they are: checksums must be complete and frames MTU-sized.
        offload.disable_offloads_root([n for pair in self.inner.values() for n in pair])
        for node, names in by_node.items():
            node.cmd("; ".join(offload.offload_off_command(n) for n in names))
        links = self.graph.links
        config = {"links": [emulator_link(self.names[i], pair, links[i]) for i, pair in self.inner.items()]}
        if self.graph.cells:
            config["media"] = emulator_media(self.graph.cells, self.names, links)
        self.emulator.start(config, [n for pair in self.inner.values() for n in pair], _emulator_cpu())

    def stopping(self, net) -> None:
        """Stop the emulator: its namespace, the inner ends and their veth peers go with it."""
        self.emulator.stop()

    def teardown(self) -> None:
        """Delete inner ends still in the root namespace (a start that failed), release their records."""
        self.emulator.stop()
        for pair in self.inner.values():
            for name in pair:
                if Path(f"/sys/class/net/{name}").exists():
                    subprocess.run(["ip", "link", "del", name], capture_output=True)
                self.manifest.released("interface", name)

    def window(self) -> LinkWindow:
        """The emulator's lateness and own drops over one trial."""
        association = {self.names[i]: self.graph.links[i].medium for i in self.inner if self.graph.links[i].medium}
        return EmulatorWindow(self.emulator, association) if self.inner else LinkWindow()

    def describe(self) -> dict:
        """Link kind, how the emulator runs (scheduling, spin) and which links it impairs."""
        used = [name for name, on in (("htb", any(link.params.bw_mbps for link in self.graph.links)),
                                      ("linkemu", bool(self.inner))) if on]
        out = {**super().describe(), "link_shaping": "+".join(used) or "none"}
        if self.emulator is not None and self.emulator.started:
            out["linkemu_sched"] = self.emulator.started.get("sched")
            out["linkemu_spin_us"] = self.emulator.started.get("spin_us")
        out["linkemu_links"] = len(self.inner)
        return out


def _emulator_cpu() -> int | None:
    """The last CPU: controllers pinned with `cpus` take the first ones. Pinned, the emulator's sends
    all enter one CPU's backlog, so it never reorders frames itself."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[-1] if len(cpus) > 1 else None
