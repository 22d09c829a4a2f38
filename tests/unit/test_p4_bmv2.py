"""The shipped programs and the client against a real bmv2 simple_switch_grpc, where it is installed.

No network is built: the switch reads and writes its ports as pcap files
(`--use-files`), so this runs without root; it skips when simple_switch_grpc
is not on PATH.
"""

from __future__ import annotations

import shutil
import socket
import struct
import subprocess
import time

import pytest

from sdnbench.p4.encoding import mac
from sdnbench.p4.programs import CPU_PORT, FLOOD_GROUP, program
from sdnbench.p4.runtime import P4RuntimeClient

BINARY = shutil.which("simple_switch_grpc")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(BINARY is None, reason="simple_switch_grpc (bmv2) is not on PATH")]

A, B, BROADCAST = "00:00:00:00:00:0a", "00:00:00:00:00:0b", "ff:ff:ff:ff:ff:ff"
FILE_DELAY_S = 4   # the switch starts reading its input pcaps this long after it starts


def frame(dst: str, src: str, body: bytes = b"sdnbench" * 6) -> bytes:
    return mac(dst).to_bytes(6, "big") + mac(src).to_bytes(6, "big") + b"\x08\x00" + body


def write_pcap(path, frames) -> None:
    data = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for i, packet in enumerate(frames):
        data += struct.pack("<IIII", 1, i * 1000, len(packet), len(packet)) + packet
    path.write_bytes(data)


def read_pcap(path) -> list[bytes]:
    data = path.read_bytes() if path.exists() else b""
    frames, offset = [], 24
    while offset + 16 <= len(data):
        length = struct.unpack("<IIII", data[offset:offset + 16])[2]
        frames.append(data[offset + 16:offset + 16 + length])
        offset += 16 + length
    return frames


def wait_for(predicate, timeout_s: float = 10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


@pytest.fixture
def bmv2(tmp_path):
    """Start simple_switch_grpc on ports 1-3 (pcap files p1..p3 in tmp_path); yields (address, tmp_path, start)."""
    procs = []

    def start(inputs: dict[int, list[bytes]]) -> str:
        for port in (1, 2, 3):
            write_pcap(tmp_path / f"p{port}_in.pcap", inputs.get(port, []))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            grpc_port = s.getsockname()[1]
        cmd = [BINARY, "--device-id", "1", "--use-files", str(FILE_DELAY_S), "--no-p4",
               *[arg for port in (1, 2, 3) for arg in ("-i", f"{port}@p{port}")],
               "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}", "--cpu-port", str(CPU_PORT)]
        log = open(tmp_path / "switch.log", "w")
        procs.append(subprocess.Popen(cmd, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT))
        return f"127.0.0.1:{grpc_port}"

    yield start, tmp_path
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_l2_learning_on_bmv2(bmv2):
    start, files = bmv2
    address = start({1: [frame(B, A)]})
    prog = program("l2_learning")
    with P4RuntimeClient(address, device_id=1, timeout_s=10.0) as client:
        client.arbitrate()
        assert client.get_pipeline() is None
        client.set_pipeline(prog)
        client.write_multicast_group(FLOOD_GROUP, [1, 2, 3])
        client.write_entry("MyIngress.smac", {"hdr.ethernet.srcAddr": B}, "NoAction", {})
        assert client.get_pipeline() is not None

        # The frame from A (unknown source) comes to the controller with its ingress port.
        payload, port = next(client.packet_ins(timeout_s=FILE_DELAY_S + 10))
        assert (payload, port) == (frame(B, A), 1)

        client.write_entry("MyIngress.smac", {"hdr.ethernet.srcAddr": A}, "NoAction", {})
        client.write_entry("MyIngress.dmac", {"hdr.ethernet.dstAddr": A}, "MyIngress.forward", {"port": 1})
        client.packet_out(payload, egress_port=2)
        assert wait_for(lambda: read_pcap(files / "p2_out.pcap")) == [frame(B, A)]
        client.packet_out(frame(BROADCAST, B), egress_port=0, mcast_group=FLOOD_GROUP)
        assert wait_for(lambda: len(read_pcap(files / "p3_out.pcap")) == 1)
        assert read_pcap(files / "p1_out.pcap") == [frame(BROADCAST, B)]

        ingress = client.read_counters("MyIngress.ingress_port_counter")
        assert ingress[1][0] == 1 and ingress[CPU_PORT][0] == 2
        assert client.read_counters("MyEgress.egress_port_counter")[2][0] == 2
        client.delete_entry("MyIngress.dmac", {"hdr.ethernet.dstAddr": A})


def test_forwarding_on_bmv2(bmv2):
    start, files = bmv2
    address = start({1: [frame(BROADCAST, A), frame(B, A)], 3: [frame(B, A)]})
    with P4RuntimeClient(address, device_id=1, timeout_s=10.0) as client:
        client.arbitrate()
        client.set_pipeline(program("forwarding"))
        client.write_multicast_group(FLOOD_GROUP, [1, 2])          # port 3 is off the tree
        client.write_entry("dmac", {"dstAddr": B}, "forward", {"port": 3})
        time.sleep(FILE_DELAY_S + 1)
        assert wait_for(lambda: read_pcap(files / "p3_out.pcap")) == [frame(B, A)]
        assert wait_for(lambda: read_pcap(files / "p2_out.pcap")) == [frame(BROADCAST, A)]
        assert read_pcap(files / "p1_out.pcap") == []               # not flooded back, not hairpinned
        assert client.read_counters("ingress_port_counter")[1][0] == 2
