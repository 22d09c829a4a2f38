//! The probe wire format: a fixed 32-byte header at the start of every UDP payload.
//!
//! 32 bytes is the UDP payload of a real G.729 RTP packet (12 B RTP header +
//! 20 B codec frame), so the smallest VoIP preset still carries a full probe.
//! All integers are big-endian (network order).
//!
//! ```text
//! 0      2    3      4         8           16            24             32
//! | magic | vk | flags | flow_id | sequence  | send_ns     | intended_ns  | [reflect_ns] padding...
//! ```
//! * `magic` = 0x5354 ("ST"); `vk` = version (high nibble, 1) | kind (low nibble).
//! * `send_ns`: CLOCK_REALTIME nanoseconds taken just before the packet was handed
//!   to the kernel; `intended_ns`: when the schedule wanted it sent. Latency from
//!   `intended_ns` includes sender lateness (no coordinated omission).
//! * kind `Fin` carries the sender's total packet count for the flow in `sequence`.
//! * kind `EchoReply` may carry the reflector's arrival time at bytes 32..40
//!   (flag `FLAG_REFLECT_TS`) so an echo run also yields both one-way delays.

/// Fixed header length in bytes; also the smallest payload the sender accepts.
pub const HEADER_LEN: usize = 32;
/// Header plus the reflector timestamp of an echo reply.
pub const REFLECT_LEN: usize = 40;
/// "ST" in ASCII.
pub const MAGIC: u16 = 0x5354;
/// Wire format version carried in the high nibble of byte 2.
pub const VERSION: u8 = 1;
/// Set on echo replies that carry the reflector's arrival time.
pub const FLAG_REFLECT_TS: u8 = 0x01;
/// Set on video probes: bytes 32..40 hold frame number, fragment index and count.
pub const FLAG_VIDEO: u8 = 0x02;

/// What a probe packet means to its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A measured data packet.
    Data = 0,
    /// End of flow: `seq` holds the number of data packets the sender sent.
    Fin = 1,
    /// A data packet to be reflected (round-trip mode).
    EchoRequest = 2,
    /// The reflection of an `EchoRequest`.
    EchoReply = 3,
}

impl Kind {
    fn from_nibble(n: u8) -> Option<Kind> {
        match n {
            0 => Some(Kind::Data),
            1 => Some(Kind::Fin),
            2 => Some(Kind::EchoRequest),
            3 => Some(Kind::EchoReply),
            _ => None,
        }
    }
}

/// One decoded probe header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub kind: Kind,
    pub flags: u8,
    pub flow_id: u32,
    pub seq: u64,
    pub send_ns: u64,
    pub intended_ns: u64,
    /// Reflector arrival time (echo replies with `FLAG_REFLECT_TS` only).
    pub reflect_ns: Option<u64>,
}

/// Why a datagram is not a valid probe; the receiver counts these, never panics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    Truncated,
    BadMagic,
    BadVersion,
    BadKind,
}

impl Probe {
    /// A data probe with the given identity and times.
    pub fn data(flow_id: u32, seq: u64, send_ns: u64, intended_ns: u64) -> Probe {
        Probe { kind: Kind::Data, flags: 0, flow_id, seq, send_ns, intended_ns, reflect_ns: None }
    }

    /// Writes the header (and reflector time if any) into `buf`; returns bytes written.
    ///
    /// Panics only on a caller bug (buffer shorter than the header), never on input data.
    pub fn encode(&self, buf: &mut [u8]) -> usize {
        buf[0..2].copy_from_slice(&MAGIC.to_be_bytes());
        buf[2] = (VERSION << 4) | (self.kind as u8);
        let mut flags = self.flags & !FLAG_REFLECT_TS;
        let mut len = HEADER_LEN;
        if let (Some(ts), true) = (self.reflect_ns, buf.len() >= REFLECT_LEN) {
            flags |= FLAG_REFLECT_TS;
            buf[32..40].copy_from_slice(&ts.to_be_bytes());
            len = REFLECT_LEN;
        }
        buf[3] = flags;
        buf[4..8].copy_from_slice(&self.flow_id.to_be_bytes());
        buf[8..16].copy_from_slice(&self.seq.to_be_bytes());
        buf[16..24].copy_from_slice(&self.send_ns.to_be_bytes());
        buf[24..32].copy_from_slice(&self.intended_ns.to_be_bytes());
        len
    }

