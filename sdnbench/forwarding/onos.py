"""Forwarding rules as ONOS REST API v1 writes (/onos/v1/flows), for an ONOS run as a remote controller.

Written to ONOS's documented flow codec and tested against a fake server;
not run against a live ONOS here (ONOS cannot be installed from the package
registries sdnbench uses). ONOS gives flows its own ids, so a rule counts as
installed when a flow of sdnbench's application on that device, in state
ADDED, has the rule's priority and match.
"""

from __future__ import annotations

from .programmer import FlowProgrammer
from .rules import ETH_TYPE_ARP, Rule

APP_ID = "org.sdnbench"


def device_id(dpid: int) -> str:
    """ONOS's id of an OpenFlow switch: of: and the dpid in 16 hex digits."""
    return f"of:{dpid:016x}"


def criteria(rule: Rule) -> list[dict]:
    """The rule's match as ONOS selector criteria."""
    if rule.arp_tpa:
        return [{"type": "ETH_TYPE", "ethType": f"{ETH_TYPE_ARP:#x}"}, {"type": "ARP_TPA", "ip": rule.arp_tpa}]
    return [{"type": "ETH_DST", "mac": rule.eth_dst}]


def onos_flow(rule: Rule) -> dict:
    """One rule in ONOS's flow JSON (permanent, output to one port)."""
    return {"priority": rule.priority, "timeout": 0, "isPermanent": True, "deviceId": device_id(rule.dpid),
            "treatment": {"instructions": [{"type": "OUTPUT", "port": str(rule.out_port)}]},
            "selector": {"criteria": criteria(rule)}}


def match_key(priority: int, crits: list[dict]) -> tuple:
    """What identifies a flow of ours: priority and criteria, independent of order and number spelling."""
    def norm(c: dict) -> tuple:
        items = []
        for k, v in c.items():
            if k == "ethType":
                v = int(v, 16) if isinstance(v, str) else int(v)
            items.append((k, str(v).lower()))
        return tuple(sorted(items))
    return (int(priority), tuple(sorted(norm(c) for c in crits)))


class OnosFlowProgrammer(FlowProgrammer):
    """sdnbench rules through ONOS's REST API, under the application id org.sdnbench."""

    api = "onos-rest"

    def __init__(self, client):
        super().__init__(client)
        self.names: dict[tuple, str] = {}   # (dpid, match key) -> rule name, from write()

    def write(self, dpid: int, rules: list[Rule]) -> None:
        """POST the switch's rules in one batch."""
        for r in rules:
            self.names[(dpid, match_key(r.priority, criteria(r)))] = r.name
        self.send(f"writing flows of {device_id(dpid)}", "POST", f"/onos/v1/flows?appId={APP_ID}",
                  {"flows": [onos_flow(r) for r in rules]})

    def switches(self) -> set[int]:
        """Datapath ids of the OpenFlow devices ONOS reports available."""
        reply = self.client.get("/onos/v1/devices")
        if not reply.ok:
            return set()
        return {int(d["id"][3:], 16) for d in (reply.json() or {}).get("devices", [])
                if str(d.get("id", "")).startswith("of:") and d.get("available")}

    def installed(self, dpid: int) -> set[str]:
        """Names of the rules written to dpid whose flow ONOS reports ADDED."""
        try:
            reply = self.client.get(f"/onos/v1/flows/application/{APP_ID}")
        except OSError:
            return set()
        if not reply.ok:
            return set()
        out = set()
        for flow in (reply.json() or {}).get("flows", []):
            if flow.get("deviceId") == device_id(dpid) and flow.get("state") == "ADDED":
                key = match_key(flow.get("priority", -1), flow.get("selector", {}).get("criteria", []))
                if (dpid, key) in self.names:
                    out.add(self.names[(dpid, key)])
        return out

    def remove(self, dpid: int) -> None:
        """Delete every flow of sdnbench's application (ONOS removes them per application, on all devices)."""
        self.send("removing flows", "DELETE", f"/onos/v1/flows/application/{APP_ID}")
