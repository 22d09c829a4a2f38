//! A timing wheel for frames waiting for their release time.
//!
//! `slots` buckets of `tick_ns` each cover the near future (4,096 × 8 µs ≈ 33 ms
//! by default); later entries wait in an overflow heap and move into the wheel
//! as it turns. Insertion is O(1), finding the next deadline scans an occupancy
//! bitmap, and each bucket is sorted once when it comes due, so entries leave
//! in (release time, insertion order): equal times keep FIFO order, as netem's
//! tfifo does. Deadlines are exact: the tick only groups entries.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

struct Entry<T> {
    at_ns: u64,
    seq: u64,
    item: T,
}

impl<T> Entry<T> {
    fn key(&self) -> (u64, u64) {
        (self.at_ns, self.seq)
    }
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key().cmp(&o.key())
    }
}

/// Items ordered by release time.
pub struct Wheel<T> {
    tick_ns: u64,
    slots: Vec<Vec<Entry<T>>>,
    /// One bit per slot: non-empty.
    occupied: Vec<u64>,
    /// Absolute tick of the cursor slot: every earlier tick is empty.
    cursor: u64,
    /// The cursor slot is sorted descending (pop from the end).
    cursor_sorted: bool,
    overflow: BinaryHeap<Reverse<Entry<T>>>,
    len: usize,
    seq: u64,
}

