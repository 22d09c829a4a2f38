//! Message bodies whose layout differs between OpenFlow 1.0 and 1.3: matches,
//! PACKET_IN, PACKET_OUT, FLOW_MOD. Each type decodes from and encodes to one
//! version's layout; fields a version lacks are zero when encoding for it.
//! Switch-description bodies (ports, features) are in `port.rs`.

use crate::wire::{pad8, Put, Reader};
use crate::{DecodeError, OFP10};

/// The fixed 40-byte OpenFlow 1.0 match.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Match10 {
    pub wildcards: u32,
    pub in_port: u16,
    pub dl_src: [u8; 6],
    pub dl_dst: [u8; 6],
    pub dl_vlan: u16,
    pub dl_vlan_pcp: u8,
    pub dl_type: u16,
    pub nw_tos: u8,
    pub nw_proto: u8,
    pub nw_src: u32,
    pub nw_dst: u32,
    pub tp_src: u16,
    pub tp_dst: u16,
}

/// OFPFW_DL_SRC: the match ignores the Ethernet source.
pub const OFPFW10_DL_SRC: u32 = 1 << 2;
pub const OFPFW10_DL_DST: u32 = 1 << 3;

impl Match10 {
    pub const LEN: usize = 40;

    pub fn decode(r: &mut Reader) -> Result<Match10, DecodeError> {
        let mut m = Match10 { wildcards: r.u32()?, in_port: r.u16()?, dl_src: r.array()?, dl_dst: r.array()?, ..Default::default() };
        m.dl_vlan = r.u16()?;
        m.dl_vlan_pcp = r.u8()?;
        r.skip(1)?;
        m.dl_type = r.u16()?;
        m.nw_tos = r.u8()?;
        m.nw_proto = r.u8()?;
        r.skip(2)?;
        m.nw_src = r.u32()?;
        m.nw_dst = r.u32()?;
        m.tp_src = r.u16()?;
        m.tp_dst = r.u16()?;
        Ok(m)
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.put_u32(self.wildcards);
        out.put_u16(self.in_port);
        out.extend_from_slice(&self.dl_src);
        out.extend_from_slice(&self.dl_dst);
        out.put_u16(self.dl_vlan);
        out.put_u8(self.dl_vlan_pcp);
        out.put_zeros(1);
        out.put_u16(self.dl_type);
        out.put_u8(self.nw_tos);
        out.put_u8(self.nw_proto);
        out.put_zeros(2);
        out.put_u32(self.nw_src);
        out.put_u32(self.nw_dst);
        out.put_u16(self.tp_src);
        out.put_u16(self.tp_dst);
    }
}

/// An OpenFlow 1.3 match (ofp_match with OXM TLVs), fields kept as raw TLVs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oxm {
    /// OFPMT_OXM (1) in every conforming message.
    pub match_type: u16,
    pub fields: Vec<u8>,
}

impl Default for Oxm {
    fn default() -> Self {
        Oxm { match_type: 1, fields: Vec::new() }
    }
}

/// OXM class of the OpenFlow basic fields.
const OXM_BASIC: u16 = 0x8000;
pub const OXM_IN_PORT: u8 = 0;
pub const OXM_ETH_DST: u8 = 3;
pub const OXM_ETH_SRC: u8 = 4;

impl Oxm {
    /// A match on one input port, as a switch puts it in PACKET_IN.
    pub fn in_port(port: u32) -> Oxm {
        let mut o = Oxm::default();
        o.push(OXM_IN_PORT, &port.to_be_bytes());
        o
    }

    /// Appends a basic-class field without mask.
    pub fn push(&mut self, field: u8, value: &[u8]) {
        self.fields.put_u16(OXM_BASIC);
        self.fields.put_u8(field << 1);
        self.fields.put_u8(value.len() as u8);
        self.fields.extend_from_slice(value);
    }

    /// The value of a basic-class field (without its mask), if present.
    pub fn get(&self, field: u8) -> Option<&[u8]> {
        oxm_get(&self.fields, field)
    }