    /// Decodes a datagram; any malformed or truncated input is an `Err`, never a panic.
    pub fn decode(buf: &[u8]) -> Result<Probe, DecodeError> {
        if buf.len() < HEADER_LEN {
            return Err(DecodeError::Truncated);
        }
        if u16::from_be_bytes([buf[0], buf[1]]) != MAGIC {
            return Err(DecodeError::BadMagic);
        }
        if buf[2] >> 4 != VERSION {
            return Err(DecodeError::BadVersion);
        }
        let kind = Kind::from_nibble(buf[2] & 0x0f).ok_or(DecodeError::BadKind)?;
        let flags = buf[3];
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&buf[o..o + 8]);
            u64::from_be_bytes(b)
        };
        let reflect_ns = if flags & FLAG_REFLECT_TS != 0 {
            if buf.len() < REFLECT_LEN {
                return Err(DecodeError::Truncated);
            }
            Some(u64_at(32))
        } else {
            None
        };
        Ok(Probe {
            kind,
            flags,
            flow_id: u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]),
            seq: u64_at(8),
            send_ns: u64_at(16),
            intended_ns: u64_at(24),
            reflect_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn roundtrip_data() {
        let p = Probe::data(7, 123_456_789_012, 1_700_000_000_000_000_000, 1_699_999_999_999_999_000);
        let mut buf = [0u8; 64];
        assert_eq!(p.encode(&mut buf), HEADER_LEN);
        assert_eq!(Probe::decode(&buf).unwrap(), p);
    }

    #[test]
    fn reflect_ts_needs_room() {
        let mut p = Probe::data(1, 2, 3, 4);
        p.kind = Kind::EchoReply;
        p.reflect_ns = Some(99);
        let mut small = [0u8; 32];
        p.encode(&mut small);
        assert_eq!(Probe::decode(&small).unwrap().reflect_ns, None);
        let mut big = [0u8; 40];
        p.encode(&mut big);
        assert_eq!(Probe::decode(&big).unwrap().reflect_ns, Some(99));
        // A reply that claims a reflector time but was cut short is invalid.
        assert_eq!(Probe::decode(&big[..36]), Err(DecodeError::Truncated));
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(Probe::decode(&[]), Err(DecodeError::Truncated));
        assert_eq!(Probe::decode(&[0u8; 31]), Err(DecodeError::Truncated));
        assert_eq!(Probe::decode(&[0u8; 32]), Err(DecodeError::BadMagic));
        let mut b = [0u8; 32];
        Probe::data(1, 1, 1, 1).encode(&mut b);
        b[2] = 0x20;
        assert_eq!(Probe::decode(&b), Err(DecodeError::BadVersion));
        b[2] = 0x1f;
        assert_eq!(Probe::decode(&b), Err(DecodeError::BadKind));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Arbitrary bytes never panic the decoder.
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
            let _ = Probe::decode(&bytes);
        }

        /// Valid headers with arbitrary fields survive encode/decode; every truncation fails cleanly.
        #[test]
        fn roundtrip_and_truncation(flow in any::<u32>(), seq in any::<u64>(), s in any::<u64>(),
                                    i in any::<u64>(), cut in 0usize..32, pad in 0usize..40) {
            let p = Probe::data(flow, seq, s, i);
            let mut buf = vec![0u8; HEADER_LEN + pad];
            p.encode(&mut buf);
            prop_assert_eq!(Probe::decode(&buf), Ok(p));
            prop_assert_eq!(Probe::decode(&buf[..cut]), Err(DecodeError::Truncated));
        }

        /// Flipping any byte of a valid header gives either a clean error or a valid probe.
        #[test]
        fn mutated_headers(pos in 0usize..40, val in any::<u8>(), seq in any::<u64>()) {
            let mut buf = [0u8; 40];
            let mut p = Probe::data(3, seq, 10, 9);
            p.kind = Kind::EchoReply;
            p.reflect_ns = Some(11);
            p.encode(&mut buf);
            buf[pos] = val;
            let _ = Probe::decode(&buf);
        }
    }
}
