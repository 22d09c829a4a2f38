//! Where a flow's packets come from: a schedule with a size distribution, or a
//! video stream. Either way the sender sees one sequence of slots.

use crate::schedule::{Rng, Schedule, SizeDist};
use crate::video::{VideoPacket, VideoSource};

/// One packet the sender owes: intended offset from the flow start, payload size,
/// and (for video) frame number, fragment index and fragment count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    pub offset_ns: u64,
    pub len: usize,
    pub video: Option<(u32, u16, u16)>,
}

/// The packet source of one flow.
pub enum Source {
    Probes { sched: Schedule, sizes: SizeDist, rng: Rng },
    Video(VideoSource),
}

impl Source {
    /// The next slot (sources are endless; the sender decides where the run ends).
    pub fn next_slot(&mut self) -> Slot {
        match self {
            Source::Probes { sched, sizes, rng } => Slot {
                offset_ns: sched.next().unwrap_or(u64::MAX),
                len: sizes.draw(rng),
                video: None,
            },
            Source::Video(v) => {
                let p: VideoPacket = v.next().expect("video source is endless");
                Slot { offset_ns: p.offset_ns, len: p.len, video: Some((p.frame, p.frag, p.frags)) }
            }
        }
    }
}
