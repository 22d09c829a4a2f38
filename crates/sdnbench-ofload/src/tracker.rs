//! Outstanding PACKET_INs of one switch and the matching of responses to
//! them. A ring indexed by sequence number holds the last `cap` requests, so
//! a lookup is one index, and a second answer to an already answered request
//! is recognised as a duplicate instead of being counted as unmatched.

/// State of one request slot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Empty,
    Outstanding,
    Answered,
    Expired,
}

#[derive(Clone, Copy)]
struct Slot {
    seq: u32,
    host: u32,
    sent_ns: u64,
    state: State,
}

/// How a response related to the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// First answer to an outstanding request, with its latency.
    Matched { latency_ns: u64 },
    /// Another answer to a request already answered (e.g. FLOW_MOD + PACKET_OUT).
    Duplicate,
    /// Answer to a request that had already timed out.
    Late,
    /// Ties to no request this switch sent recently.
    Unmatched,
}

/// Answered requests kept in the host scan behind the oldest outstanding one.
const RECENT_MARGIN: u32 = 64;

pub struct Tracker {
    slots: Vec<Slot>,
    mask: usize,
    outstanding: u32,
    /// Oldest sequence number that may still be outstanding.
    oldest: u32,
    next: u32,
    /// Requests recorded so far.
    sent_total: u64,
}

impl Tracker {
    /// A tracker remembering at least `2 * window` requests (at least 256).
    pub fn new(window: u32) -> Tracker {
        let cap = ((window as usize) * 2).max(256).next_power_of_two();
        let empty = Slot { seq: 0, host: 0, sent_ns: 0, state: State::Empty };
        Tracker { slots: vec![empty; cap], mask: cap - 1, outstanding: 0, oldest: 0, next: 0, sent_total: 0 }
    }

    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// Records request `seq` (must be the next sequence number) from `host`.
    pub fn sent(&mut self, seq: u32, host: u32, now_ns: u64) {
        let i = seq as usize & self.mask;
        if self.slots[i].state == State::Outstanding {
            // The ring wrapped over a request that is still open: it is lost.
            self.outstanding -= 1;
        }
        self.slots[i] = Slot { seq, host, sent_ns: now_ns, state: State::Outstanding };
        self.outstanding += 1;
        self.sent_total += 1;
        self.next = crate::packet::next_seq(seq);
    }

    /// Resolves a response that names request `seq` (buffer id or payload).
    pub fn answer_seq(&mut self, seq: u32, now_ns: u64) -> Outcome {
        let i = seq as usize & self.mask;
        if self.slots[i].seq != seq {
            return if self.sent_long_ago(seq) { Outcome::Late } else { Outcome::Unmatched };
        }
        self.resolve(i, now_ns)
    }

    /// True for a sequence number this switch sent so long ago that the ring
    /// has reused its slot: a slow controller's answer to a request that
    /// timed out, still late rather than unknown. (Sequence numbers only
    /// come from us; anything ahead of the next one, or a quarter of the
    /// sequence space behind, is not ours.)
    fn sent_long_ago(&self, seq: u32) -> bool {
        let behind = self.next.wrapping_sub(seq) & crate::packet::MAX_SEQ;
        behind > self.slots.len() as u32 && behind < (crate::packet::MAX_SEQ >> 2) && self.sent_total > behind as u64
    }

    /// Resolves a response that names only the source host (a FLOW_MOD
    /// matching on the MAC): the oldest outstanding request from that host.
    pub fn answer_host(&mut self, host: u32, now_ns: u64) -> Outcome {
        let mut seq = self.oldest;
        let mut answered = None;
        while seq != self.next {
            let i = seq as usize & self.mask;
            let s = self.slots[i];
            if s.seq == seq && s.host == host {
                match s.state {
                    State::Outstanding => return self.resolve(i, now_ns),
                    State::Answered | State::Expired => answered = Some(i),
                    State::Empty => {}
                }
            }
            seq = crate::packet::next_seq(seq);
        }
        match answered {
            Some(i) if self.slots[i].state == State::Expired => Outcome::Late,
            Some(_) => Outcome::Duplicate,
            None => Outcome::Unmatched,
        }
    }

