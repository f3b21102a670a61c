//! Many small FIFO queues of fixed capacity in one flat array.
//!
//! A router has a queue per (port, VC) for input and for output buffers; flow control bounds
//! each to `buffer / packet_size` packets. Keeping them in one array (instead of a heap
//! allocation per queue) puts a queue's bookkeeping and contents in the same few cache
//! lines.

/// `n` FIFO queues of `u32`, each holding at most `cap` items.
#[derive(Clone, Debug)]
pub(crate) struct FixedQueues {
    cap: usize,
    items: Vec<u32>,
    head: Vec<u16>,
    len: Vec<u16>,
}

impl FixedQueues {
    /// `n` empty queues of capacity `cap` (1..=65535).
    pub(crate) fn new(n: usize, cap: usize) -> Self {
        assert!((1..=u16::MAX as usize).contains(&cap), "queue capacity {cap} out of range");
        Self { cap, items: vec![0; n * cap], head: vec![0; n], len: vec![0; n] }
    }

    #[inline]
    pub(crate) fn len(&self, q: usize) -> usize {
        self.len[q] as usize
    }

    #[inline]
    pub(crate) fn is_empty(&self, q: usize) -> bool {
        self.len[q] == 0
    }

    #[inline]
    pub(crate) fn front(&self, q: usize) -> Option<u32> {
        (self.len[q] > 0).then(|| self.items[q * self.cap + self.head[q] as usize])
    }

    /// Appends `v`; the caller's flow control guarantees room (checked).
    #[inline]
    pub(crate) fn push_back(&mut self, q: usize, v: u32) {
        let len = self.len[q] as usize;
        assert!(len < self.cap, "queue {q} overflows its {} slots: flow control violated", self.cap);
        let at = (self.head[q] as usize + len) % self.cap;
        self.items[q * self.cap + at] = v;
        self.len[q] += 1;
    }

    #[inline]
    pub(crate) fn pop_front(&mut self, q: usize) -> Option<u32> {
        if self.len[q] == 0 {
            return None;
        }
        let v = self.items[q * self.cap + self.head[q] as usize];
        self.head[q] = ((self.head[q] as usize + 1) % self.cap) as u16;
        self.len[q] -= 1;
        Some(v)
    }

    /// Items in all queues.
    pub(crate) fn total_len(&self) -> usize {
        self.len.iter().map(|&l| l as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_are_independent_fifos_that_wrap() {
        let mut q = FixedQueues::new(3, 2);
        q.push_back(1, 10);
        q.push_back(1, 11);
        q.push_back(2, 20);
        assert_eq!(q.pop_front(1), Some(10));
        q.push_back(1, 12); // wraps around
        assert_eq!((q.len(1), q.front(1)), (2, Some(11)));
        assert_eq!(q.pop_front(1), Some(11));
        assert_eq!(q.pop_front(1), Some(12));
        assert_eq!(q.pop_front(1), None);
        assert!(q.is_empty(0));
        assert_eq!(q.total_len(), 1);
    }

    #[test]
    #[should_panic(expected = "flow control violated")]
    fn overflow_is_caught() {
        let mut q = FixedQueues::new(1, 1);
        q.push_back(0, 1);
        q.push_back(0, 2);
    }
}
