"""Proactive forwarding: rules from the topology (rules.py), written through a controller's REST API
(programmer.py), one module per API; FLOW_APIS is the registry."""

from __future__ import annotations

import importlib

from ..errors import ConfigError

#: REST flow programmers by API name: module:class in this package.
FLOW_APIS = {"opendaylight": "odl:OdlFlowProgrammer", "onos": "onos:OnosFlowProgrammer"}


def flow_programmer(api: str, client):
    """The FlowProgrammer of API `api` talking through client (a RestClient)."""
    if api not in FLOW_APIS:
        raise ConfigError(f"unknown flow API {api!r}; expected one of {', '.join(FLOW_APIS)}", key="flow_api")
    module, cls = FLOW_APIS[api].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)(client)
