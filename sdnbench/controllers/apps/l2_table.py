"""MAC learning for sdnbench's reference L2 switch: pure logic, no OpenFlow.

Kept apart from the os-ken app so it is unit-tested without a controller and
reads the same for OpenFlow 1.0 and 1.3.
"""

from __future__ import annotations

from dataclasses import dataclass


def is_group(mac: str) -> bool:
    """True for broadcast and multicast MACs (the I/G bit of the first octet)."""
    return bool(int(mac[:2], 16) & 1)


@dataclass(frozen=True)
class Decision:
    """What to do with one PACKET_IN: output port (None = flood), drop, install a flow."""

    out_port: int | None
    install: bool = False
    drop: bool = False


class MacTable:
    """Where each MAC was last seen, per datapath."""

    def __init__(self) -> None:
        self._ports: dict[int, dict[str, int]] = {}

    def learn(self, dpid: int, mac: str, port: int) -> bool:
        """Record mac behind port; True when this is new or the host moved."""
        table = self._ports.setdefault(dpid, {})
        if table.get(mac) == port:
            return False
        table[mac] = port
        return True

    def port_of(self, dpid: int, mac: str) -> int | None:
        """The port mac was last seen on, or None."""
        return self._ports.get(dpid, {}).get(mac)

    def forget(self, dpid: int) -> None:
        """Drop everything learnt on a datapath (it disconnected or reconnected)."""
        self._ports.pop(dpid, None)

    def size(self, dpid: int) -> int:
        """How many MACs are known on a datapath."""
        return len(self._ports.get(dpid, {}))


#: When a PACKET_IN leads to a flow: "known" = for learnt unicast destinations
#: (like Ryu's simple_switch), "always" = for every PACKET_IN, flooding ones
#: too (one FLOW_MOD per PACKET_IN, a steady southbound load), "never" =
#: PACKET_OUT only, so every packet of every flow reaches the controller.
FLOW_POLICIES = ("known", "always", "never")


def decide(table: MacTable, dpid: int, in_port: int, src: str, dst: str,
           flows: str = "known") -> Decision:
    """Learn src, then choose where dst goes and whether to install a flow for it."""
    if flows not in FLOW_POLICIES:
        raise ValueError(f"flow policy {flows!r}: expected one of {', '.join(FLOW_POLICIES)}")
    if not is_group(src):
        table.learn(dpid, src, in_port)
    out = None if is_group(dst) else table.port_of(dpid, dst)
    if out == in_port:
        # The destination sits behind the port the frame came in on: a switch
        # must not send it back (OpenFlow would need OFPP_IN_PORT to do so).
        return Decision(out_port=None, drop=True)
    install = flows == "always" or (flows == "known" and out is not None)
    return Decision(out_port=out, install=install)
