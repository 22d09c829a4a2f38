"""Fixtures for controller tests: a free port and a two-host OVS network."""

from __future__ import annotations

import pytest

from ctl_netlab import netns_skip_reason, two_host_network
from sdnbench.controllers.process import free_port


@pytest.fixture
def port() -> int:
    """A free TCP port on 127.0.0.1."""
    return free_port()


@pytest.fixture
def two_hosts(request):
    """Build the network for OpenFlow version request.param ('1.0' or '1.3'); remove it afterwards."""
    reason = netns_skip_reason()
    if reason:
        pytest.skip(reason)
    openflow = getattr(request, "param", "1.3")
    with two_host_network(openflow) as net:
        yield net
