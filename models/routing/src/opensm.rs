//! What OpenSM's routing engines share that decides their ties: the 4-ary min-heap of its
//! complib (`cl_heap`), which DFSSSP's and Nue's Dijkstras pop equal keys from in an order
//! of its own. A plain binary heap, or a heap that breaks ties by switch id, routes
//! hundreds of OpenSM's entries otherwise on a 4x4x4 torus; reproducing OpenSM's tables
//! entry for entry needs this one (scripts/validation/opensm_per_lid.py). The order in which
//! OpenSM holds the switches is [`topology::ib::IbView::opensm_switch_order`].

/// A min-heap of `items` (numbered `0..items`) with four children per node and complib's
/// rules for equal keys: sifting up stops at an equal parent, sifting down takes the *last*
/// of the smallest children and stops at an equal one.
pub(crate) struct QuaternaryHeap {
    /// `(key, item)` in heap order.
    slots: Vec<(u64, u32)>,
    /// Each item's slot (`u32::MAX`: not in the heap).
    position: Vec<u32>,
}

impl QuaternaryHeap {
    /// An empty heap for items `0..items`.
    pub(crate) fn new(items: usize) -> Self {
        QuaternaryHeap { slots: Vec::with_capacity(items), position: vec![u32::MAX; items] }
    }

    /// Whether `item` is in the heap.
    pub(crate) fn contains(&self, item: u32) -> bool {
        self.position[item as usize] != u32::MAX
    }

    /// Adds `item` with `key` (it must not be in the heap).
    pub(crate) fn insert(&mut self, key: u64, item: u32) {
        debug_assert!(!self.contains(item));
        self.slots.push((key, item));
        self.position[item as usize] = self.slots.len() as u32 - 1;
        self.sift_up(self.slots.len() - 1);
    }

    /// Changes the key of `item` (in the heap).
    pub(crate) fn change_key(&mut self, item: u32, key: u64) {
        let i = self.position[item as usize] as usize;
        let old = self.slots[i].0;
        self.slots[i].0 = key;
        if key < old {
            self.sift_up(i);
        } else if key > old {
            self.sift_down(i);
        }
    }

    /// Removes `item` (in the heap), as complib deletes: the last slot fills its place and
    /// moves whichever way its key says.
    pub(crate) fn remove(&mut self, item: u32) {
        let i = self.position[item as usize] as usize;
        let last = self.slots.len() - 1;
        self.slots.swap(i, last);
        self.position[self.slots[i].1 as usize] = i as u32;
        self.slots.pop();
        self.position[item as usize] = u32::MAX;
        if i >= self.slots.len() {
            return;
        }
        if i == 0 {
            self.sift_down(0);
        } else {
            let parent = self.slots[(i - 1) / 4].0;
            if parent < self.slots[i].0 {
                self.sift_down(i);
            } else if parent > self.slots[i].0 {
                self.sift_up(i);
            }
        }
    }

    /// Removes and returns the item with the smallest key and its key.
    pub(crate) fn pop(&mut self) -> Option<(u64, u32)> {
        let &(key, item) = self.slots.first()?;
        self.remove(item);
        Some((key, item))
    }

    fn place(&mut self, i: usize, slot: (u64, u32)) {
        self.slots[i] = slot;
        self.position[slot.1 as usize] = i as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        let moving = self.slots[i];
        while i > 0 {
            let parent = (i - 1) / 4;
            if moving.0 < self.slots[parent].0 {
                let p = self.slots[parent];
                self.place(i, p);
                i = parent;
            } else {
                break;
            }
        }
        self.place(i, moving);
    }

    fn sift_down(&mut self, mut i: usize) {
        let moving = self.slots[i];
        let len = self.slots.len();
        while 4 * i + 1 < len {
            let first = 4 * i + 1;
            let mut child = first;
            for c in first + 1..(first + 4).min(len) {
                if self.slots[c].0 <= self.slots[child].0 {
                    child = c;
                }
            }
            if moving.0 > self.slots[child].0 {
                let c = self.slots[child];
                self.place(i, c);
                i = child;
            } else {
                break;
            }
        }
        self.place(i, moving);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys come out in order, and among equal keys in complib's order: here the item
    /// inserted last among the four equal children of the root comes out first after the
    /// root, where a heap breaking ties by item would give the lowest.
    #[test]
    fn pops_in_key_order_with_complibs_ties() {
        let mut h = QuaternaryHeap::new(6);
        for (item, key) in [(0, 0), (1, 5), (2, 5), (3, 5), (4, 5), (5, 9)] {
            h.insert(key, item);
        }
        assert_eq!(h.pop(), Some((0, 0)));
        // Item 5 (key 9) moved to the root and sifted down to the last of the equal children.
        assert_eq!(h.pop(), Some((5, 4)));
        let rest: Vec<u64> = std::iter::from_fn(|| h.pop().map(|(k, _)| k)).collect();
        assert_eq!(rest, vec![5, 5, 5, 9]);
        assert!(!h.contains(1));
    }

    /// Against a sorted list under random inserts, key changes and removals: the keys
    /// come out sorted and every item once.
    #[test]
    fn orders_keys_under_changes_and_removals() {
        let mut state = 12345u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut h = QuaternaryHeap::new(200);
        let mut keys = vec![None; 200];
        for step in 0..2000 {
            let item = (next() % 200) as u32;
            let key = next() % 50;
            match (keys[item as usize], step % 3) {
                (None, _) => {
                    h.insert(key, item);
                    keys[item as usize] = Some(key);
                }
                (Some(_), 0) => {
                    h.remove(item);
                    keys[item as usize] = None;
                }
                (Some(_), _) => {
                    h.change_key(item, key);
                    keys[item as usize] = Some(key);
                }
            }
        }
        let mut last = 0;
        while let Some((key, item)) = h.pop() {
            assert!(key >= last);
            assert_eq!(keys[item as usize].take(), Some(key));
            last = key;
        }
        assert!(keys.iter().all(Option::is_none));
    }
}
