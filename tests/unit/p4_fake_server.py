"""A P4Runtime server in the test process (real gRPC on 127.0.0.1) that records what clients send."""

from __future__ import annotations

import queue
import threading
from concurrent import futures

from sdnbench.p4.protos import code_pb2, grpc, p4runtime_pb2, p4runtime_pb2_grpc, status_pb2

_END = object()


class FakeP4Runtime(p4runtime_pb2_grpc.P4RuntimeServicer):
    """Answers like bmv2's P4Runtime server for the calls sdnbench makes.

    `arbitration_code` is the status sent back to an arbitration update (OK makes the
    client primary); `abort_stream` aborts the stream channel with that gRPC code instead.
    Written entities, packet-outs and the pipeline are kept for the test to inspect;
    `send_packet_in` pushes a packet-in to the connected client.
    """

    def __init__(self, arbitration_code: int = code_pb2.OK, abort_stream: grpc.StatusCode | None = None):
        self.arbitration_code, self.abort_stream = arbitration_code, abort_stream
        self.arbitrations: list = []
        self.pipeline: p4runtime_pb2.SetForwardingPipelineConfigRequest | None = None
        self.updates: list = []
        self.packet_outs: queue.Queue = queue.Queue()
        self.counters: dict[int, dict[int, tuple[int, int]]] = {}
        self.refuse_tables: str | None = None   # a message: every table write then fails with it
        self._streams: list[queue.Queue] = []
        self._server = None
        self.port = 0

    # -- lifetime -------------------------------------------------------------------------

    def start(self) -> str:
        """Listen on a free loopback port; returns "127.0.0.1:PORT"."""
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(self, self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        """End every stream and the server."""
        for out in self._streams:
            out.put(_END)
        if self._server is not None:
            self._server.stop(grace=None).wait()

    # -- what tests drive -----------------------------------------------------------------

    def send_packet_in(self, payload: bytes, metadata: list[tuple[int, bytes]]) -> None:
        """Push a packet-in with (metadata_id, value) pairs to every open stream."""
        packet = p4runtime_pb2.PacketIn(payload=payload, metadata=[
            p4runtime_pb2.PacketMetadata(metadata_id=mid, value=value) for mid, value in metadata])
        for out in self._streams:
            out.put(p4runtime_pb2.StreamMessageResponse(packet=packet))

    # -- P4Runtime service ----------------------------------------------------------------

    def StreamChannel(self, request_iterator, context):
        if self.abort_stream is not None:
            context.abort(self.abort_stream, "refused by the test server")
        out: queue.Queue = queue.Queue()
        self._streams.append(out)

        def read():
            try:
                for request in request_iterator:
                    kind = request.WhichOneof("update")
                    if kind == "arbitration":
                        self.arbitrations.append(request.arbitration)
                        answer = p4runtime_pb2.MasterArbitrationUpdate()
                        answer.CopyFrom(request.arbitration)
                        answer.status.CopyFrom(status_pb2.Status(code=self.arbitration_code, message="test"))
                        out.put(p4runtime_pb2.StreamMessageResponse(arbitration=answer))
                    elif kind == "packet":
                        self.packet_outs.put(request.packet)
            except grpc.RpcError:
                pass
            out.put(_END)

        threading.Thread(target=read, daemon=True).start()
        while True:
            message = out.get()
            if message is _END:
                return
            yield message

    def SetForwardingPipelineConfig(self, request, context):
        self.pipeline = request
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):
        reply = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        if self.pipeline is not None:   # bmv2 answers an empty config before the first push
            reply.config.p4info.CopyFrom(self.pipeline.config.p4info)
            reply.config.cookie.CopyFrom(self.pipeline.config.cookie)
        return reply

    def Write(self, request, context):
        failures = []
        for update in request.updates:
            group = update.entity.packet_replication_engine_entry.multicast_group_entry
            exists = any(u.type == p4runtime_pb2.Update.INSERT
                         and u.entity.packet_replication_engine_entry.multicast_group_entry.multicast_group_id
                         == group.multicast_group_id for u in self.updates)
            if self.refuse_tables and update.entity.HasField("table_entry"):
                failures.append(p4runtime_pb2.Error(canonical_code=code_pb2.INVALID_ARGUMENT,
                                                    message=self.refuse_tables))
                continue
            if update.type == p4runtime_pb2.Update.INSERT and group.multicast_group_id and exists:
                failures.append(p4runtime_pb2.Error(canonical_code=code_pb2.ALREADY_EXISTS,
                                                    message="multicast group exists"))
                continue
            self.updates.append(update)
            failures.append(p4runtime_pb2.Error(canonical_code=code_pb2.OK))
        if any(f.canonical_code != code_pb2.OK for f in failures):
            # How P4Runtime servers report a batch: UNKNOWN plus one p4.v1.Error per update.
            status = status_pb2.Status(code=code_pb2.UNKNOWN, message="Write failure.")
            for failure in failures:
                status.details.add().Pack(failure)
            context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
            context.set_code(grpc.StatusCode.UNKNOWN)
            context.set_details("Write failure.")
        return p4runtime_pb2.WriteResponse()

    def Read(self, request, context):
        reply = p4runtime_pb2.ReadResponse()
        for entity in request.entities:
            counter_id = entity.counter_entry.counter_id
            for index, (packets, octets) in sorted(self.counters.get(counter_id, {}).items()):
                cell = reply.entities.add().counter_entry
                cell.counter_id, cell.index.index = counter_id, index
                cell.data.packet_count, cell.data.byte_count = packets, octets
        yield reply
