//! Whole messages: header plus body, decoded and encoded for 1.0 or 1.3.

use crate::msg_type as t;
use crate::port::{FeaturesReply, PortStatus, SwitchConfig};
use crate::types::{FlowMod, PacketIn, PacketOut};
use crate::wire::{Put, Reader};
use crate::{DecodeError, Header, OFP10, OFP13};

/// A multipart (1.3) or stats (1.0) request or reply; `body` is raw.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Multipart {
    pub mp_type: u16,
    pub flags: u16,
    pub body: Vec<u8>,
}

/// The messages a switch and a controller exchange during a benchmark.
/// Anything else is kept as `Other` so it still re-encodes exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// Raw hello elements (a version bitmap in 1.3; usually empty in 1.0).
    Hello(Vec<u8>),
    Error { err_type: u16, code: u16, data: Vec<u8> },
    EchoRequest(Vec<u8>),
    EchoReply(Vec<u8>),
    FeaturesRequest,
    FeaturesReply(FeaturesReply),
    GetConfigRequest,
    GetConfigReply(SwitchConfig),
    SetConfig(SwitchConfig),
    PacketIn(PacketIn),
    PacketOut(PacketOut),
    FlowMod(FlowMod),
    PortStatus(PortStatus),
    MultipartRequest(Multipart),
    MultipartReply(Multipart),
    BarrierRequest,
    BarrierReply,
    Other { msg_type: u8, body: Vec<u8> },
}

/// One OpenFlow message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub version: u8,
    pub xid: u32,
    pub body: Body,
}

/// Hello element type carrying the supported-versions bitmap (1.3.1+).
const HELLO_ELEM_VERSIONBITMAP: u16 = 1;

impl Message {
    pub fn new(version: u8, xid: u32, body: Body) -> Message {
        Message { version, xid, body }
    }

    /// A HELLO advertising every version in `versions` (bitmap element in 1.3).
    pub fn hello(version: u8, versions: &[u8]) -> Message {
        let mut elems = Vec::new();
        if version >= OFP13 {
            let bitmap: u32 = versions.iter().filter(|v| **v < 32).fold(0, |b, v| b | (1 << v));
            elems.put_u16(HELLO_ELEM_VERSIONBITMAP);
            elems.put_u16(8);
            elems.put_u32(bitmap);
        }
        Message::new(version, 0, Body::Hello(elems))
    }

    /// Decodes one complete message (exactly `length` bytes).
    pub fn decode(buf: &[u8]) -> Result<Message, DecodeError> {
        let h = Header::parse(buf)?;
        if buf.len() < h.length as usize {
            return Err(DecodeError::Truncated { what: "message", need: h.length as usize, have: buf.len() });
        }
        let payload = &buf[crate::HEADER_LEN..h.length as usize];
        // HELLO and ECHO are version-independent: a controller may send a
        // HELLO of a version we do not speak and negotiate down from it.
        let v = h.version;
        if v != OFP10 && v != OFP13 && !matches!(h.msg_type, t::HELLO | t::ERROR | t::ECHO_REQUEST | t::ECHO_REPLY) {
            return Err(DecodeError::UnsupportedVersion(v));
        }
        let mut r = Reader::new(payload, "body");
        let body = match h.msg_type {
            t::HELLO => Body::Hello(payload.to_vec()),
            t::ERROR => Body::Error { err_type: r.u16()?, code: r.u16()?, data: r.rest().to_vec() },
            t::ECHO_REQUEST => Body::EchoRequest(payload.to_vec()),
            t::ECHO_REPLY => Body::EchoReply(payload.to_vec()),
            t::FEATURES_REQUEST => empty(payload, Body::FeaturesRequest)?,
            t::FEATURES_REPLY => Body::FeaturesReply(FeaturesReply::decode(v, &mut r)?),
            t::GET_CONFIG_REQUEST => empty(payload, Body::GetConfigRequest)?,
            t::GET_CONFIG_REPLY => Body::GetConfigReply(config(&mut r)?),
            t::SET_CONFIG => Body::SetConfig(config(&mut r)?),
            t::PACKET_IN => Body::PacketIn(PacketIn::decode(v, &mut r)?),
            t::PACKET_OUT => Body::PacketOut(PacketOut::decode(v, &mut r)?),
            t::FLOW_MOD => Body::FlowMod(FlowMod::decode(v, &mut r)?),
            t::PORT_STATUS => Body::PortStatus(PortStatus::decode(v, &mut r)?),
            x if x == t::multipart_request(v) => Body::MultipartRequest(multipart(v, &mut r)?),
            x if x == t::multipart_reply(v) => Body::MultipartReply(multipart(v, &mut r)?),
            x if x == t::barrier_request(v) => empty(payload, Body::BarrierRequest)?,
            x if x == t::barrier_reply(v) => empty(payload, Body::BarrierReply)?,
            x => Body::Other { msg_type: x, body: payload.to_vec() },
        };
        if r.remaining() > 0 && !matches!(body, Body::Hello(_) | Body::EchoRequest(_) | Body::EchoReply(_) | Body::Other { .. }) {
            return Err(DecodeError::Malformed { what: "message", detail: format!("{} trailing bytes after type {} body", r.remaining(), h.msg_type) });
        }
        Ok(Message { version: v, xid: h.xid, body })
    }

