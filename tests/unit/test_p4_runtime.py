"""The P4Runtime client against a P4Runtime server in the test process: what goes on the wire, and errors."""

from __future__ import annotations

import socket
import time

import pytest

from sdnbench.errors import P4RuntimeError
from sdnbench.p4.encoding import EncodingError, encode
from sdnbench.p4.programs import FLOOD_GROUP, program
from sdnbench.p4.protos import code_pb2, grpc, p4runtime_pb2
from sdnbench.p4.runtime import P4RuntimeClient

from p4_fake_server import FakeP4Runtime

L2 = program("l2_learning")


@pytest.fixture
def server():
    fake = FakeP4Runtime()
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def client(server):
    c = P4RuntimeClient(f"127.0.0.1:{server.port}", device_id=3, election_id=(0, 7), timeout_s=3.0)
    c.arbitrate()
    c.set_pipeline(L2)
    yield c
    c.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_canonical_encoding():
    assert encode("00:00:00:00:00:01", 48) == b"\x01"
    assert encode("0a:00:00:00:00:02", 48) == bytes.fromhex("0a0000000002")
    assert encode(0, 9) == b"\x00"
    assert encode(255, 9) == b"\xff"
    assert encode(256, 9) == b"\x01\x00"
    assert encode("10.0.0.1", 32) == bytes([10, 0, 0, 1])
    with pytest.raises(EncodingError):
        encode(512, 9)
    with pytest.raises(EncodingError):
        encode("not-a-mac", 48)


def test_arbitration_and_pipeline(server, client):
    update = server.arbitrations[0]
    assert update.device_id == 3
    assert (update.election_id.high, update.election_id.low) == (0, 7)
    push = server.pipeline
    assert push.action == p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
    assert push.device_id == 3 and push.election_id.low == 7
    assert push.config.p4_device_config == L2.device_config
    assert push.config.p4info == L2.p4info
    assert push.config.cookie.cookie == L2.cookie
    assert client.get_pipeline() == L2.p4info


def test_get_pipeline_none_before_push(server):
    with P4RuntimeClient(f"127.0.0.1:{server.port}", device_id=1, timeout_s=3.0) as c:
        c.arbitrate()
        assert c.get_pipeline() is None


def test_table_entry_bytes(server, client):
    client.write_entry("MyIngress.dmac", {"hdr.ethernet.dstAddr": "00:00:00:00:00:02"}, "MyIngress.forward",
                       {"port": 3})
    client.write_entry("smac", {"srcAddr": "0a:0b:0c:0d:0e:0f"}, "NoAction", {})
    dmac, smac = (u.entity.table_entry for u in server.updates)
    assert server.updates[0].type == p4runtime_pb2.Update.INSERT
    assert dmac.table_id == L2.table_id("MyIngress.dmac")
    assert [(m.field_id, m.exact.value) for m in dmac.match] == [(1, b"\x02")]
    assert dmac.action.action.action_id == L2.action_id("MyIngress.forward")
    assert [(p.param_id, p.value) for p in dmac.action.action.params] == [(1, b"\x03")]
    assert smac.table_id == L2.table_id("smac")
    assert smac.match[0].exact.value == bytes.fromhex("0a0b0c0d0e0f")
    assert smac.action.action.action_id == L2.action_id("NoAction")


def test_default_action_and_delete(server, client):
    client.write_entry("MyIngress.dmac", {}, "MyIngress.drop", {})
    client.delete_entry("MyIngress.dmac", {"hdr.ethernet.dstAddr": 2})
    client.write_entry("dmac", {"dstAddr": 2}, "forward", {"port": 4}, modify=True)
    default, delete, modify = server.updates
    assert modify.type == p4runtime_pb2.Update.MODIFY and not modify.entity.table_entry.is_default_action
    assert default.type == p4runtime_pb2.Update.MODIFY and default.entity.table_entry.is_default_action
    assert delete.type == p4runtime_pb2.Update.DELETE
    assert delete.entity.table_entry.match[0].exact.value == b"\x02"
    assert not delete.entity.table_entry.HasField("action")


def test_multicast_group_insert_then_modify(server, client):
    client.write_multicast_group(FLOOD_GROUP, [1, 2, 3])
    client.write_multicast_group(FLOOD_GROUP, [1, 2])   # exists: replaced
    first, second = server.updates
    assert first.type == p4runtime_pb2.Update.INSERT and second.type == p4runtime_pb2.Update.MODIFY
    group = second.entity.packet_replication_engine_entry.multicast_group_entry
    assert group.multicast_group_id == FLOOD_GROUP
    assert [r.egress_port for r in group.replicas] == [1, 2]


