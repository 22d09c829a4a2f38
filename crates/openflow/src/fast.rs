//! Allocation-free views for the load generator's hot path: what a
//! controller's FLOW_MOD or PACKET_OUT answered, read in place. Full
//! `Message::decode` copies action lists and packet data, which at hundreds
//! of thousands of responses per second would cost more than the controller.

use crate::types::{oxm_get, OFPFW10_DL_DST, OFPFW10_DL_SRC, OXM_ETH_DST, OXM_ETH_SRC};
use crate::wire::{pad8, Reader};
use crate::{msg_type, DecodeError, Header, OFP10};

/// Which kind of response a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseKind {
    FlowMod { command: u16 },
    PacketOut,
}

/// The parts of a FLOW_MOD or PACKET_OUT that tie it to a PACKET_IN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseView<'a> {
    pub kind: ResponseKind,
    pub buffer_id: u32,
    /// Where the Ethernet source the flow matches on (FLOW_MOD) or of the
    /// packet sent (PACKET_OUT) sits in the message; read it with `eth_src()`.
    /// Kept as an offset because most answers are matched by buffer id alone.
    eth_src_at: Option<usize>,
    /// Where the Ethernet destination a FLOW_MOD matches on sits (None for
    /// PACKET_OUT): learning switches such as Faucet install a flow *to* each
    /// learned host as well as one *from* it.
    eth_dst_at: Option<usize>,
    msg: &'a [u8],
    /// The packet a PACKET_OUT carries (empty for FLOW_MOD or buffered output).
    pub packet: &'a [u8],
    /// A PACKET_OUT's input port and raw action list (0 and empty for FLOW_MOD).
    pub in_port: u32,
    pub actions: &'a [u8],
}

/// Ethertype of LLDP, which controllers send for link discovery, not as an answer.
pub const ETH_TYPE_LLDP: u16 = 0x88cc;
/// Broadcast discovery (ONOS, Floodlight) uses this ethertype instead.
pub const ETH_TYPE_BDDP: u16 = 0x8942;

impl ResponseView<'_> {
    /// Ethernet source the flow matches on (FLOW_MOD) or of the packet sent (PACKET_OUT).
    pub fn eth_src(&self) -> Option<[u8; 6]> {
        self.eth_src_at.map(|at| mac_at(self.msg, at))
    }

    /// Ethernet destination a FLOW_MOD matches on.
    pub fn eth_dst(&self) -> Option<[u8; 6]> {
        self.eth_dst_at.map(|at| mac_at(self.msg, at))
    }

    /// True for a PACKET_OUT carrying LLDP or BDDP (link discovery, not a response).
    pub fn is_lldp(&self) -> bool {
        matches!(ethertype(self.packet), Some(ETH_TYPE_LLDP) | Some(ETH_TYPE_BDDP))
    }
}

/// Ethertype of an Ethernet frame, looking through one VLAN tag.
pub fn ethertype(frame: &[u8]) -> Option<u16> {
    if frame.len() < 14 {
        return None;
    }
    let et = u16::from_be_bytes([frame[12], frame[13]]);
    if et == 0x8100 && frame.len() >= 18 {
        return Some(u16::from_be_bytes([frame[16], frame[17]]));
    }
    Some(et)
}

/// The buffer id of a FLOW_MOD (ADD or MODIFY) or PACKET_OUT that releases a
/// buffered packet: the answer nearly every controller gives, read with a
/// few loads instead of a whole view. `None` for anything else (other
/// messages, DELETEs, unbuffered answers, messages `response_view` would
/// reject), which then take `response_view`. `msg` is one framed message:
/// exactly as long as its header says.
#[inline]
pub fn released_buffer(msg: &[u8]) -> Option<u32> {
    let be16 = |at: usize| msg.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]) as usize);
    let be32 = |at: usize| msg.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let v10 = *msg.first()? == OFP10;
    let ok = match *msg.get(1)? {
        // 1.0: command @56, buffer_id @64, 72 bytes. 1.3: command @25, buffer_id @32, match length @50.
        msg_type::FLOW_MOD if v10 => msg.len() >= 72 && be16(56)? <= 2,
        msg_type::FLOW_MOD => msg.len() >= 56 && msg[25] <= 2 && (4..=msg.len() - 48).contains(&be16(50)?),
        // actions length @14 (1.0) or @16 (1.3) after a 16 or 24 byte head
        msg_type::PACKET_OUT if v10 => msg.len() >= 16 && 16 + be16(14)? <= msg.len(),
        msg_type::PACKET_OUT => msg.len() >= 24 && 24 + be16(16)? <= msg.len(),
        _ => false,
    };
    if !ok {
        return None;
    }
    let id = be32(match msg[1] {
        msg_type::FLOW_MOD if v10 => 64,
        msg_type::FLOW_MOD => 32,
        _ => 8, // PACKET_OUT
    })?;
    (id != crate::NO_BUFFER).then_some(id)
}

