"""sdnbench's own P4 programs for bmv2 (v1model): P4 source, bmv2 JSON and p4info, shipped together.

The JSON and p4info files are what p4c would produce for the sources; where p4c
is absent they were written by the project (each JSON says so in "__meta__").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

from sdnbench.errors import SdnbenchError
from sdnbench.p4.p4info import P4InfoIndex
from sdnbench.p4.protos import p4info_pb2, text_format

PROGRAM_DIR = Path(__file__).parent / "programs"
PROGRAMS = ("l2_learning", "forwarding")

CPU_PORT = 255            # bmv2 `--cpu-port`: packet-in leaves and packet-out enters here
FLOOD_GROUP = 1           # multicast group a table miss (or a flooded packet-out) replicates to
PORT_COUNTER_SIZE = 512   # per-port counters are indexed by the 9-bit port number


@dataclass(frozen=True)
class Program:
    """One P4 program: its p4info, the bmv2 JSON pushed as device config, and where its source is."""

    name: str
    p4info: p4info_pb2.P4Info = field(repr=False)
    device_config: bytes = field(repr=False)
    source_path: Path

    @cached_property
    def index(self) -> P4InfoIndex:
        """Name lookups in the p4info."""
        return P4InfoIndex(self.p4info)

    @property
    def json_path(self) -> Path:
        """The bmv2 JSON file."""
        return self.source_path.with_suffix(".json")

    @property
    def p4info_path(self) -> Path:
        """The p4info file (protobuf text format)."""
        return self.source_path.with_suffix(".p4info.txtpb")

    @property
    def cookie(self) -> int:
        """A 64-bit fingerprint of the device config, sent with the pipeline to recognise it later."""
        return int.from_bytes(hashlib.sha256(self.device_config).digest()[:8], "big")

    def table_id(self, name: str) -> int:
        """Id of a table ("MyIngress.dmac" or "dmac")."""
        return self.index.table_id(name)

    def action_id(self, name: str) -> int:
        """Id of an action ("MyIngress.forward" or "forward")."""
        return self.index.action_id(name)

    def counter_id(self, name: str) -> int:
        """Id of an indexed counter."""
        return self.index.counter_id(name)

    def field_id(self, table: str, field_name: str) -> int:
        """Id of a table's match field."""
        return self.index.match_field(table, field_name).id

    def param_id(self, action: str, param: str) -> int:
        """Id of an action parameter."""
        return self.index.param(action, param).id

    def field_bitwidth(self, table: str, field_name: str) -> int:
        """Bit width of a table's match field."""
        return self.index.field_bitwidth(table, field_name)

    def param_bitwidth(self, action: str, param: str) -> int:
        """Bit width of an action parameter."""
        return self.index.param_bitwidth(action, param)


def read_p4info(path: Path) -> p4info_pb2.P4Info:
    """A P4Info from its protobuf text format."""
    return text_format.Parse(path.read_text(), p4info_pb2.P4Info())


@lru_cache(maxsize=None)
def program(name: str) -> Program:
    """The shipped program called `name` (one of PROGRAMS)."""
    if name not in PROGRAMS:
        raise SdnbenchError(f"no P4 program {name!r}: sdnbench ships {', '.join(PROGRAMS)}")
    source = PROGRAM_DIR / f"{name}.p4"
    return Program(name=name, p4info=read_p4info(source.with_suffix(".p4info.txtpb")),
                   device_config=source.with_suffix(".json").read_bytes(), source_path=source)
