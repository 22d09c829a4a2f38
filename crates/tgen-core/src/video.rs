//! A frame-based VBR video stream and the receiver's playout-buffer model.
//!
//! Sender side: frames at a fixed frame rate, sized around bitrate / fps with a GOP
//! structure (one I-frame, `i_ratio` times a P-frame, every `gop` frames) and
//! log-normal noise; each frame leaves as a burst of packets at its frame time.
//! Receiver side: playback starts once `buffer` worth of frames has fully arrived,
//! then follows the sender's frame clock; a frame still incomplete when due stalls
//! playback until it completes (a stall), a frame that never completes is skipped.

use std::collections::BTreeMap;

use crate::schedule::Rng;

/// Bytes 32..40 of a video probe: frame number (u32), fragment index and count (u16 each).
pub const VIDEO_FIELDS_LEN: usize = 8;

/// Parameters of the encoded stream.
#[derive(Clone, Debug)]
pub struct VideoParams {
    /// Encoded video bit rate (UDP payload), bit/s.
    pub bitrate_bps: f64,
    pub fps: f64,
    /// Frames per group of pictures (1 = every frame is an I-frame).
    pub gop: u32,
    /// I-frame size relative to a P-frame.
    pub i_ratio: f64,
    /// Largest UDP payload per packet (bytes, probe header included).
    pub max_payload: usize,
    /// Standard deviation of the log-normal frame-size noise (0 = constant sizes).
    pub noise: f64,
}

/// One packet of the stream: when to send it, how big, and where it sits in its frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VideoPacket {
    pub offset_ns: u64,
    pub len: usize,
    pub frame: u32,
    pub frag: u16,
    pub frags: u16,
}

/// Endless packet source for one video flow.
pub struct VideoSource {
    p: VideoParams,
    rng: Rng,
    frame: u32,
    pending: Vec<VideoPacket>,
    p_bytes: f64,
}

impl VideoSource {
    pub fn new(p: VideoParams, seed: u64) -> VideoSource {
        // Mean frame = bitrate / 8 / fps; a GOP holds one I (i_ratio P) and gop-1 P-frames.
        let mean = p.bitrate_bps / 8.0 / p.fps;
        let gop = p.gop.max(1) as f64;
        let p_bytes = mean * gop / (p.i_ratio + gop - 1.0);
        VideoSource { p, rng: Rng::new(seed), frame: 0, pending: Vec::new(), p_bytes }
    }

    fn frame_bytes(&mut self) -> usize {
        let base = if self.frame.is_multiple_of(self.p.gop.max(1)) { self.p_bytes * self.p.i_ratio } else { self.p_bytes };
        // Box-Muller normal draw, mean-corrected so the log-normal keeps the mean size.
        let (u1, u2) = (1.0 - self.rng.unit(), self.rng.unit());
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        let s = self.p.noise;
        (base * (s * z - s * s / 2.0).exp()).round().max(1.0) as usize
    }

    fn next_frame(&mut self) {
        let bytes = self.frame_bytes();
        let chunk = self.p.max_payload;
        let frags = bytes.div_ceil(chunk).clamp(1, u16::MAX as usize);
        let offset = (self.frame as f64 * 1e9 / self.p.fps).round() as u64;
        let min = crate::wire::HEADER_LEN + VIDEO_FIELDS_LEN;
        for k in 0..frags {
            let len = if k + 1 == frags { bytes - chunk * (frags - 1) } else { chunk };
            self.pending.push(VideoPacket { offset_ns: offset, len: len.max(min), frame: self.frame,
                                            frag: k as u16, frags: frags as u16 });
        }
        self.pending.reverse();
        self.frame += 1;
    }
}

impl Iterator for VideoSource {
    type Item = VideoPacket;

    fn next(&mut self) -> Option<VideoPacket> {
        if self.pending.is_empty() {
            self.next_frame();
        }
        self.pending.pop()
    }
}

/// Writes the video fields after the probe header.
pub fn encode_fields(buf: &mut [u8], frame: u32, frag: u16, frags: u16) {
    buf[32..36].copy_from_slice(&frame.to_be_bytes());
    buf[36..38].copy_from_slice(&frag.to_be_bytes());
    buf[38..40].copy_from_slice(&frags.to_be_bytes());
}

/// Reads the video fields; None when the datagram is too short or inconsistent.
pub fn decode_fields(buf: &[u8]) -> Option<(u32, u16, u16)> {
    if buf.len() < 40 {
        return None;
    }
    let frame = u32::from_be_bytes([buf[32], buf[33], buf[34], buf[35]]);
    let frag = u16::from_be_bytes([buf[36], buf[37]]);
    let frags = u16::from_be_bytes([buf[38], buf[39]]);
    (frags > 0 && frag < frags).then_some((frame, frag, frags))
}

#[derive(Clone, Debug, Default)]
struct FrameState {
    got: u16,
    frags: u16,
    intended_ns: u64,
    complete_at: Option<u64>,
}

/// What a viewer would have experienced.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayoutReport {
    pub frames_expected: u64,
    pub frames_complete: u64,
    pub frames_skipped: u64,
    /// From the first frame's intended send time to the start of playback.
    pub startup_delay_ns: Option<u64>,
    pub stalls: u64,
    pub stall_total_ns: u64,
}

