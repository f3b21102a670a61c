//! The per-partition pending-event set: a timing wheel with an overflow heap.
//!
//! Link latencies and router delays are a few cycles, so almost every event lands within
//! a short horizon of the current time. A wheel of one bucket per cycle makes insertion
//! O(1); a bucket is sorted once when its cycle is processed, which also gives the
//! deterministic total order. Events beyond the horizon (e.g. the next packet of a
//! lightly loaded endpoint) wait in a binary heap and move into the wheel as time advances.

use crate::Time;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A scheduled event: a message for one LP at one time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Event<M> {
    /// When it happens.
    pub time: Time,
    /// The receiving LP, as an index into its partition's LP list.
    pub lp: u32,
    /// Tie-breaker among events of the same LP at the same time (see the crate docs).
    pub tie: u64,
    /// The payload.
    pub msg: M,
}

struct Far<M>(Event<M>);
impl<M> PartialEq for Far<M> {
    fn eq(&self, other: &Self) -> bool {
        self.0.time == other.0.time
    }
}
impl<M> Eq for Far<M> {}
impl<M> PartialOrd for Far<M> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<M> Ord for Far<M> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.time.cmp(&other.0.time)
    }
}

/// Cycles ahead for which a bucket may take a pooled (large) vector.
const NEAR_CYCLES: Time = 16;
const WHEEL_BITS: u32 = 10;
const WHEEL_SIZE: usize = 1 << WHEEL_BITS;
const WORDS: usize = WHEEL_SIZE / 64;

pub(crate) struct EventQueue<M> {
    buckets: Vec<Vec<Event<M>>>,
    /// One bit per non-empty bucket, to find the next event time quickly.
    occupied: [u64; WORDS],
    /// Every event in the wheel has a time in `[now, now + WHEEL_SIZE)`.
    now: Time,
    in_wheel: usize,
    far: BinaryHeap<Reverse<Far<M>>>,
    /// Emptied bucket vectors, reused so that only the buckets in use hold memory and the
    /// memory they hold stays warm in cache.
    pool: Vec<Vec<Event<M>>>,
    /// Scratch for sorting a batch: `(lp, tie, index)` packed in 128 bits.
    keys: Vec<u128>,
    /// Scratch for the counting sort by LP: one counter per LP, and the permutation.
    lp_counts: Vec<u32>,
    order: Vec<u32>,
    num_lps: usize,
}

