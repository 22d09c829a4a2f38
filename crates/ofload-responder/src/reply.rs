//! Pre-encoded answers to a PACKET_IN, patched in place. The responder must
//! cost far less per message than the load generator, or the benchmark
//! measures the responder.

use openflow::types::{FlowMatch, Match10, Oxm, OXM_ETH_DST, OXM_ETH_SRC};
use openflow::{Body, FlowMod, Message, PacketOut, NO_BUFFER, OFP10};

/// What the responder answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplyKind {
    /// FLOW_MOD ADD for (in_port, eth_src, eth_dst) carrying the buffer id, as a learning switch does.
    FlowMod,
    /// PACKET_OUT of the buffered packet to port 2.
    PacketOut,
}

/// Output port the answers send packets to.
const OUT_PORT: u32 = 2;

/// A reply template and the offsets of the fields patched per request.
pub struct Reply {
    bytes: Vec<u8>,
    buffer_at: usize,
    in_port_at: usize,
    src_at: Option<usize>,
    dst_at: Option<usize>,
    version: u8,
}

fn output_action(version: u8) -> Vec<u8> {
    if version == OFP10 {
        let mut a = vec![0, 0, 0, 8, 0, OUT_PORT as u8, 0xff, 0xff];
        a[4..6].copy_from_slice(&(OUT_PORT as u16).to_be_bytes());
        a
    } else {
        let mut a = vec![0, 0, 0, 16];
        a.extend_from_slice(&OUT_PORT.to_be_bytes());
        a.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0, 0, 0]);
        a
    }
}

impl Reply {
    pub fn new(version: u8, kind: ReplyKind) -> Reply {
        // Sentinel values locate the patched fields in the encoded template.
        let (src, dst) = ([0xa1; 6], [0xb2; 6]);
        let body = match kind {
            ReplyKind::PacketOut => Body::PacketOut(PacketOut { buffer_id: 0xc3c3_c3c3, in_port: 0xd4d4, actions: output_action(version), data: vec![] }),
            ReplyKind::FlowMod => {
                let matching = if version == OFP10 {
                    // Wildcard everything except in_port, dl_src and dl_dst.
                    FlowMatch::V10(Match10 { wildcards: 0x3f_ffff & !(1 | 4 | 8), in_port: 0xd4d4, dl_src: src, dl_dst: dst, ..Default::default() })
                } else {
                    let mut o = Oxm::in_port(0xd4d4);
                    o.push(OXM_ETH_DST, &dst);
                    o.push(OXM_ETH_SRC, &src);
                    FlowMatch::V13(o)
                };
                let instructions = if version == OFP10 {
                    output_action(version)
                } else {
                    let a = output_action(version);
                    let mut i = vec![0, 4, 0, (8 + a.len()) as u8, 0, 0, 0, 0]; // APPLY_ACTIONS
                    i.extend_from_slice(&a);
                    i
                };
                Body::FlowMod(FlowMod {
                    matching, cookie: 0, cookie_mask: 0, table_id: 0, command: 0, idle_timeout: 60, hard_timeout: 0,
                    priority: 100, buffer_id: 0xc3c3_c3c3, out_port: if version == OFP10 { 0xffff } else { 0xffff_ffff },
                    out_group: 0xffff_ffff, flags: 0, instructions,
                })
            }
        };
        let bytes = Message::new(version, 0, body).encode();
        let find = |pat: &[u8]| bytes.windows(pat.len()).position(|w| w == pat);
        let in_port_pat: &[u8] = if version == OFP10 { &[0xd4, 0xd4] } else { &[0, 0, 0xd4, 0xd4] };
        Reply {
            buffer_at: find(&[0xc3; 4]).expect("buffer id in template"),
            in_port_at: find(in_port_pat).expect("in_port in template"),
            src_at: find(&src),
            dst_at: find(&dst),
            bytes,
            version,
        }
    }

    /// Appends the answer to a PACKET_IN; unbuffered packets also get a
    /// PACKET_OUT carrying them, since there is no buffer to release.
    pub fn push(&self, out: &mut Vec<u8>, xid: u32, pi: &openflow::fast::PacketInView) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        let m = &mut out[at..];
        m[4..8].copy_from_slice(&xid.to_be_bytes());
        m[self.buffer_at..self.buffer_at + 4].copy_from_slice(&pi.buffer_id.to_be_bytes());
        if self.version == OFP10 {
            m[self.in_port_at..self.in_port_at + 2].copy_from_slice(&(pi.in_port as u16).to_be_bytes());
        } else {
            m[self.in_port_at..self.in_port_at + 4].copy_from_slice(&pi.in_port.to_be_bytes());
        }
        if let (Some(s), Some(d), true) = (self.src_at, self.dst_at, pi.data.len() >= 12) {
            m[d..d + 6].copy_from_slice(&pi.data[0..6]);
            m[s..s + 6].copy_from_slice(&pi.data[6..12]);
        }
        if pi.buffer_id == NO_BUFFER && self.src_at.is_some() {
            let po = PacketOut { buffer_id: NO_BUFFER, in_port: pi.in_port, actions: output_action(self.version), data: pi.data.to_vec() };
            Message::new(self.version, xid, Body::PacketOut(po)).encode_into(out);
        } else if pi.buffer_id == NO_BUFFER {
            // PACKET_OUT template: append the packet and fix the length.
            out.extend_from_slice(pi.data);
            let len = (out.len() - at) as u16;
            out[at + 2..at + 4].copy_from_slice(&len.to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::fast::PacketInView;
    use openflow::types::OXM_IN_PORT;
    use openflow::OFP13;

    #[test]
    fn patched_replies_decode_with_the_request_fields() {
        let data: Vec<u8> = (1..=64).collect();
        for version in [OFP10, OFP13] {
            for kind in [ReplyKind::FlowMod, ReplyKind::PacketOut] {
                let r = Reply::new(version, kind);
                let mut out = Vec::new();
                r.push(&mut out, 77, &PacketInView { buffer_id: 5, in_port: 3, data: &data });
                let m = Message::decode(&out).unwrap();
                assert_eq!(m.xid, 77);
                match m.body {
                    Body::FlowMod(f) => {
                        assert_eq!((f.buffer_id, f.eth_src()), (5, Some([7, 8, 9, 10, 11, 12])));
                        if let FlowMatch::V10(m10) = &f.matching {
                            assert_eq!((m10.in_port, m10.dl_dst), (3, [1, 2, 3, 4, 5, 6]));
                        }
                        if let FlowMatch::V13(o) = &f.matching {
                            assert_eq!(o.get(OXM_IN_PORT), Some(&[0, 0, 0, 3][..]));
                        }
                    }
                    Body::PacketOut(p) => assert_eq!((p.buffer_id, p.in_port), (5, 3)),
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
    }
}