    pub fn decode(r: &mut Reader) -> Result<Oxm, DecodeError> {
        let match_type = r.u16()?;
        let len = r.u16()? as usize;
        if len < 4 {
            return Err(DecodeError::Malformed { what: "match", detail: format!("length {len} below 4") });
        }
        let fields = r.bytes(len - 4)?.to_vec();
        r.skip(pad8(len))?;
        Ok(Oxm { match_type, fields })
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        let len = 4 + self.fields.len();
        out.put_u16(self.match_type);
        out.put_u16(len as u16);
        out.extend_from_slice(&self.fields);
        out.put_zeros(pad8(len));
    }
}

/// Finds a basic-class OXM field in raw TLVs; malformed TLVs end the search.
pub fn oxm_get(mut tlvs: &[u8], field: u8) -> Option<&[u8]> {
    while tlvs.len() >= 4 {
        let class = u16::from_be_bytes([tlvs[0], tlvs[1]]);
        let f = tlvs[2] >> 1;
        let has_mask = tlvs[2] & 1 == 1;
        let len = tlvs[3] as usize;
        if tlvs.len() < 4 + len {
            return None;
        }
        if class == OXM_BASIC && f == field {
            let v = &tlvs[4..4 + len];
            return Some(if has_mask { &v[..len / 2] } else { v });
        }
        tlvs = &tlvs[4 + len..];
    }
    None
}

/// PACKET_IN. 1.0 carries `in_port` directly; 1.3 carries it in `matched`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PacketIn {
    pub buffer_id: u32,
    pub total_len: u16,
    pub in_port: u16,
    pub reason: u8,
    pub table_id: u8,
    pub cookie: u64,
    pub matched: Oxm,
    pub data: Vec<u8>,
}

impl PacketIn {
    pub fn decode(version: u8, r: &mut Reader) -> Result<PacketIn, DecodeError> {
        let mut p = PacketIn { buffer_id: r.u32()?, total_len: r.u16()?, ..Default::default() };
        if version == OFP10 {
            p.in_port = r.u16()?;
            p.reason = r.u8()?;
            r.skip(1)?;
        } else {
            p.reason = r.u8()?;
            p.table_id = r.u8()?;
            p.cookie = r.u64()?;
            p.matched = Oxm::decode(r)?;
            r.skip(2)?;
        }
        p.data = r.rest().to_vec();
        Ok(p)
    }

    pub fn encode(&self, version: u8, out: &mut Vec<u8>) {
        out.put_u32(self.buffer_id);
        out.put_u16(self.total_len);
        if version == OFP10 {
            out.put_u16(self.in_port);
            out.put_u8(self.reason);
            out.put_zeros(1);
        } else {
            out.put_u8(self.reason);
            out.put_u8(self.table_id);
            out.put_u64(self.cookie);
            self.matched.encode(out);
            out.put_zeros(2);
        }
        out.extend_from_slice(&self.data);
    }
}

/// PACKET_OUT; `actions` are the raw action TLVs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PacketOut {
    pub buffer_id: u32,
    pub in_port: u32,
    pub actions: Vec<u8>,
    pub data: Vec<u8>,
}

impl PacketOut {
    pub fn decode(version: u8, r: &mut Reader) -> Result<PacketOut, DecodeError> {
        let buffer_id = r.u32()?;
        let in_port = if version == OFP10 { r.u16()? as u32 } else { r.u32()? };
        let actions_len = r.u16()? as usize;
        if version != OFP10 {
            r.skip(6)?;
        }
        let actions = r.bytes(actions_len)?.to_vec();
        Ok(PacketOut { buffer_id, in_port, actions, data: r.rest().to_vec() })
    }

    pub fn encode(&self, version: u8, out: &mut Vec<u8>) {
        out.put_u32(self.buffer_id);
        if version == OFP10 {
            out.put_u16(self.in_port as u16);
        } else {
            out.put_u32(self.in_port);
        }
        out.put_u16(self.actions.len() as u16);
        if version != OFP10 {
            out.put_zeros(6);
        }
        out.extend_from_slice(&self.actions);
        out.extend_from_slice(&self.data);
    }
}

