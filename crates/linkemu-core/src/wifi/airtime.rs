//! How long 802.11g (ERP-OFDM) frames and gaps last, and the contention
//! window parameters of DCF. All times in nanoseconds.

use serde::Deserialize;

/// MAC header (24) plus FCS (4), bytes added to every data MSDU.
pub const MAC_OVERHEAD: usize = 28;
/// LLC/SNAP header an Ethernet payload gets on 802.11.
pub const LLC_SNAP: usize = 8;
/// Ethernet header the bridge strips (destination, source, EtherType).
pub const ETHERNET_HEADER: usize = 14;
/// ACK frame: frame control, duration, receiver address, FCS.
pub const ACK_LEN: usize = 14;
/// Preamble plus SIGNAL field.
pub const PREAMBLE_NS: u64 = 20_000;
/// ERP-OFDM signal extension after every frame (2.4 GHz only).
pub const SIGNAL_EXTENSION_NS: u64 = 6_000;
pub const SYMBOL_NS: u64 = 4_000;
/// SERVICE field plus tail bits around the PSDU.
pub const SERVICE_TAIL_BITS: u64 = 16 + 6;
pub const SIFS_NS: u64 = 10_000;
/// Rates every 802.11g station must support; control responses use the fastest not above the data rate.
pub const MANDATORY_MBPS: [u32; 3] = [6, 12, 24];

/// Slot length: short (9 µs, an ERP-only cell) or long (20 µs, 802.11b stations present).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Slot {
    #[default]
    Short,
    Long,
}

/// The timing and backoff parameters of one medium.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    pub slot_ns: u64,
    pub sifs_ns: u64,
    /// SIFS + 2 slots.
    pub difs_ns: u64,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Attempts a frame gets before it is discarded (dot11ShortRetryLimit: the
    /// frame goes when its retry counter reaches the limit, i.e. after 7 failures).
    pub retry_limit: u32,
}

impl Timing {
    /// 802.11g with this slot length.
    pub fn g(slot: Slot) -> Timing {
        let slot_ns = match slot {
            Slot::Short => 9_000,
            Slot::Long => 20_000,
        };
        Timing { slot_ns, sifs_ns: SIFS_NS, difs_ns: SIFS_NS + 2 * slot_ns, cw_min: 15, cw_max: 1023, retry_limit: 7 }
    }

    /// The contention window after one more failure: doubled, capped at CWmax.
    pub fn next_cw(&self, cw: u32) -> u32 {
        (2 * cw + 1).min(self.cw_max)
    }

    /// Airtime of a data frame carrying `msdu` bytes at `mbps`.
    pub fn data_ns(&self, msdu: usize, mbps: u32) -> u64 {
        ppdu_ns(msdu + MAC_OVERHEAD, mbps)
    }

    /// Airtime of the ACK answering a data frame sent at `data_mbps`.
    pub fn ack_ns(&self, data_mbps: u32) -> u64 {
        ppdu_ns(ACK_LEN, ack_mbps(data_mbps))
    }

    /// A successful exchange after the data frame: SIFS and the ACK.
    pub fn ack_exchange_ns(&self, data_mbps: u32) -> u64 {
        self.sifs_ns + self.ack_ns(data_mbps)
    }
}

/// Airtime of a PPDU carrying `mpdu` bytes at `mbps`: preamble and SIGNAL, whole
/// OFDM symbols for SERVICE + data + tail, signal extension.
pub fn ppdu_ns(mpdu: usize, mbps: u32) -> u64 {
    let bits = SERVICE_TAIL_BITS + 8 * mpdu as u64;
    let per_symbol = 4 * mbps as u64;
    PREAMBLE_NS + bits.div_ceil(per_symbol) * SYMBOL_NS + SIGNAL_EXTENSION_NS
}

/// The rate of the ACK: the fastest mandatory rate not above the data rate.
pub fn ack_mbps(data_mbps: u32) -> u32 {
    MANDATORY_MBPS.iter().rev().copied().find(|&m| m <= data_mbps).unwrap_or(MANDATORY_MBPS[0])
}

/// The MSDU an Ethernet frame of `len` bytes (no FCS) becomes on 802.11: its
/// header replaced by LLC/SNAP.
pub fn msdu_of_ethernet(len: usize) -> usize {
    len.saturating_sub(ETHERNET_HEADER) + LLC_SNAP
}

/// The MSDU of a UDP datagram with `payload` bytes over IPv4.
pub fn msdu_of_udp(payload: usize) -> usize {
    payload + 8 + 20 + LLC_SNAP
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_durations_follow_erp_ofdm() {
        let t = Timing::g(Slot::Short);
        // 1,024 B of UDP: 1,088 B MPDU, 8,726 bits in 41 symbols of 216 bits.
        assert_eq!(t.data_ns(msdu_of_udp(1024), 54), 20_000 + 41 * 4_000 + 6_000);
        assert_eq!(t.data_ns(msdu_of_udp(128), 54), 58_000);
        // ACK: 134 bits in 2 symbols of 96 at 24 Mbit/s.
        assert_eq!(t.ack_ns(54), 34_000);
        assert_eq!(ack_mbps(9), 6);
        assert_eq!(ack_mbps(18), 12);
        assert_eq!(t.difs_ns, 28_000);
        assert_eq!(Timing::g(Slot::Long).difs_ns, 50_000);
        assert_eq!(msdu_of_ethernet(1066), msdu_of_udp(1024));
    }

    #[test]
    fn contention_window_doubles_to_its_cap() {
        let t = Timing::g(Slot::Short);
        let mut cw = t.cw_min;
        let mut seen = vec![cw];
        for _ in 0..8 {
            cw = t.next_cw(cw);
            seen.push(cw);
        }
        assert_eq!(seen, vec![15, 31, 63, 127, 255, 511, 1023, 1023, 1023]);
    }
}
