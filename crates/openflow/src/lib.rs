//! OpenFlow 1.0 and 1.3 wire format.
//!
//! A `Message` is a header (version, xid) plus a `Body`. Every body decodes
//! from and re-encodes to the exact bytes it came from: variable parts that a
//! benchmark does not need to interpret (action lists, instructions, OXM
//! fields, multipart bodies) are kept as raw bytes with helpers to read them,
//! so nothing is lost and nothing is invented. Decoding never panics: a short
//! or inconsistent message yields a `DecodeError` that says what was wrong.

mod error;
pub mod fast;
mod message;
pub mod port;
pub mod types;
pub mod wire;

pub use error::DecodeError;
pub use message::{Body, Message, Multipart};
pub use port::{FeaturesReply, Port, PortStatus, SwitchConfig};
pub use types::{FlowMod, Match10, Oxm, PacketIn, PacketOut};

/// OpenFlow 1.0 wire version.
pub const OFP10: u8 = 0x01;
/// OpenFlow 1.3 wire version.
pub const OFP13: u8 = 0x04;
/// Length of the common header (version, type, length, xid).
pub const HEADER_LEN: usize = 8;
/// "No buffer": the packet is carried in the message itself.
pub const NO_BUFFER: u32 = 0xffff_ffff;

/// The common OpenFlow header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub msg_type: u8,
    pub length: u16,
    pub xid: u32,
}

impl Header {
    /// Reads the header at the start of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Header, DecodeError> {
        if buf.len() < HEADER_LEN {
            return Err(DecodeError::Truncated { what: "header", need: HEADER_LEN, have: buf.len() });
        }
        let h = Header {
            version: buf[0],
            msg_type: buf[1],
            length: u16::from_be_bytes([buf[2], buf[3]]),
            xid: u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]),
        };
        if (h.length as usize) < HEADER_LEN {
            return Err(DecodeError::BadLength { length: h.length as usize });
        }
        Ok(h)
    }
}

/// Length of the first complete message in a stream buffer, `None` until it
/// has fully arrived. A length field below 8 is an error: the stream cannot be
/// re-synchronised after it.
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>, DecodeError> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let len = u16::from_be_bytes([buf[2], buf[3]]) as usize;
    if len < HEADER_LEN {
        return Err(DecodeError::BadLength { length: len });
    }
    Ok(if buf.len() >= len { Some(len) } else { None })
}

/// Message type numbers. OpenFlow 1.3 renumbered everything after PORT_MOD,
/// so the numbers that differ are given per version.
pub mod msg_type {
    pub const HELLO: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const ECHO_REQUEST: u8 = 2;
    pub const ECHO_REPLY: u8 = 3;
    pub const EXPERIMENTER: u8 = 4;
    pub const FEATURES_REQUEST: u8 = 5;
    pub const FEATURES_REPLY: u8 = 6;
    pub const GET_CONFIG_REQUEST: u8 = 7;
    pub const GET_CONFIG_REPLY: u8 = 8;
    pub const SET_CONFIG: u8 = 9;
    pub const PACKET_IN: u8 = 10;
    pub const FLOW_REMOVED: u8 = 11;
    pub const PORT_STATUS: u8 = 12;
    pub const PACKET_OUT: u8 = 13;
    pub const FLOW_MOD: u8 = 14;
    /// STATS_REQUEST (1.0) / MULTIPART_REQUEST (1.3).
    pub fn multipart_request(version: u8) -> u8 {
        if version == super::OFP10 { 16 } else { 18 }
    }
    pub fn multipart_reply(version: u8) -> u8 {
        if version == super::OFP10 { 17 } else { 19 }
    }
    pub fn barrier_request(version: u8) -> u8 {
        if version == super::OFP10 { 18 } else { 20 }
    }
    pub fn barrier_reply(version: u8) -> u8 {
        if version == super::OFP10 { 19 } else { 21 }
    }
}

/// Error types and codes used when answering requests a switch does not support.
pub mod error_code {
    pub const HELLO_FAILED: u16 = 0;
    pub const HELLO_INCOMPATIBLE: u16 = 0;
    pub const BAD_REQUEST: u16 = 1;
    pub const BAD_REQUEST_BAD_TYPE: u16 = 1;
    /// OFPBRC_BAD_STAT (1.0) and OFPBRC_BAD_MULTIPART (1.3) share the number.
    pub const BAD_REQUEST_BAD_MULTIPART: u16 = 2;
}

/// Multipart (stats) types; numbers shared by 1.0 and 1.3 where both have them.
pub mod mp_type {
    pub const DESC: u16 = 0;
    pub const FLOW: u16 = 1;
    pub const AGGREGATE: u16 = 2;
    pub const TABLE: u16 = 3;
    pub const PORT_STATS: u16 = 4;
    pub const QUEUE: u16 = 5;
    pub const GROUP: u16 = 6;
    pub const GROUP_DESC: u16 = 7;
    pub const GROUP_FEATURES: u16 = 8;
    pub const METER: u16 = 9;
    pub const METER_CONFIG: u16 = 10;
    pub const METER_FEATURES: u16 = 11;
    pub const TABLE_FEATURES: u16 = 12;
    pub const PORT_DESC: u16 = 13;
    pub const EXPERIMENTER: u16 = 0xffff;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_bitmap_round_trip() {
        let h = Message::hello(OFP13, &[OFP10, OFP13]);
        let bytes = h.encode();
        assert_eq!(bytes, [4, 0, 0, 16, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0x12]);
        let back = Message::decode(&bytes).unwrap();
        assert_eq!(back.hello_versions(), vec![OFP10, OFP13]);
    }

    #[test]
    fn short_length_field_is_an_error() {
        assert_eq!(frame_len(&[1, 0, 0, 4, 0, 0, 0, 0]), Err(DecodeError::BadLength { length: 4 }));
        assert_eq!(frame_len(&[1, 0, 0, 9, 0, 0, 0, 0]), Ok(None));
    }
}
