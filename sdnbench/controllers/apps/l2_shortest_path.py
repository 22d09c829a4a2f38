"""sdnbench's shortest-path L2 forwarding for os-ken, OpenFlow 1.0 or 1.3.

os-ken's LLDP discovery (os_ken.topology.switches with observe_links, loaded
by the launcher's --discover-links) reports links; this app keeps the switch
graph, learns host MAC -> (dpid, port) on edge ports (ports with no
discovered link), and for a known destination installs a flow on every switch
of the fewest-hop path. Unknown and broadcast destinations are flooded along
a spanning tree of the graph plus edge ports, so topologies with loops (grid,
spine-leaf) do not storm once their links are discovered. The routing logic
is in path_graph.py. Environment: SDNBENCH_OPENFLOW, SDNBENCH_L2_IDLE_TIMEOUT,
as for l2_learning.
"""

import logging
import os

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ethernet, ether_types, packet
from os_ken.topology import event as topo_event

import of_switch
from path_graph import HostTable, SwitchGraph, route

OPENFLOW = os.environ.get("SDNBENCH_OPENFLOW", "1.3")
IDLE_TIMEOUT = int(os.environ.get("SDNBENCH_L2_IDLE_TIMEOUT", "0"))

LOG = logging.getLogger("sdnbench.l2_shortest_path")


class L2ShortestPath(app_manager.OSKenApp):
    """Fewest-hop paths between hosts over the links os-ken discovers."""

    OFP_VERSIONS = [of_switch.VERSIONS[OPENFLOW]]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.graph = SwitchGraph()
        self.hosts = HostTable()
        self.dps = {}
        LOG.info("sdnbench l2_shortest_path: OpenFlow %s, idle timeout %d s, link discovery %s",
                 OPENFLOW, IDLE_TIMEOUT, "on" if getattr(self.CONF, "observe_links", False) else "OFF (no graph: flooding only)")

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features(self, ev):
        dp = ev.msg.datapath
        self.hosts.forget(dp.id)
        # A delete-all may also remove os-ken's LLDP flow; the table miss still sends LLDP here.
        of_switch.reset(dp)

    @set_ev_cls(ofp_event.EventOFPStateChange, [MAIN_DISPATCHER, DEAD_DISPATCHER])
    def switch_state(self, ev):
        dp = ev.datapath
        if dp.id is None:
            return
        if ev.state == MAIN_DISPATCHER:
            self.dps[dp.id] = dp
            LOG.info("switch %016x connected (OpenFlow 0x%02x)", dp.id, dp.ofproto.OFP_VERSION)
        elif self.dps.get(dp.id) is dp:
            del self.dps[dp.id]
            self.hosts.forget(dp.id)
            self.graph.remove_switch(dp.id)

    @set_ev_cls(topo_event.EventLinkAdd)
    def link_add(self, ev):
        s, d = ev.link.src, ev.link.dst
        if self.graph.add_link(s.dpid, s.port_no, d.dpid, d.port_no):
            # Hosts learnt there before discovery were copies of flooded frames.
            self.hosts.forget(s.dpid, s.port_no)
            self.hosts.forget(d.dpid, d.port_no)
            self._log_links("up", s, d)

    @set_ev_cls(topo_event.EventLinkDelete)
    def link_delete(self, ev):
        s, d = ev.link.src, ev.link.dst
        if self.graph.remove_link(s.dpid, s.port_no, d.dpid, d.port_no):
            self._log_links("down", s, d)

    def _log_links(self, what, s, d):
        # The line tests and people read to see what discovery found.
        LOG.info("link %s %x:%d -> %x:%d; graph: %d links, %d switches", what, s.dpid, s.port_no,
                 d.dpid, d.port_no, self.graph.link_count, self.graph.switch_count)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in(self, ev):
        msg = ev.msg
        dp = msg.datapath
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        if eth is None or eth.ethertype == ether_types.ETH_TYPE_LLDP:
            return  # LLDP is os-ken's discovery app's
        ports = [p for p in dp.ports if p <= dp.ofproto.OFPP_MAX]
        r = route(self.graph, self.hosts, dp.id, of_switch.in_port(msg), eth.src, eth.dst, ports)
        if r.hops:
            # Ingress first, egress last: the egress FLOW_MOD is then the last one
            # queued for the path, so "PACKET_IN at ingress -> FLOW_MOD at egress"
            # (sdnbench-ofload --paths) times the whole path's setup, not only the
            # controller's first reaction. (os-ken writes each switch's messages
            # from its own send queue, so arrival order across switches is not
            # guaranteed either way; OpenFlow orders nothing across switches
            # without barriers.) A packet that outruns its flow onto a transit
            # switch comes back as a PACKET_IN there and is routed on from that
            # switch: the order can cost work, never correctness.
            for hop in r.hops:
                hop_dp = self.dps.get(hop.dpid)
                if hop_dp is not None:
                    of_switch.add_flow(hop_dp, hop.in_port, eth.src, eth.dst,
                                       of_switch.outputs(hop_dp, [hop.out_port]), IDLE_TIMEOUT)
            of_switch.packet_out(msg, of_switch.outputs(dp, [r.hops[0].out_port]))
        elif r.flood:
            of_switch.packet_out(msg, of_switch.outputs(dp, r.flood))
