//! Allocation-free views for the load generator's hot path: what a
//! controller's FLOW_MOD or PACKET_OUT answered, read in place. Full
//! `Message::decode` copies action lists and packet data, which at hundreds
//! of thousands of responses per second would cost more than the controller.

use crate::types::{oxm_get, Match10, OFPFW10_DL_SRC, OXM_ETH_SRC};
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
    /// Ethernet source the flow matches on (FLOW_MOD) or of the packet sent (PACKET_OUT).
    pub eth_src: Option<[u8; 6]>,
    /// The packet a PACKET_OUT carries (empty for FLOW_MOD or buffered output).
    pub packet: &'a [u8],
}

/// Ethertype of LLDP, which controllers send for link discovery, not as an answer.
pub const ETH_TYPE_LLDP: u16 = 0x88cc;

impl ResponseView<'_> {
    /// True for a PACKET_OUT carrying LLDP (link discovery, not a response).
    pub fn is_lldp(&self) -> bool {
        ethertype(self.packet) == Some(ETH_TYPE_LLDP)
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

/// Reads a FLOW_MOD or PACKET_OUT in place; `Ok(None)` for other messages.
pub fn response_view(msg: &[u8]) -> Result<Option<ResponseView<'_>>, DecodeError> {
    let h = Header::parse(msg)?;
    let end = (h.length as usize).min(msg.len());
    let mut r = Reader::new(&msg[crate::HEADER_LEN..end], "response");
    match h.msg_type {
        msg_type::FLOW_MOD if h.version == OFP10 => {
            let m = Match10::decode(&mut r)?;
            r.skip(8)?;
            let command = r.u16()?;
            r.skip(6)?;
            let buffer_id = r.u32()?;
            let eth_src = (m.wildcards & OFPFW10_DL_SRC == 0).then_some(m.dl_src);
            Ok(Some(ResponseView { kind: ResponseKind::FlowMod { command }, buffer_id, eth_src, packet: &[] }))
        }
        msg_type::FLOW_MOD => {
            r.skip(17)?;
            let command = r.u8()? as u16;
            r.skip(6)?;
            let buffer_id = r.u32()?;
            r.skip(12)?;
            r.skip(2)?;
            let len = r.u16()? as usize;
            if len < 4 {
                return Err(DecodeError::Malformed { what: "flow_mod match", detail: format!("length {len} below 4") });
            }
            let fields = r.bytes(len - 4)?;
            let _ = pad8(len);
            let eth_src = oxm_get(fields, OXM_ETH_SRC).and_then(|v| v.try_into().ok());
            Ok(Some(ResponseView { kind: ResponseKind::FlowMod { command }, buffer_id, eth_src, packet: &[] }))
        }
        msg_type::PACKET_OUT => {
            let buffer_id = r.u32()?;
            let actions_len = if h.version == OFP10 {
                r.skip(2)?;
                r.u16()?
            } else {
                r.skip(4)?;
                let l = r.u16()?;
                r.skip(6)?;
                l
            };
            r.skip(actions_len as usize)?;
            let packet = r.rest();
            let eth_src = packet.get(6..12).and_then(|s| s.try_into().ok());
            Ok(Some(ResponseView { kind: ResponseKind::PacketOut, buffer_id, eth_src, packet }))
        }
        _ => Ok(None),
    }
}
