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
from os_ken.lib import mac as mac_lib
from os_ken.lib.packet import ethernet, ether_types, packet
from os_ken.ofproto import ofproto_v1_0, ofproto_v1_3

from l2_table import FLOW_POLICIES, MacTable, decide

_VERSIONS = {"1.0": ofproto_v1_0.OFP_VERSION, "1.3": ofproto_v1_3.OFP_VERSION}
OPENFLOW = os.environ.get("SDNBENCH_OPENFLOW", "1.3")
FLOWS = os.environ.get("SDNBENCH_L2_FLOWS", "known")
IDLE_TIMEOUT = int(os.environ.get("SDNBENCH_L2_IDLE_TIMEOUT", "0"))
FLOW_PRIORITY = 1
if FLOWS not in FLOW_POLICIES:
    raise ValueError(f"SDNBENCH_L2_FLOWS={FLOWS!r}: expected one of {', '.join(FLOW_POLICIES)}")

LOG = logging.getLogger("sdnbench.l2_learning")


class L2Learning(app_manager.OSKenApp):
    """Learn MAC → port per switch; flood unknown destinations; install flows per FLOWS."""

    OFP_VERSIONS = [_VERSIONS[OPENFLOW]]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.macs = MacTable()
        LOG.info("sdnbench l2_learning: OpenFlow %s, flows %s, idle timeout %d s",
                 OPENFLOW, FLOWS, IDLE_TIMEOUT)

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features(self, ev):
        """Start every switch from an empty table, then send table misses here."""
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        self.macs.forget(dp.id)
        if ofp.OFP_VERSION == ofproto_v1_0.OFP_VERSION:
            dp.send_msg(parser.OFPFlowMod(datapath=dp, match=parser.OFPMatch(), cookie=0,
                                          command=ofp.OFPFC_DELETE, idle_timeout=0, hard_timeout=0,
                                          priority=0, out_port=ofp.OFPP_NONE, actions=[]))
            # OpenFlow 1.0 sends misses to the controller by itself; ask for whole frames.
            dp.send_msg(parser.OFPSetConfig(dp, ofp.OFPC_FRAG_NORMAL, 0xffff))
        else:
            dp.send_msg(parser.OFPFlowMod(datapath=dp, command=ofp.OFPFC_DELETE, table_id=ofp.OFPTT_ALL,
                                          out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
                                          match=parser.OFPMatch()))
            actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
            inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
            dp.send_msg(parser.OFPFlowMod(datapath=dp, priority=0, match=parser.OFPMatch(), instructions=inst))
        LOG.info("switch %016x connected (OpenFlow 0x%02x)", dp.id, ofp.OFP_VERSION)

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
        ofp, parser = dp.ofproto, dp.ofproto_parser
        v10 = ofp.OFP_VERSION == ofproto_v1_0.OFP_VERSION
        in_port = msg.in_port if v10 else msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        if eth is None or eth.ethertype == ether_types.ETH_TYPE_LLDP:
            return
        decision = decide(self.macs, dp.id, in_port, eth.src, eth.dst, FLOWS)
        if decision.drop:
            return
        out_port = ofp.OFPP_FLOOD if decision.out_port is None else decision.out_port
        actions = [parser.OFPActionOutput(out_port)]
        if decision.install:
            if v10:
                match = parser.OFPMatch(in_port=in_port, dl_src=mac_lib.haddr_to_bin(eth.src),
                                        dl_dst=mac_lib.haddr_to_bin(eth.dst))
                dp.send_msg(parser.OFPFlowMod(datapath=dp, match=match, cookie=0, command=ofp.OFPFC_ADD,
                                              idle_timeout=IDLE_TIMEOUT, hard_timeout=0,
                                              priority=FLOW_PRIORITY, actions=actions))
            else:
                match = parser.OFPMatch(in_port=in_port, eth_src=eth.src, eth_dst=eth.dst)
                inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
                dp.send_msg(parser.OFPFlowMod(datapath=dp, priority=FLOW_PRIORITY, match=match,
                                              idle_timeout=IDLE_TIMEOUT, instructions=inst))
        # OVS never buffers, but honour a buffer id when a switch does.
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        dp.send_msg(parser.OFPPacketOut(datapath=dp, buffer_id=msg.buffer_id, in_port=in_port,
                                        actions=actions, data=data))
