//! Malformed input yields a clear error, never a panic; the decoder is fuzzed
//! with arbitrary bytes and with mutations of valid messages.

use openflow::fast::response_view;
use openflow::{frame_len, Body, DecodeError, Message, PacketIn, OFP10, OFP13};
use proptest::prelude::*;

fn packet_in(version: u8) -> Vec<u8> {
    let pi = PacketIn { buffer_id: 7, total_len: 60, in_port: 1, matched: openflow::Oxm::in_port(1), data: vec![0xab; 60], ..Default::default() };
    Message::new(version, 9, Body::PacketIn(pi)).encode()
}

#[test]
fn truncated_body_names_the_structure() {
    let mut b = packet_in(OFP13);
    b.truncate(20);
    b[2..4].copy_from_slice(&20u16.to_be_bytes());
    let e = Message::decode(&b).unwrap_err();
    assert!(matches!(e, DecodeError::Truncated { .. }), "{e}");
    assert!(e.to_string().contains("truncated"));
}

#[test]
fn bad_match_length_is_malformed() {
    let mut b = packet_in(OFP13);
    b[8 + 16 + 2..8 + 16 + 4].copy_from_slice(&2u16.to_be_bytes());
    assert!(matches!(Message::decode(&b), Err(DecodeError::Malformed { .. })));
}

#[test]
fn unknown_version_is_reported() {
    let mut b = packet_in(OFP10);
    b[0] = 0x09;
    assert_eq!(Message::decode(&b), Err(DecodeError::UnsupportedVersion(9)));
}

#[test]
fn trailing_bytes_after_fixed_body_are_malformed() {
    let b = [OFP10, 18, 0, 10, 0, 0, 0, 1, 0xde, 0xad];
    assert!(matches!(Message::decode(&b), Err(DecodeError::Malformed { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = frame_len(&bytes);
        if let Ok(m) = Message::decode(&bytes) {
            // Whatever decodes must re-encode to a message that decodes the same.
            prop_assert_eq!(Message::decode(&m.encode()).unwrap(), m);
        }
        let _ = response_view(&bytes);
        let _ = openflow::fast::packet_in_view(&bytes);
    }

    #[test]
    fn released_buffer_agrees_with_the_full_view(version in prop_oneof![Just(OFP10), Just(OFP13)],
                                                 msg_type in prop_oneof![Just(13u8), Just(14u8), Just(10u8)],
                                                 body in proptest::collection::vec(prop_oneof![Just(0u8), Just(4u8), any::<u8>()], 0..120)) {
        // Zeros and fours are frequent so that commands (ADD = 0), action and
        // match lengths are often valid and the buffered case is reached.
        // A framed message (header length = its size), as the generator hands it over.
        let mut b = vec![version, msg_type, 0, 0, 0, 0, 0, 1];
        b.extend_from_slice(&body);
        let len = b.len() as u16;
        b[2..4].copy_from_slice(&len.to_be_bytes());
        let expected = match response_view(&b) {
            Ok(Some(v)) if v.buffer_id != openflow::NO_BUFFER => match v.kind {
                openflow::fast::ResponseKind::FlowMod { command } if command > 2 => None,
                _ => Some(v.buffer_id),
            },
            _ => None,
        };
        prop_assert_eq!(openflow::fast::released_buffer(&b), expected);
    }

    #[test]
    fn mutated_messages_never_panic(version in prop_oneof![Just(OFP10), Just(OFP13)],
                                    msg_type in 0u8..30, pos in 8usize..90, byte in any::<u8>(), cut in 8usize..100) {
        let mut b = packet_in(version);
        b[1] = msg_type;
        if pos < b.len() { b[pos] = byte; }
        b.truncate(cut);
        let _ = Message::decode(&b);
        let _ = response_view(&b);
        let _ = openflow::fast::packet_in_view(&b);
    }

    #[test]
    fn packet_in_round_trips(version in prop_oneof![Just(OFP10), Just(OFP13)], buffer_id in any::<u32>(),
                             in_port in 1u16..0xff00, data in proptest::collection::vec(any::<u8>(), 0..200)) {
        let matched = if version == OFP13 { openflow::Oxm::in_port(in_port as u32) } else { Default::default() };
        let pi = PacketIn { buffer_id, total_len: data.len() as u16, in_port: if version == OFP10 { in_port } else { 0 }, matched, data, ..Default::default() };
        let m = Message::new(version, 1, Body::PacketIn(pi));
        prop_assert_eq!(Message::decode(&m.encode()).unwrap(), m);
    }
}

#[test]
fn output_ports_of_both_versions() {
    use openflow::fast::{output_ports, PORT_FLOOD};
    let a10 = [0, 0, 0, 8, 0, 3, 0xff, 0xff, 0, 0, 0, 8, 0xff, 0xfb, 0, 0];
    assert_eq!(output_ports(OFP10, &a10), vec![3, PORT_FLOOD]);
    let a13 = [0, 0, 0, 16, 0, 0, 0, 7, 0xff, 0xe5, 0, 0, 0, 0, 0, 0];
    assert_eq!(output_ports(OFP13, &a13), vec![7]);
    assert!(output_ports(OFP13, &[0, 0, 0, 99, 0, 0, 0, 7]).is_empty(), "length beyond the list");
}