/// The match of a FLOW_MOD in either version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlowMatch {
    V10(Match10),
    V13(Oxm),
}

/// FLOW_MOD; `instructions` holds 1.0 actions or 1.3 instructions, raw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowMod {
    pub matching: FlowMatch,
    pub cookie: u64,
    pub cookie_mask: u64,
    pub table_id: u8,
    pub command: u16,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub priority: u16,
    pub buffer_id: u32,
    pub out_port: u32,
    pub out_group: u32,
    pub flags: u16,
    pub instructions: Vec<u8>,
}

impl FlowMod {
    pub fn decode(version: u8, r: &mut Reader) -> Result<FlowMod, DecodeError> {
        if version == OFP10 {
            let matching = FlowMatch::V10(Match10::decode(r)?);
            let cookie = r.u64()?;
            let command = r.u16()?;
            let idle_timeout = r.u16()?;
            let hard_timeout = r.u16()?;
            let priority = r.u16()?;
            let buffer_id = r.u32()?;
            let out_port = r.u16()? as u32;
            let flags = r.u16()?;
            let instructions = r.rest().to_vec();
            return Ok(FlowMod { matching, cookie, cookie_mask: 0, table_id: 0, command, idle_timeout, hard_timeout, priority, buffer_id, out_port, out_group: 0, flags, instructions });
        }
        let cookie = r.u64()?;
        let cookie_mask = r.u64()?;
        let table_id = r.u8()?;
        let command = r.u8()? as u16;
        let idle_timeout = r.u16()?;
        let hard_timeout = r.u16()?;
        let priority = r.u16()?;
        let buffer_id = r.u32()?;
        let out_port = r.u32()?;
        let out_group = r.u32()?;
        let flags = r.u16()?;
        r.skip(2)?;
        let matching = FlowMatch::V13(Oxm::decode(r)?);
        let instructions = r.rest().to_vec();
        Ok(FlowMod { matching, cookie, cookie_mask, table_id, command, idle_timeout, hard_timeout, priority, buffer_id, out_port, out_group, flags, instructions })
    }

    pub fn encode(&self, version: u8, out: &mut Vec<u8>) {
        if version == OFP10 {
            match &self.matching {
                FlowMatch::V10(m) => m.encode(out),
                FlowMatch::V13(_) => Match10 { wildcards: 0x3f_ffff, ..Default::default() }.encode(out),
            }
            out.put_u64(self.cookie);
            out.put_u16(self.command);
            out.put_u16(self.idle_timeout);
            out.put_u16(self.hard_timeout);
            out.put_u16(self.priority);
            out.put_u32(self.buffer_id);
            out.put_u16(self.out_port as u16);
            out.put_u16(self.flags);
        } else {
            out.put_u64(self.cookie);
            out.put_u64(self.cookie_mask);
            out.put_u8(self.table_id);
            out.put_u8(self.command as u8);
            out.put_u16(self.idle_timeout);
            out.put_u16(self.hard_timeout);
            out.put_u16(self.priority);
            out.put_u32(self.buffer_id);
            out.put_u32(self.out_port);
            out.put_u32(self.out_group);
            out.put_u16(self.flags);
            out.put_zeros(2);
            match &self.matching {
                FlowMatch::V13(m) => m.encode(out),
                FlowMatch::V10(_) => Oxm::default().encode(out),
            }
        }
        out.extend_from_slice(&self.instructions);
    }

    /// The Ethernet source the flow matches on, when it matches one.
    pub fn eth_src(&self) -> Option<[u8; 6]> {
        match &self.matching {
            FlowMatch::V10(m) if m.wildcards & OFPFW10_DL_SRC == 0 => Some(m.dl_src),
            FlowMatch::V10(_) => None,
            FlowMatch::V13(o) => o.get(OXM_ETH_SRC).and_then(|v| v.try_into().ok()),
        }
    }
}
