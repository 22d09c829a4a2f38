"""Forwarding rules as OpenDaylight RESTCONF writes (RFC 8040 paths under /rests, openflowplugin's model).

A switch's rules go in one request: a merge (PATCH) of table 0 of its node in
the config datastore, whose flows openflowplugin's forwarding rules manager
turns into FLOW_MODs. Whether they reached the switch is read from the
operational datastore, where openflowplugin's statistics polling (every few
seconds) reports the switch's flows under the config flow's id once it matched
them; that polling interval is part of the confirmed time.
"""

from __future__ import annotations

import urllib.parse

from .programmer import FlowProgrammer
from .rules import ETH_TYPE_ARP, Rule

NODES = "/rests/data/opendaylight-inventory:nodes"
PREFIX = "sdnbench-"


def node_path(dpid: int) -> str:
    """RESTCONF path of switch dpid's inventory node (openflow:<decimal dpid>, URL-encoded)."""
    return f"{NODES}/node={urllib.parse.quote(f'openflow:{dpid}', safe='')}"


def table_path(dpid: int, table: int = 0) -> str:
    """RESTCONF path of one flow table of switch dpid."""
    return f"{node_path(dpid)}/flow-node-inventory:table={table}"


def flow_path(dpid: int, flow_id: str, table: int = 0) -> str:
    """RESTCONF path of one flow."""
    return f"{table_path(dpid, table)}/flow={urllib.parse.quote(flow_id, safe='')}"


def output_instructions(port: int) -> dict:
    """Apply-actions with one output to port."""
    return {"instruction": [{"order": 0, "apply-actions": {"action": [
        {"order": 0, "output-action": {"output-node-connector": str(port), "max-length": 65535}}]}}]}


def odl_flow(rule: Rule, table: int = 0) -> dict:
    """One rule in openflowplugin's flow model (opendaylight-flow-inventory)."""
    if rule.arp_tpa:
        match = {"ethernet-match": {"ethernet-type": {"type": ETH_TYPE_ARP}},
                 "arp-target-transport-address": f"{rule.arp_tpa}/32"}
    else:
        match = {"ethernet-match": {"ethernet-destination": {"address": rule.eth_dst}}}
    return {"id": rule.name, "flow-name": rule.name, "table_id": table, "priority": rule.priority,
            "cookie": rule.cookie, "idle-timeout": 0, "hard-timeout": 0, "match": match,
            "instructions": output_instructions(rule.out_port)}


def table_body(rules: list[Rule], table: int = 0) -> dict:
    """Body of a table-0 write carrying rules."""
    return {"flow-node-inventory:table": [{"id": table, "flow": [odl_flow(r, table) for r in rules]}]}


def flow_ids(table_json) -> set[str]:
    """Ids of the flows in a RESTCONF table answer (empty when there is none)."""
    tables = (table_json or {}).get("flow-node-inventory:table", [])
    return {f.get("id", "") for t in tables for f in t.get("flow", [])}


def inventory_dpids(nodes_json) -> set[int]:
    """Datapath ids of the openflow:<dpid> nodes in a RESTCONF inventory answer."""
    nodes = (nodes_json or {}).get("opendaylight-inventory:nodes", {}).get("node", [])
    return {int(n["id"].split(":", 1)[1]) for n in nodes if n.get("id", "").startswith("openflow:")}


class OdlFlowProgrammer(FlowProgrammer):
    """sdnbench rules through OpenDaylight's RESTCONF (openflowplugin flow model), table 0."""

    api = "opendaylight-restconf"

    def write(self, dpid: int, rules: list[Rule]) -> None:
        """Merge rules into switch dpid's table 0 of the config datastore."""
        self.send(f"writing flows of openflow:{dpid}", "PATCH", table_path(dpid), table_body(rules))

    def write_flow(self, dpid: int, rule: Rule) -> None:
        """PUT one flow at its own path in the config datastore."""
        self.send(f"writing flow {rule.name} of openflow:{dpid}", "PUT", flow_path(dpid, rule.name),
                  {"flow-node-inventory:flow": [odl_flow(rule)]})

    def switches(self) -> set[int]:
        """Datapath ids in the operational inventory (409 data-missing until the first switch is there)."""
        reply = self.client.get(NODES + "?content=nonconfig")
        return inventory_dpids(reply.json()) if reply.ok else set()

    def installed(self, dpid: int) -> set[str]:
        """Ids of sdnbench flows in switch dpid's operational table 0."""
        try:
            reply = self.client.get(table_path(dpid) + "?content=nonconfig")
        except OSError:
            return set()
        if not reply.ok:
            return set()   # 409 data-missing until statistics of the table arrive
        return {i for i in flow_ids(reply.json()) if i.startswith(PREFIX)}

    def remove(self, dpid: int) -> None:
        """Delete the sdnbench flows of switch dpid from the config datastore, one by one."""
        what = f"removing flows of openflow:{dpid}"
        flows = flow_ids(self.send(what, "GET", table_path(dpid) + "?content=config").json())
        for flow_id in sorted(i for i in flows if i.startswith(PREFIX)):
            self.send(what, "DELETE", flow_path(dpid, flow_id))
