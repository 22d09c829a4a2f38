//! Recorded Open vSwitch <-> ovs-testcontroller / ovs-ofctl messages (see
//! tests/golden/record.py) must decode into the right bodies and re-encode to
//! the same bytes.

use openflow::fast::{response_view, ResponseKind};
use openflow::{Body, Message, OFP10, OFP13};

fn load(name: &str) -> Vec<(String, Vec<u8>)> {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (who, hex) = l.split_once(' ').unwrap();
            let bytes = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
            (who.to_string(), bytes)
        })
        .collect()
}

fn round_trip_all(name: &str) -> Vec<Message> {
    load(name)
        .into_iter()
        .map(|(who, bytes)| {
            let m = Message::decode(&bytes).unwrap_or_else(|e| panic!("{name}: {who} message failed to decode: {e}"));
            assert_eq!(m.encode(), bytes, "{name}: {who} {:?} does not re-encode byte for byte", m.body);
            m
        })
        .collect()
}

fn count(msgs: &[Message], f: impl Fn(&Body) -> bool) -> usize {
    msgs.iter().filter(|m| f(&m.body)).count()
}

#[test]
fn of10_recording_round_trips() {
    let msgs = round_trip_all("of10.txt");
    assert!(msgs.iter().all(|m| m.version == OFP10));
    assert!(count(&msgs, |b| matches!(b, Body::Other { .. })) == 0, "every recorded 1.0 message has a typed body");
    let f = msgs.iter().find_map(|m| if let Body::FeaturesReply(f) = &m.body { Some(f) } else { None }).unwrap();
    assert_eq!(f.datapath_id, 0x42);
    assert_eq!(f.ports.len(), 1);
    assert_eq!(f.ports[0].port_no, 0xfffe);
    assert_eq!(&f.ports[0].name[..8], b"sbofrec0");
    let pi = msgs.iter().find_map(|m| if let Body::PacketIn(p) = &m.body { Some(p) } else { None }).unwrap();
    assert_eq!((pi.buffer_id, pi.total_len, pi.in_port, pi.data.len()), (0xffff_ffff, 46, 0xfffe, 46));
    assert_eq!(&pi.data[..12], &[0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1]);
    assert!(count(&msgs, |b| matches!(b, Body::FlowMod(_))) >= 1);
    assert!(count(&msgs, |b| matches!(b, Body::BarrierRequest)) >= 1);
    assert!(count(&msgs, |b| matches!(b, Body::MultipartReply(_))) >= 2);
    assert!(count(&msgs, |b| matches!(b, Body::EchoReply(_))) >= 1);
}

#[test]
fn of13_recording_round_trips() {
    let msgs = round_trip_all("of13.txt");
    assert!(msgs.iter().all(|m| m.version == OFP13));
    assert!(count(&msgs, |b| matches!(b, Body::Other { .. })) == 0, "every recorded 1.3 message has a typed body");
    let hello = msgs.iter().find(|m| matches!(m.body, Body::Hello(_))).unwrap();
    assert_eq!(hello.hello_versions(), vec![OFP13]);
    let pi = msgs.iter().find_map(|m| if let Body::PacketIn(p) = &m.body { Some(p) } else { None }).unwrap();
    assert_eq!(pi.matched.get(0), Some(&0xffff_fffeu32.to_be_bytes()[..]), "in_port OXM");
    assert_eq!(pi.data.len(), 46);
    let port_desc = msgs.iter().find_map(|m| match &m.body {
        Body::MultipartReply(mp) if mp.mp_type == openflow::mp_type::PORT_DESC => Some(mp),
        _ => None,
    });
    assert_eq!(port_desc.unwrap().body.len(), 64, "one ofp_port");
}

#[test]
fn recorded_responses_are_read_in_place() {
    for (name, version) in [("of10.txt", OFP10), ("of13.txt", OFP13)] {
        for (_, bytes) in load(name) {
            let m = Message::decode(&bytes).unwrap();
            let view = response_view(&bytes).unwrap();
            let released = openflow::fast::released_buffer(&bytes);
            match &m.body {
                Body::FlowMod(f) => {
                    let buffered = f.command <= 2 && f.buffer_id != openflow::NO_BUFFER;
                    assert_eq!(released, buffered.then_some(f.buffer_id), "{name}: fast path");
                    let v = view.unwrap();
                    assert_eq!(v.kind, ResponseKind::FlowMod { command: f.command });
                    assert_eq!((v.buffer_id, v.eth_src()), (f.buffer_id, f.eth_src()), "{name} v{version}");
                }
                Body::PacketOut(p) => {
                    assert_eq!(released, (p.buffer_id != openflow::NO_BUFFER).then_some(p.buffer_id), "{name}: fast path");
                    let v = view.unwrap();
                    assert_eq!((v.buffer_id, v.packet), (p.buffer_id, &p.data[..]));
                }
                _ => assert!(view.is_none() && released.is_none()),
            }
        }
    }
}

#[test]
fn recorded_packet_ins_are_read_in_place() {
    for name in ["of10.txt", "of13.txt"] {
        let mut seen = 0;
        for (_, bytes) in load(name) {
            if let Body::PacketIn(p) = Message::decode(&bytes).unwrap().body {
                let v = openflow::fast::packet_in_view(&bytes).unwrap().unwrap();
                assert_eq!((v.buffer_id, v.data), (p.buffer_id, &p.data[..]));
                assert!(v.in_port == 0xfffe || v.in_port == 0xffff_fffe, "{name}: LOCAL port, got {:x}", v.in_port);
                seen += 1;
            }
        }
        assert!(seen >= 1);
    }
}
