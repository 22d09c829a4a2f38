"""Request templates for the northbound REST APIs of SDN controllers, as data.

Each preset names the API, its usual port, authentication and a weighted list
of request templates in the `sdnbench-apiload --requests` format. Placeholders
are written `${name}`: a string that is exactly one placeholder takes the
variable's value with its JSON type (so `"${dpid}"` becomes the integer 1 in
a Ryu flow body), and placeholders inside longer strings are replaced by text
(`/stats/flow/${dpid}` becomes `/stats/flow/1`). Adding a controller means
adding a dict here, never a code path.
"""

from __future__ import annotations

import copy
import re
from typing import Any

#: Cookie that marks flows sdnbench adds through a REST API, so they can be deleted by cookie.
FLOW_COOKIE = 0x5DB

_RYU_FLOW = {
    "dpid": "${dpid}",
    "cookie": FLOW_COOKIE,
    "table_id": 0,
    "priority": 11,
    "idle_timeout": 0,
    "hard_timeout": 0,
    "match": {"dl_type": 2048, "nw_dst": "${probe_ip}"},
    "actions": [{"type": "OUTPUT", "port": "${out_port}"}],
}

_ODL_DATA = "/rests/data"
#: Table 1 of switch ${dpid}: sdnbench's proactive forwarding lives in table 0, untouched by the load.
_ODL_TABLE_1 = f"{_ODL_DATA}/opendaylight-inventory:nodes/node=openflow%3A${{dpid}}/flow-node-inventory:table=1"
#: Distinct flows the write preset cycles through. OpenDaylight's datastore refuses concurrent
#: writes to one path (HTTP 500, OptimisticLockFailedException), so requests address different
#: flows, and a flow's delete comes this many requests after its write.
_ODL_FLOWS = 16


def _odl_flowmod_requests() -> list[dict[str, Any]]:
    """PUT flows sdnbench-nbi-0..N-1 (matching 10.255.0.1..N), then DELETE them, in that order."""
    puts, deletes = [], []
    for i in range(_ODL_FLOWS):
        path = f"{_ODL_TABLE_1}/flow=sdnbench-nbi-{i}"
        flow = {
            "id": f"sdnbench-nbi-{i}", "table_id": 1, "priority": 11, "cookie": FLOW_COOKIE,
            "match": {"ethernet-match": {"ethernet-type": {"type": 2048}}, "ipv4-destination": f"10.255.0.{i + 1}/32"},
            "instructions": {"instruction": [{"order": 0, "apply-actions": {"action": [
                {"order": 0, "output-action": {"output-node-connector": "${out_port}", "max-length": 65535}}]}}]},
        }
        puts.append({"name": "flow-put", "method": "PUT", "path": path, "body": {"flow-node-inventory:flow": [flow]},
                     "weight": 1})
        deletes.append({"name": "flow-delete", "method": "DELETE", "path": path, "weight": 1})
    return puts + deletes


