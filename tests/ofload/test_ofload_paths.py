"""Multi-hop flow setup (--topology + --paths) against a fake controller that installs flows along the line."""

from __future__ import annotations

import json
import selectors
import socket
import struct
import threading

from .conftest import accept_switches, fake_controller, read_msg, run_ofload, write_links


def flow_mod(src: bytes, dst: bytes, buffer_id: int) -> bytes:
    """OpenFlow 1.0 FLOW_MOD ADD matching dl_src/dl_dst, output to port 3."""
    wildcards = 0x3FFFFF & ~(4 | 8)
    match = struct.pack("!IH6s6sHBxHBBxxIIHH", wildcards, 0, src, dst, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    body = match + struct.pack("!QHHHHIHH", 0, 0, 0, 0, 100, buffer_id, 0xFFFF, 0) + struct.pack("!HHHH", 0, 8, 3, 0xFFFF)
    return struct.pack("!BBHI", 1, 14, 8 + len(body), 9) + body


def line_controller(lsock: socket.socket, n: int, stop: threading.Event) -> None:
    """Accept n switches of a line 0-1-..-(n-1); answer a PACKET_IN for switch j's host with FLOW_MODs on every hop."""
    conns = accept_switches(lsock, n, version=1)
    sel = selectors.DefaultSelector()
    for i, c in conns.items():
        sel.register(c, selectors.EVENT_READ, i)
    try:
        while not stop.is_set():
            for key, _ in sel.select(0.1):
                i, m = key.data, read_msg(key.fileobj)
                if m[1] != 10:
                    continue
                buffer_id, data = struct.unpack("!I", m[8:12])[0], m[18:]
                dst, src = data[0:6], data[6:12]
                if dst[0] != 2 or dst[3:6] != b"\xff\xff\xff":
                    continue  # not addressed to a destination host
                j = int.from_bytes(dst[1:3], "big")
                hops = range(i, j + 1) if j >= i else range(i, j - 1, -1)
                for k in reversed(list(hops)):  # egress first, ingress (with the buffer) last
                    conns[k].sendall(flow_mod(src, dst, buffer_id if k == i else 0xFFFFFFFF))
    except OSError:
        pass
    for c in conns.values():
        c.close()


def test_paths_are_set_up_across_the_line(ofload_bin, tmp_path):
    topo = write_links(tmp_path, [[0, 3, 1, 3], [1, 4, 2, 3]])
    with fake_controller(line_controller, 3) as port:
        p = run_ofload(ofload_bin, port, "-s", "3", "-M", "50", "-l", "3", "-m", "300", "-w", "1",
                       "--topology", str(topo), "--paths")
    assert p.returncode == 0, p.stdout + p.stderr
    s = json.loads(p.stdout.splitlines()[-1])["data"]
    paths = s["paths"]
    # Partners: 0 -> 2 and 2 -> 0 cross switch 1; 1 -> 0 is one hop.
    assert abs(paths["mean_hops"] - 5 / 3) < 1e-9
    assert paths["completed"] > 0 and paths["transit_flow_mods"] > 0
    assert paths["setup_us"]["p50"] > 0 and paths["setup_us"]["count"] > 0
    assert s["totals"]["matched"] > 0 and s["totals"]["unmatched"] == 0, s["totals"]
