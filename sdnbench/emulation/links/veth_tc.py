"""Links as veth pairs, shaped in the kernel by tc: HTB for bandwidth, netem for delay, jitter and loss
(what Mininet's TCLink passes to netem; the rest of netem's options are the userspace emulator's)."""

from __future__ import annotations

from collections.abc import Iterable

from .. import capabilities
from ..capabilities import Capability
from .base import LinkKind
from .impairment import tclink_unsupported


def quiet_htb_quantum_warning() -> None:
    """Drop Mininet's relay of the kernel's harmless 'quantum of class is big' HTB note."""
    from mininet.log import lg

    if not any(getattr(f, "sdnbench", False) for f in lg.filters):
        def keep(record) -> bool:
            return "quantum of class" not in str(record.msg)
        keep.sdnbench = True
        lg.addFilter(keep)


class VethTc(LinkKind):
    """Mininet's veth links; shaped ones are TCLinks (netem is refused where the kernel lacks it)."""

    name = "veth_tc"

    @classmethod
    def availability(cls, links: Iterable = ()) -> Capability:
        """Refuse what TCLink cannot express, delay/loss without netem and bandwidth without HTB, naming why."""
        links = list(links)
        air = sorted({link.medium for link in links if link.medium})
        if air:
            return Capability(cls.name, False, f"station links of access points {', '.join(air)} share a wireless "
                                               "medium, which only the link emulator gives",
                              "network.links: linkemu (or auto)")
        beyond = sorted({k for link in links for k in tclink_unsupported(link.params)})
        if beyond:
            return Capability(cls.name, False, f"links ask for {', '.join(beyond)}, which Mininet's TCLink "
                                               "cannot give", "network.links: linkemu (or auto)")
        needs = [("netem", "delay/loss", any(link.params.needs_netem() for link in links)),
                 ("htb", "a bandwidth limit", any(link.params.bw_mbps for link in links))]
        for qdisc, what, needed in needs:
            cap = capabilities.qdisc_available(qdisc) if needed else None
            if cap and not cap.ok:
                return Capability(qdisc, False, f"links ask for {what} but {cap.detail}", cap.fix)
        if links:
            return Capability(cls.name, True, "veth pairs, shaped by tc where asked")
        works = [q for q in ("htb", "netem") if capabilities.qdisc_available(q).ok]
        return Capability(cls.name, True, f"veth pairs; tc shaping: {', '.join(works) or 'none'}"
                          + ("" if "netem" in works else " (delay, jitter, loss refused: no netem)"))

    def plain(self, link) -> bool:
        """An unshaped link is a bare veth pair."""
        return not (link.params.bw_mbps or link.params.needs_netem())

    def options(self, link) -> dict:
        """TCLink with bw/delay/loss for a shaped link, nothing (a plain veth pair) otherwise."""
        if self.plain(link):
            return {}
        from mininet.link import TCLink

        p = link.params
        quiet_htb_quantum_warning()
        opts = {"cls": TCLink, "bw": p.bw_mbps}
        if p.delay_ms:
            opts["delay"] = f"{p.delay_ms}ms"
        if p.jitter_ms:
            opts["jitter"] = f"{p.jitter_ms}ms"
        if p.loss_pct:
            opts["loss"] = p.loss_pct
        if p.queue_pkts:
            opts["max_queue_size"] = p.queue_pkts
        return opts

    def describe(self) -> dict:
        """Link kind and the qdiscs that shape this network's links."""
        used = [q for q, on in (("htb", any(link.params.bw_mbps for link in self.graph.links)),
                                ("netem", any(link.params.needs_netem() for link in self.graph.links))) if on]
        return {**super().describe(), "link_shaping": "+".join(used) or "none"}
