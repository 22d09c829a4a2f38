"""A P4Runtime client for one device: arbitration, pipeline, table entries, multicast, counters, packet I/O."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

from sdnbench.errors import P4RuntimeError, SdnbenchError
from sdnbench.p4.encoding import decode, encode
from sdnbench.p4.p4info import P4InfoIndex
from sdnbench.p4.protos import code_pb2, grpc, p4info_pb2, p4runtime_pb2, p4runtime_pb2_grpc, status_pb2

_CLOSED = object()   # put on the packet-in queue when the stream ends


class P4RuntimeClient:
    """The primary controller of one P4Runtime device (e.g. a bmv2 simple_switch_grpc)."""

    def __init__(self, address: str, device_id: int, election_id=(0, 1), timeout_s: float = 5.0):
        self.address, self.device_id, self.timeout_s = address, device_id, timeout_s
        self.election_id = p4runtime_pb2.Uint128(high=election_id[0], low=election_id[1])
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.index: P4InfoIndex | None = None
        self._outgoing: queue.Queue = queue.Queue()
        self._arbitration: queue.Queue = queue.Queue()
        self._packet_ins: queue.Queue = queue.Queue()
        self._stream = None
        self._reader: threading.Thread | None = None
        self._stream_error: str | None = None
        self._closed = False

    # -- errors -------------------------------------------------------------------------------

    def _fail(self, what: str, detail: str) -> P4RuntimeError:
        return P4RuntimeError(self.address, what, detail)

    def _rpc_error(self, what: str, err: grpc.RpcError) -> P4RuntimeError:
        """One line from a grpc error, with the per-update errors a Write returns in its details."""
        code = err.code().name if err.code() else "UNKNOWN"
        detail = f"{code}: {err.details() or 'no detail'}"
        if err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            detail += f" (is the switch running and listening on {self.address}?)"
        updates = _update_errors(err)
        if updates:
            detail += "; " + "; ".join(updates)
        return self._fail(what, detail)

    def _call(self, what: str, method, request):
        try:
            return method(request, timeout=self.timeout_s)
        except grpc.RpcError as err:
            raise self._rpc_error(what, err) from None

    # -- stream and arbitration ---------------------------------------------------------------

    def arbitrate(self) -> None:
        """Open the stream channel and become primary controller; the stream stays open in a thread."""
        try:
            grpc.channel_ready_future(self.channel).result(timeout=self.timeout_s)
        except grpc.FutureTimeoutError:
            raise self._fail("connect", f"no gRPC server answered within {self.timeout_s:g} s "
                                        f"(is the switch running and listening?)") from None
        if self._stream is None:
            self._stream = self.stub.StreamChannel(iter(self._outgoing.get, _CLOSED))
            self._reader = threading.Thread(target=self._read_stream, name=f"p4rt-{self.address}", daemon=True)
            self._reader.start()
        self._outgoing.put(p4runtime_pb2.StreamMessageRequest(arbitration=p4runtime_pb2.MasterArbitrationUpdate(
            device_id=self.device_id, election_id=self.election_id)))
        try:
            answer = self._arbitration.get(timeout=self.timeout_s)
        except queue.Empty:
            raise self._fail("arbitration", f"no answer within {self.timeout_s:g} s") from None
        if answer is None:
            raise self._fail("arbitration", self._stream_error or "the stream closed")
        if answer.status.code != code_pb2.OK:
            raise self._fail("arbitration", f"not primary controller for device {self.device_id} "
                                            f"({code_pb2.Code.Name(answer.status.code)}: {answer.status.message})")

    def _read_stream(self) -> None:
        """Sort what the device sends on the stream: arbitration answers and packet-ins."""
        try:
            for message in self._stream:
                kind = message.WhichOneof("update")
                if kind == "arbitration":
                    self._arbitration.put(message.arbitration)
                elif kind == "packet":
                    self._packet_ins.put(self._packet_in(message.packet))
                elif kind == "error":
                    self._stream_error = f"{message.error.message} (code {message.error.canonical_code})"
        except grpc.RpcError as err:
            if not self._closed:
                self._stream_error = f"{err.code().name}: {err.details()}"
        finally:
            self._arbitration.put(None)
            self._packet_ins.put(_CLOSED)

    def _packet_in(self, packet) -> tuple[bytes, int | None]:
        port = None
        if self.index is not None:
            names = {m.id: m.name for m in self.index.metadata("packet_in")}
            for meta in packet.metadata:
                if names.get(meta.metadata_id) == "ingress_port":
                    port = decode(meta.value)
        return packet.payload, port

    def packet_ins(self, timeout_s: float | None = None) -> Iterator[tuple[bytes, int | None]]:
        """(payload, ingress_port) of each packet-in, as they come; ends when the stream closes or
        (with `timeout_s`) when none came for that long."""
        while True:
            try:
                item = self._packet_ins.get(timeout=timeout_s)
            except queue.Empty:
                return
            if item is _CLOSED:
                self._packet_ins.put(_CLOSED)   # later callers end too
                return
            yield item

    def packet_out(self, payload: bytes, egress_port: int, mcast_group: int = 0) -> None:
        """Send a packet out of `egress_port` (or replicate it to `mcast_group` when not 0)."""
        if self._stream is None:
            raise self._fail("packet-out", "call arbitrate() first")
        values = {"egress_port": egress_port, "mcast_grp": mcast_group}
        metadata = [p4runtime_pb2.PacketMetadata(metadata_id=m.id, value=encode(values.get(m.name, 0), m.bitwidth))
                    for m in self._require_index("packet-out").metadata("packet_out")]
        self._outgoing.put(p4runtime_pb2.StreamMessageRequest(
            packet=p4runtime_pb2.PacketOut(payload=payload, metadata=metadata)))

    # -- pipeline -----------------------------------------------------------------------------

    def set_pipeline(self, program) -> None:
        """Push a program (its p4info and bmv2 JSON) with VERIFY_AND_COMMIT."""
        config = p4runtime_pb2.ForwardingPipelineConfig(
            p4info=program.p4info, p4_device_config=program.device_config,
            cookie=p4runtime_pb2.ForwardingPipelineConfig.Cookie(cookie=program.cookie))
        request = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=self.election_id, config=config,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        self._call(f"set pipeline {program.name}", self.stub.SetForwardingPipelineConfig, request)
        self.index = P4InfoIndex(program.p4info)

    def get_pipeline(self) -> p4info_pb2.P4Info | None:
        """The p4info of the pipeline the device runs, None when it has none."""
        request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        try:
            reply = self.stub.GetForwardingPipelineConfig(request, timeout=self.timeout_s)
        except grpc.RpcError as err:
            if err.code() == grpc.StatusCode.FAILED_PRECONDITION:   # bmv2: no pipeline set yet
                return None
            raise self._rpc_error("get pipeline", err) from None
        if reply.config.p4info.ByteSize() == 0:   # bmv2 answers an empty config before the first push
            return None
        if self.index is None:
            self.index = P4InfoIndex(reply.config.p4info)
        return reply.config.p4info

    def _require_index(self, what: str) -> P4InfoIndex:
        if self.index is None:
            raise self._fail(what, "no pipeline known: call set_pipeline() or get_pipeline() first")
        return self.index

    # -- writes -------------------------------------------------------------------------------

    def _write(self, what: str, update_type, entity) -> None:
        request = p4runtime_pb2.WriteRequest(device_id=self.device_id, election_id=self.election_id)
        request.updates.add(type=update_type, entity=entity)
        self._call(what, self.stub.Write, request)

    def table_entry(self, table: str, match: dict, action: str | None = None, params: dict | None = None,
                    priority: int | None = None) -> p4runtime_pb2.TableEntry:
        """The TableEntry message for `table` (an empty match means the table's default action)."""
        index = self._require_index(f"table {table}")
        try:
            entry = p4runtime_pb2.TableEntry(table_id=index.table_id(table))
            for name, value in match.items():
                entry.match.append(_field_match(index.match_field(table, name), value))
            if priority is not None:
                entry.priority = priority
            if not match:
                entry.is_default_action = True
            if action is not None:
                entry.action.action.action_id = index.action_id(action)
                for name, value in (params or {}).items():
                    param = index.param(action, name)
                    entry.action.action.params.add(param_id=param.id, value=encode(value, param.bitwidth))
        except SdnbenchError as err:
            raise self._fail(f"table {table}", str(err)) from None
        return entry

    def write_entry(self, table: str, match: dict, action: str, params: dict, priority: int | None = None,
                    modify: bool = False) -> None:
        """Insert a table entry (`modify`: change an existing one); an empty `match` sets the default action."""
        entry = self.table_entry(table, match, action, params, priority)
        update = p4runtime_pb2.Update.MODIFY if modify or not match else p4runtime_pb2.Update.INSERT
        self._write(f"write to table {table}", update, p4runtime_pb2.Entity(table_entry=entry))

    def delete_entry(self, table: str, match: dict, priority: int | None = None) -> None:
        """Delete the table entry with this match."""
        entry = self.table_entry(table, match, priority=priority)
        self._write(f"delete from table {table}", p4runtime_pb2.Update.DELETE, p4runtime_pb2.Entity(table_entry=entry))

    def write_multicast_group(self, group_id: int, ports) -> None:
        """Create (or replace) multicast group `group_id` replicating to `ports`."""
        entity = p4runtime_pb2.Entity()
        group = entity.packet_replication_engine_entry.multicast_group_entry
        group.multicast_group_id = group_id
        for port in ports:
            # egress_port (not the newer bytes `port`) so that bmv2 builds of every age read it.
            group.replicas.add(egress_port=port, instance=1)
        try:
            self._write(f"multicast group {group_id}", p4runtime_pb2.Update.INSERT, entity)
        except P4RuntimeError as insert_error:
            # Servers differ in the code they give a group that exists; a replace that fails too
            # means the insert's reason was the real one.
            try:
                self._write(f"multicast group {group_id}", p4runtime_pb2.Update.MODIFY, entity)
            except P4RuntimeError:
                raise insert_error from None

    # -- reads --------------------------------------------------------------------------------

    def read_counters(self, name: str) -> dict[int, tuple[int, int]]:
        """Every cell of an indexed counter: index -> (packets, bytes)."""
        index = self._require_index(f"counter {name}")
        try:
            counter_id = index.counter_id(name)
        except SdnbenchError as err:
            raise self._fail(f"counter {name}", str(err)) from None
        request = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        request.entities.add().counter_entry.counter_id = counter_id
        cells: dict[int, tuple[int, int]] = {}
        try:
            for reply in self.stub.Read(request, timeout=self.timeout_s):
                for entity in reply.entities:
                    cell = entity.counter_entry
                    cells[cell.index.index] = (cell.data.packet_count, cell.data.byte_count)
        except grpc.RpcError as err:
            raise self._rpc_error(f"read counter {name}", err) from None
        return cells

    # -- lifetime -----------------------------------------------------------------------------

    def close(self) -> None:
        """End the stream (the device elects another primary) and the channel."""
        self._closed = True
        self._outgoing.put(_CLOSED)
        if self._stream is not None:
            self._stream.cancel()
        if self._reader is not None:
            self._reader.join(timeout=self.timeout_s)
        self.channel.close()

    def __enter__(self) -> P4RuntimeClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _field_match(field: p4info_pb2.MatchField, value) -> p4runtime_pb2.FieldMatch:
    """A FieldMatch of the field's match type: a value (exact, optional), (value, prefix_len) for
    LPM, (value, mask) for ternary, (low, high) for range."""
    width, kind = field.bitwidth, field.match_type
    match = p4runtime_pb2.FieldMatch(field_id=field.id)
    if kind == p4info_pb2.MatchField.EXACT:
        match.exact.value = encode(value, width)
    elif kind == p4info_pb2.MatchField.LPM:
        match.lpm.value, match.lpm.prefix_len = encode(value[0], width), value[1]
    elif kind == p4info_pb2.MatchField.TERNARY:
        match.ternary.value, match.ternary.mask = encode(value[0], width), encode(value[1], width)
    elif kind == p4info_pb2.MatchField.RANGE:
        match.range.low, match.range.high = encode(value[0], width), encode(value[1], width)
    elif kind == p4info_pb2.MatchField.OPTIONAL:
        match.optional.value = encode(value, width)
    else:
        raise SdnbenchError(f"match field {field.name} has a match type this client does not write")
    return match


def _update_errors(err: grpc.RpcError) -> list[str]:
    """The failed updates' messages a P4Runtime Write error carries in grpc-status-details-bin."""
    found = []
    for key, value in (err.trailing_metadata() or ()):
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            error = p4runtime_pb2.Error()
            if detail.Unpack(error) and error.canonical_code != code_pb2.OK:
                found.append(f"{code_pb2.Code.Name(error.canonical_code)}: {error.message}")
    return found
