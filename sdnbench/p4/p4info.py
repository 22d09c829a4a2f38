"""Lookups in a P4Info by name (full name or alias): ids and bit widths of tables, actions, counters."""

from __future__ import annotations

from sdnbench.errors import SdnbenchError
from sdnbench.p4.protos import p4info_pb2


class P4InfoError(SdnbenchError):
    """A name the program does not define."""


class P4InfoIndex:
    """Name -> entity maps over one P4Info message."""

    KINDS = ("tables", "actions", "counters", "direct_counters", "meters", "registers",
             "controller_packet_metadata", "digests", "action_profiles")

    def __init__(self, p4info: p4info_pb2.P4Info):
        self.p4info = p4info
        self._by_name: dict[str, dict[str, object]] = {}
        self._by_id: dict[int, object] = {}
        for kind in self.KINDS:
            names: dict[str, object] = {}
            for entity in getattr(p4info, kind):
                names[entity.preamble.name] = entity
                names.setdefault(entity.preamble.alias, entity)
                self._by_id[entity.preamble.id] = entity
            self._by_name[kind] = names

    def _get(self, kind: str, name: str):
        try:
            return self._by_name[kind][name]
        except KeyError:
            known = sorted(e.preamble.name for e in getattr(self.p4info, kind))
            raise P4InfoError(f"no {kind.rstrip('s').replace('_', ' ')} {name!r} in the program "
                              f"(it has: {', '.join(known) or 'none'})") from None

    def by_id(self, entity_id: int):
        """The table, action, counter... with this id (None if unknown)."""
        return self._by_id.get(entity_id)

    def table(self, name: str) -> p4info_pb2.Table:
        """The table called `name`."""
        return self._get("tables", name)

    def action(self, name: str) -> p4info_pb2.Action:
        """The action called `name`."""
        return self._get("actions", name)

    def counter(self, name: str) -> p4info_pb2.Counter:
        """The indexed counter called `name`."""
        return self._get("counters", name)

    def controller_header(self, name: str) -> p4info_pb2.ControllerPacketMetadata:
        """The controller header ("packet_in" or "packet_out")."""
        return self._get("controller_packet_metadata", name)

    def table_id(self, name: str) -> int:
        """Id of a table."""
        return self.table(name).preamble.id

    def action_id(self, name: str) -> int:
        """Id of an action."""
        return self.action(name).preamble.id

    def counter_id(self, name: str) -> int:
        """Id of an indexed counter."""
        return self.counter(name).preamble.id

    def match_field(self, table: str, field: str) -> p4info_pb2.MatchField:
        """A table's match field by name ("hdr.ethernet.dstAddr"), or by its last component ("dstAddr")."""
        fields = self.table(table).match_fields
        for candidate in fields:
            if candidate.name == field:
                return candidate
        short = [c for c in fields if c.name.rsplit(".", 1)[-1] == field]
        if len(short) == 1:
            return short[0]
        raise P4InfoError(f"table {table!r} has no match field {field!r} "
                          f"(it has: {', '.join(c.name for c in fields) or 'none'})")

    def param(self, action: str, param: str) -> p4info_pb2.Action.Param:
        """An action's parameter by name."""
        for candidate in self.action(action).params:
            if candidate.name == param:
                return candidate
        raise P4InfoError(f"action {action!r} has no parameter {param!r} "
                          f"(it has: {', '.join(p.name for p in self.action(action).params) or 'none'})")

    def field_bitwidth(self, table: str, field: str) -> int:
        """Bit width of a table's match field."""
        return self.match_field(table, field).bitwidth

    def param_bitwidth(self, action: str, param: str) -> int:
        """Bit width of an action parameter."""
        return self.param(action, param).bitwidth

    def metadata(self, header: str) -> list[p4info_pb2.ControllerPacketMetadata.Metadata]:
        """The fields of a controller header, in order."""
        return list(self.controller_header(header).metadata)
