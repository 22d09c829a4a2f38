"""Topology-aware mode: an LLDP PACKET_OUT on one emulated switch arrives as a PACKET_IN on its neighbour."""

from __future__ import annotations

import json
import socket
import struct
import threading

from sdnbench.workloads import sbi

from .conftest import accept_switches, fake_controller, read_msg, run_ofload, write_links

LLDP = bytes.fromhex("0180c200000e" "020000000103" "88cc") + b"sdnbench-lldp-probe" + bytes(20)


def packet_out(port: int, frame: bytes) -> bytes:
    """OpenFlow 1.3 PACKET_OUT of frame to port (unbuffered, from the controller)."""
    action = struct.pack("!HHIH6x", 0, 16, port, 0xFFE5)
    body = struct.pack("!IIH6x", 0xFFFFFFFF, 0xFFFFFFFD, len(action)) + action + frame
    return struct.pack("!BBHI", 4, 13, 8 + len(body), 7) + body


def discovery_controller(lsock: socket.socket, seen: list, done: threading.Event) -> None:
    """Accept two switches, send LLDP out of port 3 of switch 0, record LLDP PACKET_INs at switch 1."""
    conns = accept_switches(lsock, 2, version=4)
    conns[0].sendall(packet_out(3, LLDP))
    conns[1].sendall(packet_out(4, LLDP))  # port 4 is not linked: must go nowhere
    try:
        while not done.is_set():
            m = read_msg(conns[1])
            if m[1] != 10:
                continue
            mlen = struct.unpack("!H", m[26:28])[0]
            in_port = struct.unpack("!I", m[32:36])[0]  # after match type, length, OXM header
            data = m[24 + (mlen + 7) // 8 * 8 + 2:]
            if data[12:14] == b"\x88\xcc":
                seen.append((in_port, data))
    except OSError:
        pass
    for c in conns.values():
        c.close()


def test_lldp_packet_out_reaches_the_linked_neighbour(ofload_bin, tmp_path):
    topo = write_links(tmp_path, [[0, 3, 1, 3]])
    seen: list = []
    with fake_controller(discovery_controller, seen) as port:
        p = run_ofload(ofload_bin, port, "-V", "1.3", "-s", "2", "-l", "2", "-m", "300", "--topology", str(topo))
    assert seen == [(3, LLDP)], f"neighbour saw {seen}; ofload said {p.stdout} {p.stderr}"
    summary = json.loads(p.stdout.splitlines()[-1])["data"]
    assert summary["topology_links"] == 1
    assert summary["totals_all_phases"]["lldp_packet_outs"] == 2
    assert summary["totals_all_phases"]["lldp_relayed"] == 1


def test_topology_file_from_graph_numbers_ports_from_3():
    from sdnbench.topology.graph import LinkParams, TopologyGraph
    g = TopologyGraph(kind="linear")
    s1, s2, s3 = g.add_switch(), g.add_switch(), g.add_switch()
    h = g.add_host()
    g.add_link(h, s1, LinkParams(), role="edge")
    g.add_link(s1, s2, LinkParams())
    g.add_link(s2, s3, LinkParams())
    assert sbi.topology_links(g) == {"links": [[0, 3, 1, 3], [1, 4, 2, 3]]}
