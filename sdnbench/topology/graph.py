"""The topology graph: switches, hosts and links with their link parameters.

A graph is pure data: no root, no Mininet. Builders in this package return one;
`sdnbench.emulation` turns it into a running network.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from .cells import Cell


@dataclass(frozen=True)
class LinkParams:
    """Shaping and impairment of one link, the same in each direction; None means not set.

    The names are the experiment file's `link` keys (sdnbench.config.schema.LINK), with
    netem's meanings: see docs/linkemu.md.
    """

    bw_mbps: float | None = None
    delay_ms: float | None = None
    jitter_ms: float | None = None
    delay_distribution: str | None = None
    delay_correlation_pct: float | None = None
    keep_order: bool = False
    reorder_pct: float | None = None
    reorder_gap: int | None = None
    reorder_correlation_pct: float | None = None
    loss_model: str | None = None
    loss_pct: float | None = None
    loss_correlation_pct: float | None = None
    loss_p_pct: float | None = None
    loss_r_pct: float | None = None
    loss_bad_pct: float | None = None
    loss_good_pct: float | None = None
    loss_p13_pct: float | None = None
    loss_p31_pct: float | None = None
    loss_p32_pct: float | None = None
    loss_p23_pct: float | None = None
    loss_p14_pct: float | None = None
    duplicate_pct: float | None = None
    duplicate_correlation_pct: float | None = None
    corrupt_pct: float | None = None
    corrupt_correlation_pct: float | None = None
    rate_mbps: float | None = None
    rate_overhead_bytes: int | None = None
    queue_pkts: int | None = None
    queue_bytes: int | None = None

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """Every parameter name, as the experiment file spells it."""
        return tuple(f.name for f in fields(cls))

    def impairments(self) -> dict:
        """The parameters set beyond bw_mbps: what netem (or the userspace emulator) must realise."""
        return {k: v for k, v in asdict(self).items() if k != "bw_mbps" and v not in (None, False, 0)}

    def needs_netem(self) -> bool:
        """True when the link asks for more than a bandwidth limit (delay, loss, jitter, ...)."""
        return bool(self.impairments())


@dataclass(frozen=True)
class Host:
    """An emulated end host with a fixed address, as Mininet numbers them."""

    name: str
    ip: str
    mac: str


@dataclass(frozen=True)
class Switch:
    """An OpenFlow switch; dpid is the datapath id as an integer."""

    name: str
    dpid: int


@dataclass(frozen=True)
class Link:
    """An undirected link between two nodes; role is 'edge' (host) or 'core'; medium names the access point
    whose shared wireless medium carries it (None: a wire)."""

    a: str
    b: str
    params: LinkParams = LinkParams()
    role: str = "core"
    medium: str | None = None


@dataclass
class TopologyGraph:
    """A whole topology: what the emulation builds and the workloads address."""

    kind: str
    switches: list[Switch] = field(default_factory=list)
    hosts: list[Host] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    medium: str = "wired"                                   # how hosts reach their switches (sdnbench.media)
    cells: dict[str, Cell] = field(default_factory=dict)    # wireless: access point -> its cell
    _host_index: dict[str, Host] = field(default_factory=dict, repr=False, compare=False)

    def add_switch(self) -> str:
        """Add switch s<N> with dpid N and return its name."""
        n = len(self.switches) + 1
        self.switches.append(Switch(f"s{n}", n))
        return f"s{n}"

    def add_host(self) -> str:
        """Add host h<N> with IP 10.0.0.N/8 and MAC 00:00:00:00:00:NN."""
        n = len(self.hosts) + 1
        if n > 0xFFFFFE:
            raise ValueError("too many hosts for the 10.0.0.0/8 plan")
        ip = f"10.{(n >> 16) & 0xFF}.{(n >> 8) & 0xFF}.{n & 0xFF}"
        mac = ":".join(f"{(n >> s) & 0xFF:02x}" for s in (40, 32, 24, 16, 8, 0))
        self.hosts.append(Host(f"h{n}", ip, mac))
        return f"h{n}"

    def add_link(self, a: str, b: str, params: LinkParams, role: str = "core") -> None:
        """Connect two nodes."""
        self.links.append(Link(a, b, params, role))

    def host(self, name: str) -> Host:
        """The host called name (KeyError naming the known hosts otherwise)."""
        index = self._host_index
        if len(index) != len(self.hosts):   # hosts were added since: index them again
            index.clear()
            index.update((h.name, h) for h in self.hosts)
        if name in index:
            return index[name]
        raise KeyError(f"no host {name!r}; hosts are {', '.join(h.name for h in self.hosts)}")

    def node_names(self) -> list[str]:
        """All switch and host names."""
        return [s.name for s in self.switches] + [h.name for h in self.hosts]

    def summary(self) -> str:
        """One line: kind and counts."""
        cells = f", {len(self.cells)} access points ({self.medium})" if self.cells else ""
        return f"{self.kind}: {len(self.switches)} switches, {len(self.hosts)} hosts, {len(self.links)} links{cells}"
