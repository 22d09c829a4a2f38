//! What an emulated switch answers to a controller's requests during and
//! after the handshake. Pure: a message in, the replies out, so every answer
//! is unit-tested without a socket.

use openflow::{error_code, mp_type, Body, FeaturesReply, Message, Multipart, Port, SwitchConfig, OFP10};

/// Message types that only exist in 1.3 and that controllers send at connect.
const ROLE_REQUEST13: u8 = 24;
const GET_ASYNC_REQUEST13: u8 = 26;
/// Messages a switch applies silently (no reply is due).
const SILENT13: [u8; 6] = [15, 16, 17, 28, 29, 11]; // GROUP/PORT/TABLE_MOD, SET_ASYNC, METER_MOD

/// The state a switch keeps about its controller session.
pub struct SwitchState {
    pub version: u8,
    pub dpid: u64,
    pub ports: Vec<Port>,
    pub config: SwitchConfig,
    /// Set once FEATURES_REPLY went out: the controller now knows the switch.
    pub features_sent: bool,
    /// ERROR messages the controller sent us.
    pub controller_errors: u64,
}

impl SwitchState {
    pub fn new(version: u8, dpid: u64, n_ports: u32) -> SwitchState {
        let ports = (1..=n_ports).map(|p| Port::emulated(p, dpid, &format!("s{dpid}-eth{p}"))).collect();
        SwitchState { version, dpid, ports, config: SwitchConfig { flags: 0, miss_send_len: 128 }, features_sent: false, controller_errors: 0 }
    }

    /// The replies due to `m` (whose encoded bytes are `raw`).
    pub fn reply(&mut self, m: &Message, raw: &[u8]) -> Vec<Message> {
        let v = self.version;
        let body = match &m.body {
            Body::Hello(_) | Body::EchoReply(_) | Body::BarrierReply | Body::FlowMod(_) | Body::PacketOut(_) => return vec![],
            Body::Error { .. } => {
                self.controller_errors += 1;
                return vec![];
            }
            Body::EchoRequest(d) => Body::EchoReply(d.clone()),
            Body::FeaturesRequest => {
                self.features_sent = true;
                Body::FeaturesReply(FeaturesReply {
                    datapath_id: self.dpid,
                    n_buffers: 256,
                    n_tables: if v == OFP10 { 1 } else { 254 },
                    auxiliary_id: 0,
                    capabilities: 0x47, // flow, table, port and queue statistics (same bits in 1.0 and 1.3)
                    actions: if v == OFP10 { 0xfff } else { 0 },
                    ports: if v == OFP10 { self.ports.clone() } else { vec![] },
                })
            }
            Body::GetConfigRequest => Body::GetConfigReply(self.config),
            Body::SetConfig(c) => {
                self.config = *c;
                return vec![];
            }
            Body::BarrierRequest => Body::BarrierReply,
            Body::MultipartRequest(mp) => self.multipart(mp, raw),
            Body::Other { msg_type, body } if v != OFP10 && *msg_type == ROLE_REQUEST13 => {
                Body::Other { msg_type: ROLE_REQUEST13 + 1, body: body.clone() }
            }
            Body::Other { msg_type, .. } if v != OFP10 && *msg_type == GET_ASYNC_REQUEST13 => {
                let mut b = Vec::with_capacity(24);
                for w in [0x3u32, 0, 0x7, 0x7, 0xf, 0] {
                    b.extend_from_slice(&w.to_be_bytes());
                }
                Body::Other { msg_type: GET_ASYNC_REQUEST13 + 1, body: b }
            }
            Body::Other { msg_type, .. } if v != OFP10 && SILENT13.contains(msg_type) => return vec![],
            Body::Other { msg_type, .. } if v == OFP10 && (*msg_type == 15 || *msg_type == 11) => return vec![], // PORT_MOD
            _ => error(error_code::BAD_REQUEST, error_code::BAD_REQUEST_BAD_TYPE, raw),
        };
        vec![Message::new(v, m.xid, body)]
    }