impl<M> EventQueue<M> {
    /// A queue for a partition of `num_lps` LPs (events name LPs `0..num_lps`).
    pub(crate) fn new(num_lps: usize) -> Self {
        Self {
            buckets: (0..WHEEL_SIZE).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            now: 0,
            in_wheel: 0,
            far: BinaryHeap::new(),
            pool: Vec::new(),
            keys: Vec::new(),
            lp_counts: vec![0; num_lps + 1],
            order: Vec::new(),
            num_lps,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.in_wheel + self.far.len()
    }

    pub(crate) fn push(&mut self, ev: Event<M>) {
        debug_assert!(ev.time >= self.now, "event at {} scheduled in the past (now {})", ev.time, self.now);
        if ev.time - self.now < WHEEL_SIZE as Time {
            let slot = (ev.time as usize) & (WHEEL_SIZE - 1);
            let bucket = &mut self.buckets[slot];
            // Pooled vectors are large (a busy cycle's worth of events): they serve the
            // next few cycles only. Farther buckets (e.g. endpoints' next packet) start
            // small and grow, so sparse future cycles do not pin big allocations.
            if bucket.capacity() == 0 && ev.time - self.now < NEAR_CYCLES {
                if let Some(v) = self.pool.pop() {
                    *bucket = v;
                }
            }
            bucket.push(ev);
            self.occupied[slot / 64] |= 1 << (slot % 64);
            self.in_wheel += 1;
        } else {
            self.far.push(Reverse(Far(ev)));
        }
    }

    /// Time of the earliest pending event, if any.
    pub(crate) fn next_time(&self) -> Option<Time> {
        if self.in_wheel > 0 {
            let start = (self.now as usize) & (WHEEL_SIZE - 1);
            // Scan the occupancy bits from `start`, wrapping once.
            for step in 0..=WORDS {
                let word_index = (start / 64 + step) % WORDS;
                let mut word = self.occupied[word_index];
                if step == 0 {
                    word &= !0u64 << (start % 64);
                } else if step == WORDS {
                    word &= (1u64 << (start % 64)).wrapping_sub(1);
                }
                if word != 0 {
                    let slot = word_index * 64 + word.trailing_zeros() as usize;
                    let offset = (slot + WHEEL_SIZE - start) % WHEEL_SIZE;
                    return Some(self.now + offset as Time);
                }
            }
            unreachable!("in_wheel > 0 but no occupied bucket");
        }
        self.far.peek().map(|Reverse(Far(ev))| ev.time)
    }

    /// Moves the wheel forward to `time`, pulling far events into its horizon.
    fn advance_to(&mut self, time: Time) {
        debug_assert!(time >= self.now);
        self.now = time;
        while let Some(Reverse(Far(ev))) = self.far.peek() {
            if ev.time - self.now >= WHEEL_SIZE as Time {
                break;
            }
            let Reverse(Far(ev)) = self.far.pop().expect("peeked");
            self.push(ev);
        }
    }

    /// Takes the events of cycles `from..to` (at most `WHEEL_SIZE` cycles, `from` not
    /// before the earliest pending event): one vector per cycle, each in its deterministic
    /// order (by LP, then tie). Give the vectors back with [`recycle`](Self::recycle).
    pub(crate) fn take_span(&mut self, from: Time, to: Time) -> Vec<Vec<Event<M>>> {
        debug_assert!(to > from && to - from <= WHEEL_SIZE as Time);
        if from != self.now {
            self.advance_to(from);
        }
        (from..to)
            .map(|time| {
                let slot = (time as usize) & (WHEEL_SIZE - 1);
                let mut bucket = std::mem::take(&mut self.buckets[slot]);
                self.occupied[slot / 64] &= !(1 << (slot % 64));
                self.in_wheel -= bucket.len();
                self.sort(&mut bucket);
                bucket
            })
            .collect()
    }

    /// Takes the events of cycle `time` in their deterministic order (tests).
    #[cfg(test)]
    pub(crate) fn take_batch(&mut self, time: Time) -> Vec<Event<M>> {
        self.take_span(time, time + 1).pop().expect("one cycle")
    }

    /// Sorts by `(lp, tie)`. Events are large, so the sort computes a permutation and the
    /// events then move once, following its cycles. A busy cycle has many events per LP:
    /// a counting sort by LP followed by tiny per-LP sorts by tie is linear. A sparse one
    /// (few events among many LPs) sorts packed 128-bit keys instead.
    fn sort(&mut self, batch: &mut [Event<M>]) {
        let n = batch.len();
        if n < 2 {
            return;
        }
        self.order.clear();
        if self.num_lps <= 4 * n {
            let counts = &mut self.lp_counts;
            counts.iter_mut().for_each(|c| *c = 0);
            for e in batch.iter() {
                counts[e.lp as usize + 1] += 1;
            }
            for lp in 0..self.num_lps {
                counts[lp + 1] += counts[lp];
            }
            self.order.resize(n, 0);
            for (i, e) in batch.iter().enumerate() {
                let at = &mut counts[e.lp as usize];
                self.order[*at as usize] = i as u32;
                *at += 1;
            }
            // `counts[lp]` is now the end of LP `lp`'s run; sort each run by tie.
            let mut start = 0;
            for &end in &counts[..self.num_lps] {
                let end = end as usize;
                if end - start > 1 {
                    self.order[start..end].sort_unstable_by_key(|&i| batch[i as usize].tie);
                }
                start = end;
            }
        } else {
            self.keys.clear();
            self.keys.extend(
                batch
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (e.lp as u128) << 96 | (e.tie as u128) << 32 | i as u128),
            );
            self.keys.sort_unstable();
            self.order.extend(self.keys.iter().map(|&k| k as u32));
        }
        // Slot j takes the event at `order[j]`; visited slots are marked `order[j] = j`.
        let perm = &mut self.order;
        for start in 0..n {
            let mut j = start;
            while perm[j] as usize != start {
                let k = perm[j] as usize;
                if k == j {
                    break;
                }
                batch.swap(j, k);
                perm[j] = j as u32;
                j = k;
            }
            perm[j] = j as u32;
        }
    }