PRESETS: dict[str, dict[str, Any]] = {
    "ryu-ofctl": {
        "description": "Ryu / os-ken ofctl_rest, read-only statistics (what published load tests query)",
        "controllers": ["ryu", "osken"],
        "port": 8080,
        "basic_auth": None,
        "defaults": {"dpid": 1},
        "requests": [
            {"name": "switches", "method": "GET", "path": "/stats/switches", "weight": 4},
            {"name": "flows", "method": "GET", "path": "/stats/flow/${dpid}", "weight": 2},
            {"name": "desc", "method": "GET", "path": "/stats/desc/${dpid}", "weight": 1},
        ],
    },
    "ryu-ofctl-flowmod": {
        "description": "Ryu / os-ken ofctl_rest, add and delete one marked flow (writes reach the switch)",
        "controllers": ["ryu", "osken"],
        "port": 8080,
        "basic_auth": None,
        "defaults": {"dpid": 1, "probe_ip": "10.255.0.1", "out_port": 1},
        "requests": [
            {"name": "flow-add", "method": "POST", "path": "/stats/flowentry/add", "body": _RYU_FLOW, "weight": 1},
            {
                "name": "flow-delete",
                "method": "POST",
                "path": "/stats/flowentry/delete",
                "body": {"dpid": "${dpid}", "cookie": FLOW_COOKIE, "cookie_mask": 0xFFFFFFFFFFFFFFFF, "table_id": 0},
                "weight": 1,
            },
        ],
    },
    "faucet-prometheus": {
        "description": "Faucet's Prometheus endpoint (Faucet has no REST configuration API)",
        "controllers": ["faucet"],
        "port": 9302,
        "basic_auth": None,
        "expect_body": "faucet_",
        "defaults": {},
        "requests": [{"name": "metrics", "method": "GET", "path": "/metrics", "weight": 1}],
    },
    "pox-webservice": {
        "description": "POX web.webcore + openflow.webservice JSON-RPC at /OF/ (port 8000)",
        "controllers": ["pox"],
        "port": 8000,
        "basic_auth": None,
        "expect_body": "\"result\"",
        "defaults": {"pox_dpid": "00-00-00-00-00-01"},
        "requests": [
            {"name": "get_switches", "method": "POST", "path": "/OF/",
             "body": {"method": "get_switches", "id": 1}, "weight": 2},
            {"name": "get_switch_desc", "method": "POST", "path": "/OF/",
             "body": {"method": "get_switch_desc", "params": {"dpid": "${pox_dpid}"}, "id": 2}, "weight": 1},
        ],
    },
    "floodlight": {
        "description": "Floodlight REST API (remote controller)",
        "controllers": ["floodlight", "remote"],
        "port": 8080,
        "basic_auth": None,
        "defaults": {},
        "requests": [
            {"name": "switches", "method": "GET", "path": "/wm/core/controller/switches/json", "weight": 3},
            {"name": "links", "method": "GET", "path": "/wm/topology/links/json", "weight": 1},
        ],
    },
    "onos": {
        "description": "ONOS REST API v1 (remote controller, default credentials onos:rocks)",
        "controllers": ["onos", "remote"],
        "port": 8181,
        "basic_auth": "onos:rocks",
        "defaults": {},
        "requests": [
            {"name": "devices", "method": "GET", "path": "/onos/v1/devices", "weight": 2},
            {"name": "flows", "method": "GET", "path": "/onos/v1/flows", "weight": 1},
        ],
    },
    "opendaylight-restconf": {
        "description": "OpenDaylight RESTCONF (draft-bierman02 URLs, releases up to Sodium)",
        "controllers": ["remote"],
        "port": 8181,
        "basic_auth": "admin:admin",
        "defaults": {},
        "requests": [
            {"name": "nodes", "method": "GET", "path": "/restconf/operational/opendaylight-inventory:nodes",
             "headers": {"Accept": "application/json"}, "weight": 1},
        ],
    },
    "opendaylight-rfc8040": {
        "description": "OpenDaylight RESTCONF (RFC 8040 URLs, Neon and later): read the topology and the inventory",
        "controllers": ["odl", "remote"],
        "port": 8181,
        "basic_auth": "admin:admin",
        "defaults": {},
        "requests": [
            {"name": "topology", "method": "GET", "path": f"{_ODL_DATA}/network-topology:network-topology"
                                                           "?content=nonconfig",
             "headers": {"Accept": "application/json"}, "weight": 1},
            {"name": "nodes", "method": "GET", "path": f"{_ODL_DATA}/opendaylight-inventory:nodes?content=nonconfig",
             "headers": {"Accept": "application/json"}, "weight": 1},
        ],
    },
    "opendaylight-rfc8040-flowmod": {
        "description": f"OpenDaylight RESTCONF (RFC 8040): write {_ODL_FLOWS} marked flows into table 1, then "
                       "delete them (each reaches the switch as a FLOW_MOD)",
        "controllers": ["odl", "remote"],
        "port": 8181,
        "basic_auth": "admin:admin",
        "defaults": {"dpid": 1, "out_port": "1"},
        "requests": _odl_flowmod_requests(),
    },
}

_PLACEHOLDER = re.compile(r"\$\{([a-z_][a-z0-9_]*)\}")


def preset(name: str) -> dict[str, Any]:
    """The preset called `name`; unknown names list the known ones."""
    if name not in PRESETS:
        raise KeyError(f"unknown northbound preset {name!r}; known: {', '.join(sorted(PRESETS))}")
    return copy.deepcopy(PRESETS[name])


def substitute(value: Any, variables: dict[str, Any]) -> Any:
    """Replaces `${name}` placeholders in strings, lists and dicts (see module doc)."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole:
            return _lookup(whole.group(1), variables)
        return _PLACEHOLDER.sub(lambda m: str(_lookup(m.group(1), variables)), value)
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    return value


def _lookup(name: str, variables: dict[str, Any]) -> Any:
    if name not in variables:
        raise KeyError(f"request template needs variable {name!r}; give it in the workload's variables")
    return variables[name]


def preset_requests(name: str, **variables: Any) -> list[dict[str, Any]]:
    """The preset's request templates with placeholders filled (defaults, then `variables`)."""
    p = preset(name)
    values = {**p["defaults"], **variables}
    return substitute(p["requests"], values)
