"""sdnbench's P4Runtime controller, run as its own process: `python -m sdnbench.p4.controller_app CONFIG`.

CONFIG (JSON, written by sdnbench/controllers/p4rt.py) names the mode, the
program, every switch (gRPC address, device id, flood ports) and, for the
proactive mode, each switch's table entries. For every switch the app
arbitrates (primary controller), pushes the program, writes the flood group
and the entries, then writes the status file: how long programming took. It
stays up as primary controller until SIGTERM.

- learning (program l2_learning): a packet from an unknown source MAC comes in
  as a packet-in; the app learns its port (smac and dmac entries) and sends the
  packet on with packet-outs: to the learned port of its destination, or to
  every flood port but the one it came in on.
- proactive (program forwarding): nothing after programming; the data plane
  forwards and floods (over a spanning tree) on its own.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
import time
from pathlib import Path

from ..forwarding.p4rt import DMAC, DST, FLOOD_GROUP, FORWARD, NO_ACTION, SMAC, SRC
from .encoding import mac_text
from .programs import program
from .runtime import P4RuntimeClient

log = logging.getLogger("sdnbench.p4rt")


class Learner:
    """Reactive MAC learning on one switch from its packet-ins."""

    def __init__(self, name: str, client: P4RuntimeClient, flood: list[int]):
        self.name, self.client, self.flood = name, client, flood
        self.ports: dict[bytes, int] = {}      # MAC -> port it was learned on
        self.packet_ins = 0

    def run(self) -> None:
        """Handle packet-ins until the stream closes."""
        for payload, port in self.client.packet_ins():
            self.packet_ins += 1
            if port is None or len(payload) < 14:
                continue
            try:
                self.handle(payload, port)
            except Exception as exc:   # one packet's failure must not end learning on the switch
                log.warning("%s: packet-in from port %s: %s", self.name, port, exc)

    def handle(self, payload: bytes, port: int) -> None:
        """Learn the source, then send the packet where its destination is (or flood it)."""
        dst, src = payload[0:6], payload[6:12]
        if not src[0] & 1 and src not in self.ports:
            self.ports[src] = port
            mac = mac_text(int.from_bytes(src, "big"))
            self.client.write_entry(SMAC, {SRC: mac}, NO_ACTION, {})
            self.client.write_entry(DMAC, {DST: mac}, FORWARD, {"port": port})
        out = self.ports.get(dst)
        for egress in ([out] if out is not None else self.flood):
            if egress != port:
                self.client.packet_out(payload, egress)


def program_switch(sw: dict, prog, entries: list[dict]) -> tuple[P4RuntimeClient, float]:
    """Arbitrate, push the pipeline, write the flood group and entries; (client, seconds it took)."""
    t0 = time.monotonic()
    client = P4RuntimeClient(sw["address"], sw["device_id"], timeout_s=10.0)
    client.arbitrate()
    client.set_pipeline(prog)
    client.write_multicast_group(FLOOD_GROUP, sw["flood_ports"])
    for e in entries:
        client.write_entry(e["table"], e["match"], e["action"], e["params"], e.get("priority"))
    return client, time.monotonic() - t0


def main(argv: list[str]) -> int:
    """Program every switch of the config, report, then serve until SIGTERM."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stdout)
    config = json.loads(Path(argv[0]).read_text())
    mode, prog = config["mode"], program(config["program"])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    clients, seconds, threads = {}, {}, []
    t0 = time.monotonic()
    try:
        for name, sw in config["switches"].items():
            clients[name], seconds[name] = program_switch(sw, prog, config.get("entries", {}).get(name, []))
            log.info("%s: %s programmed in %.3f s", name, prog.name, seconds[name])
            if mode == "learning":
                learner = Learner(name, clients[name], sw["flood_ports"])
                threads.append(threading.Thread(target=learner.run, name=f"learn-{name}", daemon=True))
                threads[-1].start()
        status = {"ready": True, "mode": mode, "program": prog.name, "switches": len(clients),
                  "entries": sum(len(v) for v in config.get("entries", {}).values()),
                  "programming_s": round(time.monotonic() - t0, 4),
                  "programming_max_switch_s": round(max(seconds.values(), default=0.0), 4)}
        tmp = Path(config["status"] + ".tmp")
        tmp.write_text(json.dumps(status))
        tmp.replace(config["status"])   # whole or absent: the adapter never reads half a file
        log.info("ready: %s", status)
        while not stop.wait(1.0):
            pass
    finally:
        for client in clients.values():
            client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