    fn multipart(&self, mp: &Multipart, raw: &[u8]) -> Body {
        let v = self.version;
        let body = match mp.mp_type {
            mp_type::DESC => desc(self.dpid),
            mp_type::PORT_DESC if v != OFP10 => {
                let mut b = Vec::new();
                for p in &self.ports {
                    p.encode(v, &mut b);
                }
                b
            }
            mp_type::AGGREGATE => vec![0; 24],
            mp_type::GROUP_FEATURES if v != OFP10 => vec![0; 40],
            mp_type::METER_FEATURES if v != OFP10 => vec![0; 16],
            mp_type::FLOW | mp_type::TABLE | mp_type::PORT_STATS | mp_type::QUEUE => vec![],
            mp_type::GROUP | mp_type::GROUP_DESC | mp_type::METER | mp_type::METER_CONFIG | mp_type::TABLE_FEATURES if v != OFP10 => vec![],
            _ => return error(error_code::BAD_REQUEST, error_code::BAD_REQUEST_BAD_MULTIPART, raw),
        };
        Body::MultipartReply(Multipart { mp_type: mp.mp_type, flags: 0, body })
    }
}

/// An ERROR carrying the first 64 bytes of the offending request, per the spec.
fn error(err_type: u16, code: u16, raw: &[u8]) -> Body {
    Body::Error { err_type, code, data: raw[..raw.len().min(64)].to_vec() }
}

/// ofp_desc: manufacturer, hardware, software, serial number, datapath text.
fn desc(dpid: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(1056);
    for (text, len) in [("sdnbench", 256), ("sdnbench-ofload emulated switch", 256), (env!("CARGO_PKG_VERSION"), 256), ("0", 32)] {
        let start = b.len();
        b.extend_from_slice(text.as_bytes());
        b.resize(start + len, 0);
    }
    let start = b.len();
    b.extend_from_slice(format!("dpid {dpid:016x}").as_bytes());
    b.resize(start + 256, 0);
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::OFP13;

    fn ask(s: &mut SwitchState, body: Body) -> Vec<Message> {
        let m = Message::new(s.version, 42, body);
        let raw = m.encode();
        s.reply(&m, &raw)
    }

    #[test]
    fn features_reply_lists_ports_in_10_only() {
        let mut s = SwitchState::new(OFP10, 7, 3);
        let r = ask(&mut s, Body::FeaturesRequest);
        let Body::FeaturesReply(f) = &r[0].body else { panic!() };
        assert_eq!((f.datapath_id, f.ports.len(), r[0].xid), (7, 3, 42));
        assert!(s.features_sent);
        let mut s = SwitchState::new(OFP13, 7, 3);
        let r = ask(&mut s, Body::FeaturesRequest);
        let Body::FeaturesReply(f) = &r[0].body else { panic!() };
        assert!(f.ports.is_empty());
        let r = ask(&mut s, Body::MultipartRequest(Multipart { mp_type: mp_type::PORT_DESC, flags: 0, body: vec![] }));
        let Body::MultipartReply(mp) = &r[0].body else { panic!() };
        assert_eq!(mp.body.len(), 3 * 64);
    }

    #[test]
    fn replies_echo_config_barrier_and_unknown() {
        let mut s = SwitchState::new(OFP13, 1, 1);
        assert_eq!(ask(&mut s, Body::EchoRequest(vec![1, 2])), vec![Message::new(OFP13, 42, Body::EchoReply(vec![1, 2]))]);
        assert!(ask(&mut s, Body::SetConfig(SwitchConfig { flags: 0, miss_send_len: 0xffff })).is_empty());
        assert_eq!(ask(&mut s, Body::GetConfigRequest)[0].body, Body::GetConfigReply(SwitchConfig { flags: 0, miss_send_len: 0xffff }));
        assert_eq!(ask(&mut s, Body::BarrierRequest)[0].body, Body::BarrierReply);
        let r = ask(&mut s, Body::MultipartRequest(Multipart { mp_type: 0x4242, flags: 0, body: vec![] }));
        assert!(matches!(r[0].body, Body::Error { err_type: 1, code: 2, .. }));
        let r = ask(&mut s, Body::Other { msg_type: 22, body: vec![0; 8] });
        assert!(matches!(r[0].body, Body::Error { err_type: 1, code: 1, .. }));
        let desc = ask(&mut s, Body::MultipartRequest(Multipart { mp_type: mp_type::DESC, flags: 0, body: vec![] }));
        let Body::MultipartReply(mp) = &desc[0].body else { panic!() };
        assert_eq!(mp.body.len(), 1056);
    }
}
