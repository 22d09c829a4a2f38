"""A REST flow programmer: writes proactive forwarding rules through a controller's northbound API.

One implementation per API (odl.py: OpenDaylight RESTCONF; onos.py: ONOS REST
v1) turns Rules into that API's requests. program() is the same for all: write
every switch's rules, then wait until the controller reports them installed,
and time both, because a controller acknowledges a write long before the
switch holds the flow.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from ..errors import ControllerError
from ..restclient import Reply, RestClient
from ..topology.graph import TopologyGraph
from .rules import Rule, by_switch, forwarding_rules


class FlowProgrammer(ABC):
    """Writes, confirms and removes one switch's rules through a controller's REST API."""

    #: Name recorded with the trials (e.g. "opendaylight-restconf").
    api: str = ""

    def __init__(self, client: RestClient):
        self.client = client

    def send(self, what: str, method: str, path: str, body=None) -> Reply:
        """One request; ControllerError naming `what` when no answer comes or the answer is not 2xx."""
        try:
            reply = self.client.request(method, path, body)
        except OSError as exc:
            raise ControllerError(f"{self.api}: {what} failed: {exc}") from None
        if not reply.ok:
            raise ControllerError(f"{self.api}: {what} refused: {reply.brief()}")
        return reply

    @abstractmethod
    def write(self, dpid: int, rules: list[Rule]) -> None:
        """Install rules on switch dpid (replacing earlier sdnbench rules); ControllerError when refused."""

    def write_flow(self, dpid: int, rule: Rule) -> None:
        """Install one rule on switch dpid in a request of its own (a batch of one unless the API has better)."""
        self.write(dpid, [rule])

    def switches(self) -> set[int] | None:
        """Datapath ids of the switches the controller reports connected; None when the API cannot tell."""
        return None

    @abstractmethod
    def installed(self, dpid: int) -> set[str]:
        """Names of sdnbench rules the controller reports as installed on switch dpid."""

    @abstractmethod
    def remove(self, dpid: int) -> None:
        """Remove every sdnbench rule from switch dpid."""


@dataclass
class ProgrammingReport:
    """What programming a network took, for the trial environment."""

    api: str
    switches: int
    rules: int
    write_s: float            # from the first request to the last acknowledged write
    confirmed_s: float        # from the first request until the controller reported every rule installed

    def environment(self) -> dict:
        """Keys for the trial environment record."""
        return {"forwarding": "proactive", "forwarding_api": self.api, "forwarding_switches": self.switches,
                "forwarding_rules": self.rules, "forwarding_write_s": round(self.write_s, 3),
                "forwarding_confirmed_s": round(self.confirmed_s, 3)}


def program(programmer: FlowProgrammer, rules: list[Rule], confirm_timeout_s: float = 60.0,
            poll_s: float = 0.5) -> ProgrammingReport:
    """Write rules switch by switch, then poll until the controller reports all of them installed."""
    grouped = by_switch(rules)
    t0 = time.monotonic()
    for dpid, switch_rules in grouped.items():
        programmer.write(dpid, switch_rules)
    write_s = time.monotonic() - t0
    missing = {dpid: {r.name for r in rs} for dpid, rs in grouped.items()}
    deadline = t0 + write_s + confirm_timeout_s
    while True:
        for dpid in list(missing):
            missing[dpid] -= programmer.installed(dpid)
            if not missing[dpid]:
                del missing[dpid]
        if not missing:
            break
        if time.monotonic() >= deadline:
            left = sum(len(v) for v in missing.values())
            raise ControllerError(f"{programmer.api}: {left} of {len(rules)} forwarding rules not reported "
                                  f"installed on {len(missing)} switches within {confirm_timeout_s:g} s "
                                  f"(first: dpid {min(missing)}: {sorted(missing[min(missing)])[:3]})")
        time.sleep(poll_s)
    return ProgrammingReport(programmer.api, len(grouped), len(rules), write_s, time.monotonic() - t0)


def program_topology(programmer: FlowProgrammer, graph: TopologyGraph,
                     plan: dict[tuple[str, str], tuple[int, int]], confirm_timeout_s: float = 60.0
                     ) -> ProgrammingReport:
    """Program the forwarding rules of a whole topology (see rules.forwarding_rules)."""
    return program(programmer, forwarding_rules(graph, plan), confirm_timeout_s)
