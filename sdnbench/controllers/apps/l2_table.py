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


def decide(table: MacTable, dpid: int, in_port: int, src: str, dst: str,
           install_flows: bool) -> Decision:
    """Learn src, then choose where dst goes; flows only for known unicast destinations."""
    if not is_group(src):
        table.learn(dpid, src, in_port)
    out = None if is_group(dst) else table.port_of(dpid, dst)
    if out is None:
        return Decision(out_port=None)
    if out == in_port:
        # The destination sits behind the port the frame came in on: a switch
        # must not send it back (OpenFlow would need OFPP_IN_PORT to do so).
        return Decision(out_port=None, drop=True)
    return Decision(out_port=out, install=install_flows)