impl<T> Wheel<T> {
    /// A wheel of `slots` (a power of two) buckets of `tick_ns`, starting at time `now_ns`.
    pub fn new(slots: usize, tick_ns: u64, now_ns: u64) -> Wheel<T> {
        assert!(slots.is_power_of_two() && slots >= 64 && tick_ns > 0);
        Wheel {
            tick_ns,
            slots: (0..slots).map(|_| Vec::new()).collect(),
            occupied: vec![0; slots / 64],
            cursor: now_ns / tick_ns,
            cursor_sorted: false,
            overflow: BinaryHeap::new(),
            len: 0,
            seq: 0,
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn index(&self, tick: u64) -> usize {
        (tick as usize) & (self.slots.len() - 1)
    }

    fn place(&mut self, e: Entry<T>) {
        let tick = (e.at_ns / self.tick_ns).max(self.cursor);
        if tick - self.cursor >= self.slots.len() as u64 {
            self.overflow.push(Reverse(e));
            return;
        }
        let i = self.index(tick);
        if tick == self.cursor {
            self.cursor_sorted = false;
        }
        self.slots[i].push(e);
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    /// Hold `item` until `at_ns` (a time already past leaves at the next pop).
    pub fn insert(&mut self, at_ns: u64, item: T) {
        self.seq += 1;
        self.len += 1;
        let e = Entry { at_ns, seq: self.seq, item };
        self.place(e);
    }

    /// Ticks from the cursor to the first non-empty slot, if any.
    fn first_occupied(&self) -> Option<u64> {
        let n = self.slots.len();
        let start = self.index(self.cursor);
        let words = self.occupied.len();
        for k in 0..=words {
            let w = (start / 64 + k) % words;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= !0u64 << (start % 64);
            } else if k == words {
                bits &= !(!0u64 << (start % 64));
            }
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                return Some(((i + n - start) % n) as u64);
            }
        }
        None
    }

    /// The earliest release time held, if any.
    pub fn next_deadline(&self) -> Option<u64> {
        let wheel = self.first_occupied().map(|d| {
            let slot = &self.slots[self.index(self.cursor + d)];
            slot.iter().map(|e| e.at_ns).min().unwrap_or(u64::MAX)
        });
        let over = self.overflow.peek().map(|Reverse(e)| e.at_ns);
        match (wheel, over) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Move the cursor to `tick`, pulling overflow entries that now fit into the wheel.
    fn advance(&mut self, tick: u64) {
        if tick > self.cursor {
            self.cursor = tick;
            self.cursor_sorted = false;
        }
        let horizon = self.cursor + self.slots.len() as u64;
        while self.overflow.peek().is_some_and(|Reverse(e)| e.at_ns / self.tick_ns < horizon) {
            let Reverse(e) = self.overflow.pop().unwrap();
            self.place(e);
        }
    }

    /// Remove and pass to `f`, in release order, every item due at `now_ns`; returns how many.
    pub fn pop_due(&mut self, now_ns: u64, mut f: impl FnMut(u64, T)) -> usize {
        let mut popped = 0;
        let now_tick = now_ns / self.tick_ns;
        loop {
            self.advance(self.cursor);
            let Some(d) = self.first_occupied() else {
                // Empty wheel: jump to the overflow's first tick (or to now).
                match self.overflow.peek() {
                    Some(Reverse(e)) if e.at_ns <= now_ns => {
                        let t = e.at_ns / self.tick_ns;
                        self.advance(t);
                        continue;
                    }
                    _ => {
                        self.advance(now_tick);
                        return popped;
                    }
                }
            };
            if self.cursor + d > now_tick {
                self.advance(now_tick);
                return popped;
            }
            if d > 0 {
                self.advance(self.cursor + d);
                continue;
            }
            let i = self.index(self.cursor);
            if !self.cursor_sorted {
                self.slots[i].sort_unstable_by_key(|e| Reverse(e.key()));
                self.cursor_sorted = true;
            }
            let slot = &mut self.slots[i];
            while slot.last().is_some_and(|e| e.at_ns <= now_ns) {
                let e = slot.pop().unwrap();
                self.len -= 1;
                popped += 1;
                f(e.at_ns, e.item);
            }
            if slot.is_empty() {
                self.occupied[i / 64] &= !(1 << (i % 64));
            }
            if !self.slots[i].is_empty() || self.cursor == now_tick {
                // Entries left in this slot are later than now, within this tick.
                return popped;
            }
            self.advance(self.cursor + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn releases_in_time_then_insertion_order() {
        let mut w = Wheel::new(64, 10, 0);
        for (at, v) in [(50, 'a'), (20, 'b'), (50, 'c'), (5_000, 'd'), (20, 'e')] {
            w.insert(at, v);
        }
        assert_eq!(w.next_deadline(), Some(20));
        let mut got = Vec::new();
        w.pop_due(60, |_, v| got.push(v));
        assert_eq!(got, ['b', 'e', 'a', 'c']);
        assert_eq!(w.next_deadline(), Some(5_000));
        w.pop_due(4_999, |_, v| got.push(v));
        assert_eq!(got.len(), 4);
        w.pop_due(5_000, |_, v| got.push(v));
        assert_eq!(got.last(), Some(&'d'));
        assert!(w.is_empty() && w.next_deadline().is_none());
    }

    #[test]
    fn overdue_entries_leave_at_once() {
        let mut w = Wheel::new(64, 10, 1_000);
        w.pop_due(2_000, |_, _: u8| {});
        w.insert(5, 1u8);
        let mut n = 0;
        w.pop_due(2_000, |_, _| n += 1);
        assert_eq!(n, 1);
    }

    proptest! {
        /// Against a sorted list: same items, same order, never early, never left behind.
        #[test]
        fn behaves_like_a_sorted_queue(ops in prop::collection::vec((0u64..3_000, 0u64..200_000), 1..400),
                                       tick in 1u64..200) {
            let mut w = Wheel::new(64, tick, 0);
            let mut model: Vec<(u64, u64, usize)> = Vec::new();
            let mut now = 0u64;
            for (k, (step, delay)) in ops.iter().enumerate() {
                now += step;
                let mut got = Vec::new();
                w.pop_due(now, |at, v| got.push((at, v)));
                model.sort();
                let due: Vec<(u64, usize)> = model.iter().filter(|e| e.0 <= now).map(|e| (e.0, e.2)).collect();
                model.retain(|e| e.0 > now);
                prop_assert_eq!(got, due);
                prop_assert_eq!(w.next_deadline(), model.iter().map(|e| e.0).min());
                let at = now + delay;
                w.insert(at, k);
                model.push((at, k as u64, k));
            }
            prop_assert_eq!(w.len(), model.len());
        }
    }
}
