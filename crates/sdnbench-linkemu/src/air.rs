//! The shared wireless media of a run (cells of model `dcf`): frames of the
//! link directions of a cell's stations go through the cell's DCF medium
//! (linkemu-core's `wifi::dcf`) instead of a netem stage. A delivered frame
//! leaves at the end of its airtime; one that runs out of retries is lost. No
//! sockets here: the engine feeds frames in and releases what comes out.

use linkemu_core::wifi::airtime::msdu_of_ethernet;
use linkemu_core::wifi::cell::{End, Model};
use linkemu_core::wifi::dcf::Counters;
use linkemu_core::wifi::{Dir, Medium, Outcome};

use crate::spec::Spec;

/// Where one link direction meets a medium.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AirDir {
    pub medium: usize,
    pub station: usize,
    pub dir: Dir,
}

/// A link direction's view of its medium for the reports.
#[derive(Clone, Debug)]
pub struct AirLink {
    pub at: AirDir,
    pub medium: String,
    /// The medium's counters for this direction when last looked at.
    pub counters: Counters,
    /// Counters at the start of each report window.
    pub base: [Counters; 3],
    /// Frames in the medium's queue or on their way out.
    pub held: u64,
}

struct Cell<T> {
    name: String,
    medium: Medium<T>,
    /// Direction index of each station's [up, down].
    dirs: Vec<[usize; 2]>,
}

/// Every shared medium of the run.
pub struct Air<T> {
    cells: Vec<Cell<T>>,
}

/// Index of a link direction, as the engine numbers them: 2 i for a>b, 2 i + 1 for b>a.
pub fn direction_index(link: usize, from_b: bool) -> usize {
    2 * link + from_b as usize
}

impl<T> Air<T> {
    /// The media of `spec`'s `dcf` cells at `now_ns`, and where each link direction meets one.
    pub fn new(spec: &Spec, seed: u64, now_ns: u64) -> Result<(Air<T>, Vec<Option<AirLink>>), String> {
        let mut at = vec![None; 2 * spec.links.len()];
        let mut cells = Vec::new();
        for c in spec.media.iter().filter(|c| c.model == Model::Dcf) {
            let m = cells.len();
            // Distinct streams per medium, reproducible from one run seed.
            let fallback = seed ^ (0xA1 + m as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let medium = c.medium(fallback, now_ns).map_err(|e| format!("medium {}: {e}", c.name))?;
            let mut dirs = Vec::new();
            for (station, s) in c.stations.iter().enumerate() {
                let link = spec.link_index(&s.link).ok_or_else(|| format!("medium {}: no link {}", c.name, s.link))?;
                let up = direction_index(link, s.station_end == End::B);
                let down = direction_index(link, s.station_end == End::A);
                for (i, dir) in [(up, Dir::Up), (down, Dir::Down)] {
                    at[i] = Some(AirLink {
                        at: AirDir { medium: m, station, dir }, medium: c.name.clone(),
                        counters: Counters::default(), base: [Counters::default(); 3], held: 0,
                    });
                }
                dirs.push([up, down]);
            }
            cells.push(Cell { name: c.name.clone(), medium, dirs });
        }
        Ok((Air { cells }, at))
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    pub fn name(&self, medium: usize) -> &str {
        &self.cells[medium].name
    }

    /// Offers an Ethernet frame of `len` bytes (no FCS) at `now_ns`; a full queue gives the item back.
    pub fn offer(&mut self, at: AirDir, len: usize, item: T, now_ns: u64) -> Result<(), T> {
        self.cells[at.medium].medium.enqueue(at.station, at.dir, msdu_of_ethernet(len), item, now_ns)
    }

    /// Restarts every medium's motion clock at `now_ns` (a mark): moving stations start again.
    pub fn restart_motion(&mut self, now_ns: u64) {
        for c in &mut self.cells {
            c.medium.restart_motion(now_ns);
        }
    }

    /// When the next attempt on any medium starts.
    pub fn next_deadline(&self) -> Option<u64> {
        self.cells.iter().filter_map(|c| c.medium.next_event_ns()).min()
    }

    /// Runs every medium to `now_ns`; `f(direction index, outcome)` for each frame decided.
    pub fn advance(&mut self, now_ns: u64, mut f: impl FnMut(usize, Outcome<T>)) {
        for c in &mut self.cells {
            let dirs = &c.dirs;
            for o in c.medium.advance(now_ns) {
                let d = dirs[o.station][(o.dir == Dir::Down) as usize];
                f(d, o);
            }
        }
    }

    /// The medium's counters of one direction now.
    pub fn counters(&self, at: AirDir) -> Counters {
        *self.cells[at.medium].medium.counters(at.station, at.dir)
    }
}

#[cfg(test)]
mod tests;
