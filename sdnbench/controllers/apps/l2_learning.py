"""sdnbench's reference L2-learning switch for os-ken, OpenFlow 1.0 or 1.3.

Loaded by sdnbench's os-ken launcher, which sets three environment variables:
SDNBENCH_OPENFLOW ("1.0" or "1.3"), SDNBENCH_L2_FLOWS (when a PACKET_IN leads to
a flow: "known", "always" or "never", see l2_table.FLOW_POLICIES) and
SDNBENCH_L2_IDLE_TIMEOUT (seconds, 0 = flows never expire).
"""

import logging
import os

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ethernet, ether_types, packet

import of_switch
from l2_table import FLOW_POLICIES, MacTable, decide

OPENFLOW = os.environ.get("SDNBENCH_OPENFLOW", "1.3")
FLOWS = os.environ.get("SDNBENCH_L2_FLOWS", "known")
IDLE_TIMEOUT = int(os.environ.get("SDNBENCH_L2_IDLE_TIMEOUT", "0"))
if FLOWS not in FLOW_POLICIES:
    raise ValueError(f"SDNBENCH_L2_FLOWS={FLOWS!r}: expected one of {', '.join(FLOW_POLICIES)}")

LOG = logging.getLogger("sdnbench.l2_learning")


class L2Learning(app_manager.OSKenApp):
    """Learn MAC → port per switch; flood unknown destinations; install flows per FLOWS."""

    OFP_VERSIONS = [of_switch.VERSIONS[OPENFLOW]]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.macs = MacTable()
        LOG.info("sdnbench l2_learning: OpenFlow %s, flows %s, idle timeout %d s",
                 OPENFLOW, FLOWS, IDLE_TIMEOUT)

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features(self, ev):
        """Start every switch from an empty table, then send table misses here."""
        dp = ev.msg.datapath
        self.macs.forget(dp.id)
        of_switch.reset(dp)
        LOG.info("switch %016x connected (OpenFlow 0x%02x)", dp.id, dp.ofproto.OFP_VERSION)

    @set_ev_cls(ofp_event.EventOFPStateChange, DEAD_DISPATCHER)
    def switch_gone(self, ev):
        """Forget what a disconnected switch taught us."""
        if ev.datapath.id is not None:
            self.macs.forget(ev.datapath.id)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in(self, ev):
        """Learn the source, forward to the known port or flood, maybe install a flow."""
        msg = ev.msg
        dp = msg.datapath
        in_port = of_switch.in_port(msg)
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        if eth is None or eth.ethertype == ether_types.ETH_TYPE_LLDP:
            return
        decision = decide(self.macs, dp.id, in_port, eth.src, eth.dst, FLOWS)
        if decision.drop:
            return
        out_port = dp.ofproto.OFPP_FLOOD if decision.out_port is None else decision.out_port
        actions = of_switch.outputs(dp, [out_port])
        if decision.install:
            of_switch.add_flow(dp, in_port, eth.src, eth.dst, actions, IDLE_TIMEOUT)
        of_switch.packet_out(msg, actions)
