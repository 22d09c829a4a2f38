"""OpenFlow 1.0 / 1.3 messages sdnbench's os-ken apps share: switch reset, per-flow FLOW_MOD, PACKET_OUT."""

from os_ken.lib import mac as mac_lib
from os_ken.ofproto import ofproto_v1_0, ofproto_v1_3

VERSIONS = {"1.0": ofproto_v1_0.OFP_VERSION, "1.3": ofproto_v1_3.OFP_VERSION}
FLOW_PRIORITY = 1


def is_v10(dp) -> bool:
    return dp.ofproto.OFP_VERSION == ofproto_v1_0.OFP_VERSION


def reset(dp) -> None:
    """Start a switch from an empty table, then send table misses to the controller."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    if is_v10(dp):
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


def in_port(msg) -> int:
    """The port a PACKET_IN arrived on."""
    return msg.in_port if is_v10(msg.datapath) else msg.match["in_port"]


def outputs(dp, ports) -> list:
    """Output actions to each port."""
    return [dp.ofproto_parser.OFPActionOutput(p) for p in ports]


def add_flow(dp, port: int, src: str, dst: str, actions: list, idle_timeout: int) -> None:
    """FLOW_MOD ADD matching in_port, source and destination MAC."""
    ofp, parser = dp.ofproto, dp.ofproto_parser
    if is_v10(dp):
        match = parser.OFPMatch(in_port=port, dl_src=mac_lib.haddr_to_bin(src), dl_dst=mac_lib.haddr_to_bin(dst))
        dp.send_msg(parser.OFPFlowMod(datapath=dp, match=match, cookie=0, command=ofp.OFPFC_ADD,
                                      idle_timeout=idle_timeout, hard_timeout=0,
                                      priority=FLOW_PRIORITY, actions=actions))
    else:
        match = parser.OFPMatch(in_port=port, eth_src=src, eth_dst=dst)
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        dp.send_msg(parser.OFPFlowMod(datapath=dp, priority=FLOW_PRIORITY, match=match,
                                      idle_timeout=idle_timeout, instructions=inst))


def packet_out(msg, actions: list) -> None:
    """Send a PACKET_IN's frame on with these actions, from the switch's buffer when it has one."""
    dp = msg.datapath
    ofp = dp.ofproto
    # OVS never buffers, but honour a buffer id when a switch does.
    data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
    dp.send_msg(dp.ofproto_parser.OFPPacketOut(datapath=dp, buffer_id=msg.buffer_id, in_port=in_port(msg),
                                               actions=actions, data=data))