/// Reads a FLOW_MOD or PACKET_OUT in place; `Ok(None)` for other messages.
/// Fixed offsets, one bounds check per message: this runs once per response.
pub fn response_view(msg: &[u8]) -> Result<Option<ResponseView<'_>>, DecodeError> {
    let h = Header::parse(msg)?;
    let end = (h.length as usize).min(msg.len());
    let m = &msg[..end];
    let need = |n: usize, what: &'static str| {
        if m.len() < n { Err(DecodeError::Truncated { what, need: n, have: m.len() }) } else { Ok(()) }
    };
    let be16 = |at: usize| u16::from_be_bytes([m[at], m[at + 1]]);
    let be32 = |at: usize| u32::from_be_bytes([m[at], m[at + 1], m[at + 2], m[at + 3]]);
    match h.msg_type {
        msg_type::FLOW_MOD if h.version == OFP10 => {
            // header 8, match 40 (wildcards @8, dl_src @14), cookie 8, command @56, buffer_id @64
            need(72, "flow_mod")?;
            let eth_src_at = (be32(8) & OFPFW10_DL_SRC == 0).then_some(14);
            let eth_dst_at = (be32(8) & OFPFW10_DL_DST == 0).then_some(20);
            Ok(Some(ResponseView { kind: ResponseKind::FlowMod { command: be16(56) }, buffer_id: be32(64), eth_src_at, eth_dst_at, msg: m, packet: &[], in_port: 0, actions: &[] }))
        }
        msg_type::FLOW_MOD => {
            // header 8, cookie+mask 16, table @24, command @25, buffer_id @32, match @48
            need(56, "flow_mod")?;
            let len = be16(50) as usize;
            if len < 4 {
                return Err(DecodeError::Malformed { what: "flow_mod match", detail: format!("length {len} below 4") });
            }
            need(48 + len, "flow_mod match")?;
            let fields = &m[52..48 + len];
            let at = |field| oxm_get(fields, field).filter(|v| v.len() == 6).map(|v| v.as_ptr() as usize - m.as_ptr() as usize);
            let (eth_src_at, eth_dst_at) = (at(OXM_ETH_SRC), at(OXM_ETH_DST));
            Ok(Some(ResponseView { kind: ResponseKind::FlowMod { command: m[25] as u16 }, buffer_id: be32(32), eth_src_at, eth_dst_at, msg: m, packet: &[], in_port: 0, actions: &[] }))
        }
        msg_type::PACKET_OUT => {
            let (fixed, actions_len, in_port) = if h.version == OFP10 {
                need(16, "packet_out")?;
                (16, be16(14) as usize, be16(12) as u32)
            } else {
                need(24, "packet_out")?;
                (24, be16(16) as usize, be32(12))
            };
            need(fixed + actions_len, "packet_out actions")?;
            let packet = &m[fixed + actions_len..];
            let actions = &m[fixed..fixed + actions_len];
            let eth_src_at = (packet.len() >= 12).then_some(fixed + actions_len + 6);
            Ok(Some(ResponseView { kind: ResponseKind::PacketOut, buffer_id: be32(8), eth_src_at, eth_dst_at: None, msg: m, packet, in_port, actions }))
        }
        _ => Ok(None),
    }
}

fn mac_at(b: &[u8], at: usize) -> [u8; 6] {
    [b[at], b[at + 1], b[at + 2], b[at + 3], b[at + 4], b[at + 5]]
}

/// The parts of a PACKET_IN a controller needs to answer it, read in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketInView<'a> {
    pub buffer_id: u32,
    pub in_port: u32,
    pub data: &'a [u8],
}

/// Reads a PACKET_IN in place; `Ok(None)` for other messages.
pub fn packet_in_view(msg: &[u8]) -> Result<Option<PacketInView<'_>>, DecodeError> {
    let h = Header::parse(msg)?;
    if h.msg_type != msg_type::PACKET_IN {
        return Ok(None);
    }
    let end = (h.length as usize).min(msg.len());
    let mut r = Reader::new(&msg[crate::HEADER_LEN..end], "packet_in");
    let buffer_id = r.u32()?;
    r.skip(2)?;
    let in_port = if h.version == OFP10 {
        let p = r.u16()? as u32;
        r.skip(2)?;
        p
    } else {
        r.skip(10)?;
        r.skip(2)?;
        let len = r.u16()? as usize;
        if len < 4 {
            return Err(DecodeError::Malformed { what: "packet_in match", detail: format!("length {len} below 4") });
        }
        let fields = r.bytes(len - 4)?;
        r.skip(pad8(len) + 2)?;
        oxm_get(fields, crate::types::OXM_IN_PORT)
            .and_then(|v| v.try_into().ok())
            .map(u32::from_be_bytes)
            .unwrap_or(0)
    };
    Ok(Some(PacketInView { buffer_id, in_port, data: r.rest() }))
}

/// Ports named by the OUTPUT actions of an action list (1.0: 8-byte action
/// with a 16-bit port; 1.3: 16-byte action with a 32-bit port). Reserved
/// 1.0 ports are widened to their 1.3 numbers (FLOOD 0xfffffffb, ALL
/// 0xfffffffc, ...), so callers compare against one set of constants.
/// Malformed action lists end the walk.
pub fn output_ports(version: u8, mut actions: &[u8]) -> Vec<u32> {
    let mut ports = Vec::new();
    while actions.len() >= 8 {
        let t = u16::from_be_bytes([actions[0], actions[1]]);
        let len = u16::from_be_bytes([actions[2], actions[3]]) as usize;
        if len < 8 || len > actions.len() {
            break;
        }
        if t == 0 {
            if version == OFP10 {
                let p = u16::from_be_bytes([actions[4], actions[5]]) as u32;
                ports.push(if p >= 0xff00 { p | 0xffff_0000 } else { p });
            } else if len >= 8 {
                ports.push(u32::from_be_bytes([actions[4], actions[5], actions[6], actions[7]]));
            }
        }
        actions = &actions[len..];
    }
    ports
}

/// Reserved port numbers (1.3 numbering) that mean "every port".
pub const PORT_FLOOD: u32 = 0xffff_fffb;
pub const PORT_ALL: u32 = 0xffff_fffc;