    pub(crate) fn recycle(&mut self, mut batch: Vec<Event<M>>) {
        // Keep a handful: enough for the near buckets, not one per past cycle.
        if batch.capacity() > 0 && self.pool.len() < NEAR_CYCLES as usize {
            batch.clear();
            self.pool.push(batch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(time: Time, lp: u32, tie: u64) -> Event<()> {
        Event { time, lp, tie, msg: () }
    }

    #[test]
    fn next_time_finds_near_far_and_wrapped_events() {
        let mut q = EventQueue::new(100);
        assert_eq!(q.next_time(), None);
        q.push(ev(5000, 0, 0));
        assert_eq!(q.next_time(), Some(5000));
        q.push(ev(3, 0, 0));
        assert_eq!(q.next_time(), Some(3));
        let b = q.take_batch(3);
        assert_eq!(b.len(), 1);
        q.recycle(b);
        // Wheel now starts at 3; an event at 1030 wraps to slot 6.
        q.push(ev(1020, 1, 0));
        assert_eq!(q.next_time(), Some(1020));
        let b = q.take_batch(1020);
        assert_eq!(b.len(), 1);
        q.recycle(b);
        assert_eq!(q.next_time(), Some(5000));
        let b = q.take_batch(5000);
        assert_eq!(b.len(), 1);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn large_shuffled_batches_come_out_sorted_with_payloads_intact() {
        let mut q = EventQueue::new(100);
        let mut x = 12345u64;
        let mut expected = Vec::new();
        for i in 0..5000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (lp, tie) = ((x >> 40) as u32 % 97, (x >> 8) % 1000 * 10_000 + i);
            q.push(Event { time: 42, lp, tie, msg: (lp, tie) });
            expected.push((lp, tie));
        }
        expected.sort_unstable();
        let b = q.take_batch(42);
        let got: Vec<_> = b.iter().map(|e| e.msg).collect();
        assert_eq!(got, expected);
        assert!(b.iter().all(|e| (e.lp, e.tie) == e.msg));
    }

    #[test]
    fn sparse_batches_use_the_key_sort_and_come_out_sorted() {
        let mut q = EventQueue::new(1_000_000);
        for (lp, tie) in [(999_999, 1), (5, 9), (999_999, 0), (5, 3), (70_000, 2)] {
            q.push(ev(7, lp, tie));
        }
        let b = q.take_batch(7);
        let keys: Vec<_> = b.iter().map(|e| (e.lp, e.tie)).collect();
        assert_eq!(keys, vec![(5, 3), (5, 9), (70_000, 2), (999_999, 0), (999_999, 1)]);
    }

    #[test]
    fn batch_is_sorted_by_lp_then_tie() {
        let mut q = EventQueue::new(100);
        for (lp, tie) in [(2, 1), (1, 9), (2, 0), (1, 3)] {
            q.push(ev(7, lp, tie));
        }
        let b = q.take_batch(7);
        let keys: Vec<_> = b.iter().map(|e| (e.lp, e.tie)).collect();
        assert_eq!(keys, vec![(1, 3), (1, 9), (2, 0), (2, 1)]);
    }
}
