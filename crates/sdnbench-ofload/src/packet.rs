//! The PACKET_INs an emulated switch raises, and how a response is tied back
//! to one. Each request carries its sequence number three ways: as the buffer
//! id, inside the UDP payload (for unbuffered PACKET_OUTs that echo the
//! packet) and, through the source MAC, as the host it came from (for
//! FLOW_MODs that match on it).

use openflow::{Body, Message, Oxm, PacketIn, NO_BUFFER, OFP10};

/// Marks packets this tool built, so foreign packets are never mis-matched.
pub const MAGIC: [u8; 4] = *b"SBOF";
/// Length of the Ethernet frame inside each PACKET_IN (same as cbench).
pub const FRAME_LEN: usize = 64;
/// Offset of MAGIC in the frame: Ethernet 14 + IPv4 20 + UDP 8.
const PAYLOAD_AT: usize = 42;
/// Port the hosts sit behind; the destination host sits behind port 2.
pub const HOST_PORT: u32 = 1;
pub const DST_PORT: u32 = 2;

/// MAC of host `host` behind switch `switch` (locally administered unicast).
pub fn host_mac(switch: u32, host: u32) -> [u8; 6] {
    [0x02, (switch >> 8) as u8, switch as u8, (host >> 16) as u8, (host >> 8) as u8, host as u8]
}

/// The host all test traffic is addressed to (one per switch).
pub fn dst_mac(switch: u32) -> [u8; 6] {
    host_mac(switch, 0xff_ffff)
}

/// The host index encoded in a MAC this switch generated, if it is one.
pub fn host_of(switch: u32, mac: &[u8; 6]) -> Option<u32> {
    (mac[0] == 0x02 && mac[1] == (switch >> 8) as u8 && mac[2] == switch as u8)
        .then(|| u32::from_be_bytes([0, mac[3], mac[4], mac[5]]))
}

/// A 64-byte Ethernet/IPv4/UDP frame from `src` to `dst` carrying `seq`.
pub fn frame(src: [u8; 6], dst: [u8; 6], switch: u32, seq: u32) -> Vec<u8> {
    let mut f = Vec::with_capacity(FRAME_LEN);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x08, 0x00]);
    // IPv4: 10.0.0.1 -> 10.0.0.2, UDP, total length 50.
    let mut ip = [0x45, 0, 0, 50, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    let sum = ip.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum::<u32>();
    let sum = !(((sum & 0xffff) + (sum >> 16)) as u16);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[0x9c, 0x40, 0x9c, 0x41, 0, 30, 0, 0]); // UDP 40000 -> 40001
    f.extend_from_slice(&MAGIC);
    f.extend_from_slice(&switch.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f.resize(FRAME_LEN, 0);
    f
}

/// Sequence number carried in a frame this switch built, if it is one.
pub fn seq_of(switch: u32, frame: &[u8]) -> Option<u32> {
    let p = frame.get(PAYLOAD_AT..PAYLOAD_AT + 12)?;
    (p[..4] == MAGIC && p[4..8] == switch.to_be_bytes()).then(|| u32::from_be_bytes([p[8], p[9], p[10], p[11]]))
}

/// A pre-encoded PACKET_IN that is patched in place for every request, so
/// generating one costs a copy and four stores.
pub struct Template {
    bytes: Vec<u8>,
    frame_at: usize,
    buffered: bool,
}

impl Template {
    pub fn new(version: u8, switch: u32, buffered: bool) -> Template {
        let data = frame(host_mac(switch, 0), dst_mac(switch), switch, 0);
        let bytes = packet_in(version, HOST_PORT, 0, data).encode();
        let frame_at = bytes.len() - FRAME_LEN;
        Template { bytes, frame_at, buffered }
    }

    /// Appends the PACKET_IN for request `seq` from host `host`.
    pub fn push(&self, out: &mut Vec<u8>, switch: u32, seq: u32, host: u32) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        let m = &mut out[at..];
        m[4..8].copy_from_slice(&seq.to_be_bytes());
        let buffer_id = if self.buffered { seq } else { NO_BUFFER };
        m[8..12].copy_from_slice(&buffer_id.to_be_bytes());
        let f = self.frame_at;
        m[f + 6..f + 12].copy_from_slice(&host_mac(switch, host));
        m[f + PAYLOAD_AT + 8..f + PAYLOAD_AT + 12].copy_from_slice(&seq.to_be_bytes());
    }
}

/// A table-miss PACKET_IN of `data` arriving on `in_port`.
pub fn packet_in(version: u8, in_port: u32, buffer_id: u32, data: Vec<u8>) -> Message {
    let pi = PacketIn {
        buffer_id,
        total_len: data.len() as u16,
        in_port: if version == OFP10 { in_port as u16 } else { 0 },
        matched: if version == OFP10 { Oxm::default() } else { Oxm::in_port(in_port) },
        data,
        ..Default::default()
    };
    Message::new(version, 0, Body::PacketIn(pi))
}

/// Buffer ids are request sequence numbers kept below NO_BUFFER.
pub fn next_seq(seq: u32) -> u32 {
    (seq + 1) & 0x7fff_ffff
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::OFP13;

    #[test]
    fn template_patches_decode_as_packet_ins() {
        for version in [OFP10, OFP13] {
            let t = Template::new(version, 7, true);
            let mut out = Vec::new();
            t.push(&mut out, 7, 1234, 99);
            let m = Message::decode(&out).unwrap();
            assert_eq!(m.xid, 1234);
            let Body::PacketIn(pi) = m.body else { panic!("not a packet-in") };
            assert_eq!(pi.buffer_id, 1234);
            assert_eq!(seq_of(7, &pi.data), Some(1234));
            assert_eq!(host_of(7, pi.data[6..12].try_into().unwrap()), Some(99));
            assert_eq!(seq_of(8, &pi.data), None, "another switch's packet is not ours");
        }
        assert_eq!(Template::new(OFP10, 1, true).bytes.len(), 82, "same size as cbench's");
    }
}