def test_counter_read(server, client):
    server.counters[L2.counter_id("MyIngress.ingress_port_counter")] = {1: (10, 640), 2: (3, 192)}
    assert client.read_counters("ingress_port_counter") == {1: (10, 640), 2: (3, 192)}
    assert client.read_counters("MyEgress.egress_port_counter") == {}


def test_packet_out_and_packet_in(server, client):
    client.packet_out(b"\xff" * 14, egress_port=2)
    client.packet_out(b"\xee" * 14, egress_port=0, mcast_group=FLOOD_GROUP)
    unicast = server.packet_outs.get(timeout=3)
    flooded = server.packet_outs.get(timeout=3)
    names = {m.id: m.name for m in L2.index.metadata("packet_out")}
    assert unicast.payload == b"\xff" * 14
    assert {names[m.metadata_id]: m.value for m in unicast.metadata} == {
        "egress_port": b"\x02", "mcast_grp": b"\x00", "_pad": b"\x00"}
    assert {names[m.metadata_id]: m.value for m in flooded.metadata}["mcast_grp"] == b"\x01"

    port_id = next(m.id for m in L2.index.metadata("packet_in") if m.name == "ingress_port")
    server.send_packet_in(b"frame", [(port_id, b"\x04")])
    assert next(client.packet_ins(timeout_s=3)) == (b"frame", 4)
    assert list(client.packet_ins(timeout_s=0.2)) == []


def test_server_down_fails_within_timeout():
    c = P4RuntimeClient(f"127.0.0.1:{free_port()}", device_id=1, timeout_s=0.5)
    start = time.monotonic()
    with pytest.raises(P4RuntimeError) as err:
        c.arbitrate()
    assert time.monotonic() - start < 3
    assert "127.0.0.1" in str(err.value) and "connect" in str(err.value)
    c.close()


def test_unary_call_to_absent_server_is_an_sdnbench_error():
    c = P4RuntimeClient(f"127.0.0.1:{free_port()}", device_id=1, timeout_s=0.5)
    with pytest.raises(P4RuntimeError, match="set pipeline l2_learning: UNAVAILABLE|DEADLINE_EXCEEDED"):
        c.set_pipeline(L2)
    c.close()


@pytest.mark.parametrize("fake, expected", [
    (FakeP4Runtime(arbitration_code=code_pb2.ALREADY_EXISTS), "not primary controller for device 1.*ALREADY_EXISTS"),
    (FakeP4Runtime(abort_stream=grpc.StatusCode.INVALID_ARGUMENT),
     "arbitration: INVALID_ARGUMENT: refused by the test server"),
], ids=["backup", "stream-aborted"])
def test_arbitration_refused(fake, expected):
    fake.start()
    try:
        c = P4RuntimeClient(f"127.0.0.1:{fake.port}", device_id=1, timeout_s=3.0)
        with pytest.raises(P4RuntimeError, match=expected):
            c.arbitrate()
        c.close()
    finally:
        fake.stop()


def test_unknown_names_and_values(server, client):
    with pytest.raises(P4RuntimeError, match="no table 'MyIngress.l3'.*MyIngress.dmac"):
        client.write_entry("MyIngress.l3", {"x": 1}, "forward", {"port": 1})
    with pytest.raises(P4RuntimeError, match="no parameter 'egress'"):
        client.write_entry("dmac", {"dstAddr": 1}, "forward", {"egress": 1})
    with pytest.raises(P4RuntimeError, match="does not fit in 9 bits"):
        client.write_entry("dmac", {"dstAddr": 1}, "forward", {"port": 600})
    assert server.updates == []


def test_write_refused_names_device_and_reason(server, client):
    server.refuse_tables = "Bad match key"
    with pytest.raises(P4RuntimeError) as err:
        client.write_entry("dmac", {"dstAddr": 1}, "forward", {"port": 1})
    text = str(err.value)
    assert text.startswith(f"P4Runtime device 127.0.0.1:{server.port}: write to table dmac: UNKNOWN")
    assert "INVALID_ARGUMENT: Bad match key" in text
    assert "Traceback" not in text