/// Receiver-side frame reassembly and playout simulation for one flow.
#[derive(Clone, Debug, Default)]
pub struct Playout {
    frames: BTreeMap<u32, FrameState>,
    /// Frames beyond this number are refused (bounds memory on hostile input).
    pub max_frames: u32,
}

impl Playout {
    pub fn new(max_frames: u32) -> Playout {
        Playout { frames: BTreeMap::new(), max_frames }
    }

    /// Records one distinct (not duplicate) fragment.
    pub fn observe(&mut self, frame: u32, frags: u16, intended_ns: u64, arrival_ns: u64) {
        if frame >= self.max_frames {
            return;
        }
        let f = self.frames.entry(frame).or_insert(FrameState { frags, intended_ns, ..Default::default() });
        f.got = f.got.saturating_add(1);
        if f.got >= f.frags && f.complete_at.is_none() {
            f.complete_at = Some(arrival_ns);
        }
    }

    /// Simulates playback with `buffer_ns` of content buffered before it starts.
    pub fn report(&self, buffer_ns: u64) -> PlayoutReport {
        let expected = self.frames.keys().next_back().map_or(0, |&k| k as u64 + 1);
        let complete: Vec<(u32, u64, u64)> = self.frames.iter()
            .filter_map(|(&k, f)| f.complete_at.map(|c| (k, f.intended_ns, c))).collect();
        let mut r = PlayoutReport { frames_expected: expected, frames_complete: complete.len() as u64,
                                    frames_skipped: expected - complete.len() as u64, startup_delay_ns: None,
                                    stalls: 0, stall_total_ns: 0 };
        let Some(&(_, t0, _)) = complete.first() else { return r };
        // Playback starts when every complete frame within the first buffer_ns of content has arrived.
        let start = complete.iter().take_while(|(_, t, _)| t.saturating_sub(t0) < buffer_ns.max(1)).map(|c| c.2).max().unwrap_or(0);
        r.startup_delay_ns = Some(start.saturating_sub(t0));
        let mut shift = 0u64;
        for &(_, t, arrived) in &complete {
            let due = start.saturating_add(t.saturating_sub(t0)).saturating_add(shift);
            if arrived > due {
                r.stalls += 1;
                r.stall_total_ns = r.stall_total_ns.saturating_add(arrived - due);
                shift = shift.saturating_add(arrived - due);
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> VideoParams {
        VideoParams { bitrate_bps: 4e6, fps: 25.0, gop: 12, i_ratio: 4.0, max_payload: 1200, noise: 0.0 }
    }

    #[test]
    fn mean_bitrate_and_gop_structure() {
        let pkts: Vec<VideoPacket> = VideoSource::new(params(), 1).take_while(|p| p.frame < 250).collect();
        let bytes: usize = pkts.iter().map(|p| p.len).sum();
        let bps = bytes as f64 * 8.0 / 10.0;
        assert!((bps - 4e6).abs() / 4e6 < 0.01, "{bps}");
        let frame_bytes = |f: u32| pkts.iter().filter(|p| p.frame == f).map(|p| p.len).sum::<usize>() as f64;
        assert!((frame_bytes(0) / frame_bytes(1) - 4.0).abs() < 0.01);
        assert_eq!(pkts.iter().find(|p| p.frame == 25).unwrap().offset_ns, 1_000_000_000);
    }

    #[test]
    fn playout_counts_startup_and_stalls() {
        let mut p = Playout::new(1000);
        let ms = 1_000_000u64;
        // 10 frames at 40 ms, one fragment each, 5 ms network delay; frame 6 arrives 100 ms late;
        // frame 8 never arrives.
        for k in 0..10u32 {
            let t = k as u64 * 40 * ms;
            let late = if k == 6 { 100 * ms } else { 0 };
            if k != 8 {
                p.observe(k, 1, t, t + 5 * ms + late);
            }
        }
        let r = p.report(80 * ms);
        // Buffer = frames 0 and 1 (content < 80 ms): starts when frame 1 arrived, 45 ms after frame 0's send time.
        assert_eq!(r.startup_delay_ns, Some(45 * ms));
        // Frame 6 due at 45 + 240 = 285 ms, arrives at 345 ms: one 60 ms stall.
        assert_eq!((r.stalls, r.stall_total_ns), (1, 60 * ms));
        assert_eq!((r.frames_expected, r.frames_complete, r.frames_skipped), (10, 9, 1));
    }

    #[test]
    fn fields_roundtrip_and_reject_nonsense() {
        let mut b = [0u8; 40];
        encode_fields(&mut b, 7, 2, 3);
        assert_eq!(decode_fields(&b), Some((7, 2, 3)));
        encode_fields(&mut b, 7, 3, 3);
        assert_eq!(decode_fields(&b), None);
        assert_eq!(decode_fields(&b[..39]), None);
    }

    proptest::proptest! {
        /// Arbitrary (hostile) fragments never panic the playout model and keep its counts consistent.
        #[test]
        fn playout_survives_any_input(obs in proptest::collection::vec(
            (0u32..2000, 1u16..5, proptest::prelude::any::<u64>(), proptest::prelude::any::<u64>()), 0..200)) {
            let mut p = Playout::new(1000);
            for (frame, frags, t, a) in obs {
                p.observe(frame, frags, t, a);
            }
            let r = p.report(1_000_000_000);
            proptest::prop_assert_eq!(r.frames_complete + r.frames_skipped, r.frames_expected);
        }
    }
}
