"""The shipped programs behave as documented: the client's writes, applied to a model of bmv2, forward packets."""

from __future__ import annotations

import pytest

from sdnbench.p4.encoding import mac
from sdnbench.p4.programs import CPU_PORT, FLOOD_GROUP, program
from sdnbench.p4.runtime import P4RuntimeClient

from bmv2_model import Bmv2Model
from p4_fake_server import FakeP4Runtime

A, B, BROADCAST = "00:00:00:00:00:0a", "00:00:00:00:00:0b", "ff:ff:ff:ff:ff:ff"


def frame(dst: str, src: str, body: bytes = b"payload") -> bytes:
    return mac(dst).to_bytes(6, "big") + mac(src).to_bytes(6, "big") + b"\x08\x00" + body


def pack(fields) -> bytes:
    """Controller-header bytes as bmv2's P4Runtime server builds them: fields in p4info order."""
    bits, width = 0, 0
    for value, bitwidth in fields:
        bits, width = (bits << bitwidth) | value, width + bitwidth
    return bits.to_bytes(width // 8, "big")


@pytest.fixture
def switch(request):
    """(client, model): a client pushed `request.param`'s program through the fake server; writes reach the model."""
    fake = FakeP4Runtime()
    fake.start()
    prog = program(request.param)
    client = P4RuntimeClient(f"127.0.0.1:{fake.port}", device_id=1, timeout_s=3.0)
    client.arbitrate()
    client.set_pipeline(prog)
    model = Bmv2Model(prog, cpu_port=CPU_PORT)
    client.fake, client.model = fake, model
    yield client, model
    client.close()
    fake.stop()


def sync(client) -> None:
    """Apply what the fake device received since the last sync."""
    for update in client.fake.updates:
        client.model.apply(update)
    client.fake.updates.clear()


@pytest.mark.parametrize("switch", ["l2_learning"], indirect=True)
def test_l2_learning(switch):
    client, model = switch
    client.write_multicast_group(FLOOD_GROUP, [1, 2, 3])
    sync(client)

    # Unknown source: to the controller only, with the ingress port in packet_in.
    out = model.process(1, frame(B, A))
    assert out == [(CPU_PORT, pack([(1, 9), (0, 7)]) + frame(B, A))]
    header = {m.name: m.bitwidth for m in client.index.metadata("packet_in")}
    assert sum(header.values()) == 16

    # The controller learns A on port 1; B is still unknown: flooded, not back to port 1.
    client.write_entry("smac", {"srcAddr": A}, "NoAction", {})
    client.write_entry("dmac", {"dstAddr": A}, "forward", {"port": 1})
    sync(client)
    assert sorted(p for p, _ in model.process(1, frame(B, A))) == [2, 3]
    assert sorted(p for p, _ in model.process(1, frame(BROADCAST, A))) == [2, 3]

    # B learned on port 2: unicast both ways, frames unchanged.
    client.write_entry("smac", {"srcAddr": B}, "NoAction", {})
    client.write_entry("dmac", {"dstAddr": B}, "forward", {"port": 2})
    sync(client)
    assert model.process(1, frame(B, A)) == [(2, frame(B, A))]
    assert model.process(2, frame(A, B)) == [(1, frame(A, B))]
    assert model.process(1, frame(A, A)) == []   # hairpin: dropped at egress

    # Deleting B's dmac entry floods again.
    client.delete_entry("dmac", {"dstAddr": B})
    sync(client)
    assert sorted(p for p, _ in model.process(1, frame(B, A))) == [2, 3]

    assert model.counters["MyIngress.ingress_port_counter"][1][0] == 6
    assert model.counters["MyEgress.egress_port_counter"][2][0] == 4


@pytest.mark.parametrize("switch", ["l2_learning"], indirect=True)
def test_l2_packet_out(switch):
    client, model = switch
    client.write_multicast_group(FLOOD_GROUP, [1, 2, 3])
    sync(client)
    widths = [m.bitwidth for m in client.index.metadata("packet_out")]

    def inject(egress_port, group):
        client.packet_out(frame(B, A), egress_port=egress_port, mcast_group=group)
        sent = client.fake.packet_outs.get(timeout=3)
        values = [int.from_bytes(m.value, "big") for m in sorted(sent.metadata, key=lambda m: m.metadata_id)]
        return model.process(CPU_PORT, pack(zip(values, widths)) + sent.payload)

    assert inject(3, 0) == [(3, frame(B, A))]                         # packet_out header stripped
    assert sorted(p for p, _ in inject(0, FLOOD_GROUP)) == [1, 2, 3]


@pytest.mark.parametrize("switch", ["forwarding"], indirect=True)
def test_forwarding_over_a_spanning_tree(switch):
    client, model = switch
    client.write_multicast_group(FLOOD_GROUP, [1, 2, 4])   # port 3 is a loop link left out of the tree
    client.write_entry("dmac", {"dstAddr": B}, "forward", {"port": 4})
    sync(client)
    assert model.process(1, frame(B, A)) == [(4, frame(B, A))]
    assert sorted(p for p, _ in model.process(1, frame(BROADCAST, A))) == [2, 4]
    assert sorted(p for p, _ in model.process(4, frame(BROADCAST, B))) == [1, 2]
    assert model.process(4, frame(B, A)) == []      # the path points back where it came from

    client.write_entry("dmac", {}, "drop", {})       # unknown destinations dropped instead of flooded
    sync(client)
    assert model.process(1, frame(A, B)) == []
    assert model.counters["MyIngress.ingress_port_counter"] == {1: (3, 21 * 3), 4: (2, 21 * 2)}