    fn resolve(&mut self, i: usize, now_ns: u64) -> Outcome {
        match self.slots[i].state {
            State::Outstanding => {
                self.slots[i].state = State::Answered;
                self.outstanding -= 1;
                Outcome::Matched { latency_ns: now_ns.saturating_sub(self.slots[i].sent_ns) }
            }
            State::Answered => Outcome::Duplicate,
            State::Expired => Outcome::Late,
            State::Empty => Outcome::Unmatched,
        }
    }

    /// Marks requests older than `timeout_ns` as expired; returns how many.
    /// Also advances `oldest` past slots the ring will reuse.
    pub fn expire(&mut self, now_ns: u64, timeout_ns: u64) -> u32 {
        let mut expired = 0;
        let cap = self.slots.len() as u32;
        if self.next.wrapping_sub(self.oldest) & 0x7fff_ffff > cap {
            self.oldest = self.next.wrapping_sub(cap) & 0x7fff_ffff;
        }
        let mut seq = self.oldest;
        while seq != self.next {
            let i = seq as usize & self.mask;
            let s = &mut self.slots[i];
            if s.seq == seq && s.state == State::Outstanding {
                if now_ns.saturating_sub(s.sent_ns) < timeout_ns {
                    break;
                }
                s.state = State::Expired;
                self.outstanding -= 1;
                expired += 1;
            }
            seq = crate::packet::next_seq(seq);
        }
        // Keep a margin of recent requests in the host scan so that a second
        // answer (FLOW_MOD after PACKET_OUT) still counts as a duplicate.
        let back = (seq.wrapping_sub(self.oldest) & 0x7fff_ffff).min(RECENT_MARGIN);
        self.oldest = seq.wrapping_sub(back) & 0x7fff_ffff;
        expired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_answer_matches_then_duplicates() {
        let mut t = Tracker::new(8);
        t.sent(0, 5, 100);
        t.sent(1, 6, 200);
        assert_eq!(t.outstanding(), 2);
        assert_eq!(t.answer_seq(1, 1200), Outcome::Matched { latency_ns: 1000 });
        assert_eq!(t.answer_host(6, 1300), Outcome::Duplicate);
        assert_eq!(t.answer_host(5, 1300), Outcome::Matched { latency_ns: 1200 });
        assert_eq!(t.answer_seq(77, 1300), Outcome::Unmatched);
        assert_eq!(t.answer_seq(0, 1300), Outcome::Duplicate);
        assert_eq!(t.answer_host(9, 1300), Outcome::Unmatched);
        assert_eq!(t.outstanding(), 0);
    }

    #[test]
    fn old_requests_expire_and_late_answers_are_counted() {
        let mut t = Tracker::new(4);
        t.sent(0, 1, 0);
        t.sent(1, 2, 500);
        assert_eq!(t.expire(1000, 800), 1);
        assert_eq!(t.outstanding(), 1);
        assert_eq!(t.answer_seq(0, 1100), Outcome::Late);
        assert_eq!(t.answer_seq(1, 1100), Outcome::Matched { latency_ns: 600 });
    }

    #[test]
    fn wrapping_ring_drops_stale_requests() {
        let mut t = Tracker::new(1);
        for seq in 0..5000u32 {
            t.sent(seq, seq, seq as u64);
        }
        assert!(t.outstanding() <= 256);
        assert_eq!(t.answer_seq(10, 6000), Outcome::Late, "sent, but its slot was reused");
        assert_eq!(t.answer_seq(5000, 6000), Outcome::Unmatched, "never sent");
        assert_eq!(t.answer_seq(0x7000_0000, 6000), Outcome::Unmatched, "not a number of ours");
        assert!(matches!(t.answer_seq(4999, 6000), Outcome::Matched { .. }));
    }
}