    /// The wire type number of this message in its version.
    pub fn msg_type(&self) -> u8 {
        let v = self.version;
        match &self.body {
            Body::Hello(_) => t::HELLO,
            Body::Error { .. } => t::ERROR,
            Body::EchoRequest(_) => t::ECHO_REQUEST,
            Body::EchoReply(_) => t::ECHO_REPLY,
            Body::FeaturesRequest => t::FEATURES_REQUEST,
            Body::FeaturesReply(_) => t::FEATURES_REPLY,
            Body::GetConfigRequest => t::GET_CONFIG_REQUEST,
            Body::GetConfigReply(_) => t::GET_CONFIG_REPLY,
            Body::SetConfig(_) => t::SET_CONFIG,
            Body::PacketIn(_) => t::PACKET_IN,
            Body::PacketOut(_) => t::PACKET_OUT,
            Body::FlowMod(_) => t::FLOW_MOD,
            Body::PortStatus(_) => t::PORT_STATUS,
            Body::MultipartRequest(_) => t::multipart_request(v),
            Body::MultipartReply(_) => t::multipart_reply(v),
            Body::BarrierRequest => t::barrier_request(v),
            Body::BarrierReply => t::barrier_reply(v),
            Body::Other { msg_type, .. } => *msg_type,
        }
    }

    /// Appends the encoded message to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let v = self.version;
        out.put_u8(v);
        out.put_u8(self.msg_type());
        out.put_u16(0);
        out.put_u32(self.xid);
        match &self.body {
            Body::Hello(b) | Body::EchoRequest(b) | Body::EchoReply(b) | Body::Other { body: b, .. } => out.extend_from_slice(b),
            Body::Error { err_type, code, data } => {
                out.put_u16(*err_type);
                out.put_u16(*code);
                out.extend_from_slice(data);
            }
            Body::FeaturesRequest | Body::GetConfigRequest | Body::BarrierRequest | Body::BarrierReply => {}
            Body::FeaturesReply(f) => f.encode(v, out),
            Body::GetConfigReply(c) | Body::SetConfig(c) => {
                out.put_u16(c.flags);
                out.put_u16(c.miss_send_len);
            }
            Body::PacketIn(p) => p.encode(v, out),
            Body::PacketOut(p) => p.encode(v, out),
            Body::FlowMod(f) => f.encode(v, out),
            Body::PortStatus(p) => p.encode(v, out),
            Body::MultipartRequest(m) | Body::MultipartReply(m) => {
                out.put_u16(m.mp_type);
                out.put_u16(m.flags);
                if v != OFP10 {
                    out.put_zeros(4);
                }
                out.extend_from_slice(&m.body);
            }
        }
        let len = (out.len() - start) as u16;
        out[start + 2..start + 4].copy_from_slice(&len.to_be_bytes());
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        self.encode_into(&mut out);
        out
    }

    /// Versions advertised by a HELLO: its bitmap, or just its header version.
    pub fn hello_versions(&self) -> Vec<u8> {
        if let Body::Hello(elems) = &self.body {
            let mut r = Reader::new(elems, "hello element");
            while r.remaining() >= 4 {
                let (Ok(et), Ok(len)) = (r.u16(), r.u16()) else { break };
                let len = len as usize;
                if len < 4 || r.remaining() < len - 4 {
                    break;
                }
                let data = r.bytes(len - 4).unwrap_or_default();
                if et == HELLO_ELEM_VERSIONBITMAP {
                    let mut vs = Vec::new();
                    for (i, w) in data.chunks_exact(4).enumerate() {
                        let bits = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
                        vs.extend((0..32).filter(|b| bits & (1 << b) != 0).map(|b| (i * 32 + b) as u8));
                    }
                    return vs;
                }
                let _ = r.skip(crate::wire::pad8(len));
            }
        }
        vec![self.version]
    }
}

fn empty(payload: &[u8], body: Body) -> Result<Body, DecodeError> {
    if payload.is_empty() {
        Ok(body)
    } else {
        Err(DecodeError::Malformed { what: "message", detail: format!("{} unexpected body bytes", payload.len()) })
    }
}

fn config(r: &mut Reader) -> Result<SwitchConfig, DecodeError> {
    Ok(SwitchConfig { flags: r.u16()?, miss_send_len: r.u16()? })
}

fn multipart(version: u8, r: &mut Reader) -> Result<Multipart, DecodeError> {
    let mp_type = r.u16()?;
    let flags = r.u16()?;
    if version != OFP10 {
        r.skip(4)?;
    }
    Ok(Multipart { mp_type, flags, body: r.rest().to_vec() })
}
