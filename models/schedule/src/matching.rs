//! MPI point-to-point matching: per rank, the posted receives and the unexpected messages
//! (arrived, not yet received), matched by communicator, source and tag with wildcards, in
//! MPI's order (MPI 4.0, section 3.5 "Semantics of Point-to-Point Communication", "Order"):
//!
//! - a posted receive takes the earliest-arrived unexpected message it matches;
//! - an arriving message takes the earliest-posted receive that matches it;
//! - so messages of one sender on one communicator are received in the order they were
//!   sent (non-overtaking), given that they arrive in that order.
//!
//! **Design.** Every `(rank, comm, source, tag)` has a bucket in one hash map: a FIFO of the
//! exact receives posted with that key, and a FIFO of the unexpected messages with that key
//! (at most one of the two is non-empty: a message and a receive of one key would have
//! matched); a bucket is dropped when it empties, so the map holds only keys with
//! something waiting. Wildcard receives are not in buckets but in one list per rank, in post order;
//! unexpected messages are also on one list per rank, in arrival order. Lists are linked
//! through two slabs (receives, messages) whose freed nodes are reused, so no allocation
//! happens per operation once the slabs and the map have grown.
//!
//! - *Exact receive posted*: its key's bucket holds the earliest matching message, as every
//!   message it can match has exactly that key: pop it (O(1)) and unlink it from the rank's
//!   arrival list (doubly linked, O(1)).
//! - *Wildcard receive posted*: walk the rank's arrival list to the first message it
//!   matches (O(unexpected messages of the rank)); that message is the front of its bucket,
//!   since every earlier message of its key would have matched too.
//! - *Message arrives*: the candidates are the front of its bucket (the earliest exact
//!   receive) and the first matching wildcard receive; the order across the two is kept by
//!   a sequence number every posted receive gets, and the walk of the wildcard list stops
//!   at the first receive posted after the bucket's front. With no wildcard receive
//!   posted, O(1).
//!
//! So the exact-match case is one hash lookup and O(1) list work; wildcards cost a scan of
//! the rank's unexpected messages or posted wildcards, as in MPI libraries. Deterministic:
//! no hash-map iteration; results depend only on the sequence of calls.

use rustc_hash::FxHashMap;
use std::hash::{Hash, Hasher};

use crate::graph::{Source, TagMatch};

/// A message's envelope: what a receive matches on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Envelope {
    /// The communicator.
    pub comm: u32,
    /// The sending rank.
    pub src: u32,
    /// The tag.
    pub tag: u32,
}

/// What a receive accepts: a communicator, a source or any, a tag or any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// The communicator (never a wildcard in MPI).
    pub comm: u32,
    /// The sender, or any.
    pub src: Source,
    /// The tag, or any.
    pub tag: TagMatch,
}

impl Pattern {
    /// Whether a message with envelope `e` satisfies this receive.
    pub fn matches(&self, e: &Envelope) -> bool {
        self.comm == e.comm
            && match self.src {
                Source::Rank(r) => r == e.src,
                Source::Any => true,
            }
            && match self.tag {
                TagMatch::Tag(t) => t == e.tag,
                TagMatch::Any => true,
            }
    }

    /// The envelope of the only messages this receive matches, if it has no wildcard.
    fn exact(&self) -> Option<Envelope> {
        match (self.src, self.tag) {
            (Source::Rank(src), TagMatch::Tag(tag)) => Some(Envelope { comm: self.comm, src, tag }),
            _ => None,
        }
    }
}

const NIL: u32 = u32::MAX;

/// A bucket key: the receiving rank and an envelope.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key(u64, u64);

impl Key {
    fn new(rank: u32, e: &Envelope) -> Key {
        Key(u64::from(rank) << 32 | u64::from(e.comm), u64::from(e.src) << 32 | u64::from(e.tag))
    }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0);
        state.write_u64(self.1);
    }
}

/// The FIFO heads and tails (slab indices, `NIL` when empty) of one key.
#[derive(Clone, Copy)]
struct Bucket {
    recv_head: u32,
    recv_tail: u32,
    msg_head: u32,
    msg_tail: u32,
}

impl Default for Bucket {
    fn default() -> Bucket {
        Bucket { recv_head: NIL, recv_tail: NIL, msg_head: NIL, msg_tail: NIL }
    }
}

/// A posted receive: in its bucket's FIFO (`next`), or, a wildcard, in its rank's list
/// (`prev`, `next`).
struct RecvNode<R> {
    seq: u64,
    pattern: Pattern,
    payload: R,
    prev: u32,
    next: u32,
}

/// An unexpected message: in its bucket's FIFO (`bucket_next`) and its rank's arrival
/// list (`prev`, `next`).
struct MsgNode<M> {
    env: Envelope,
    payload: M,
    bucket_next: u32,
    prev: u32,
    next: u32,
}

/// A vector of nodes whose freed slots are reused.
struct Slab<T> {
    nodes: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Slab<T> {
    fn new() -> Slab<T> {
        Slab { nodes: Vec::new(), free: Vec::new() }
    }
    fn insert(&mut self, t: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = Some(t);
                i
            }
            None => {
                self.nodes.push(Some(t));
                (self.nodes.len() - 1) as u32
            }
        }
    }
    fn remove(&mut self, i: u32) -> T {
        self.free.push(i);
        self.nodes[i as usize].take().expect("a live node")
    }
    fn get(&self, i: u32) -> &T {
        self.nodes[i as usize].as_ref().expect("a live node")
    }
    fn get_mut(&mut self, i: u32) -> &mut T {
        self.nodes[i as usize].as_mut().expect("a live node")
    }
    fn live(&self) -> usize {
        self.nodes.len() - self.free.len()
    }
}

/// Per rank: the heads and tails of its wildcard-receive list and its arrival list.
#[derive(Clone, Copy)]
struct Lists {
    wild: (u32, u32),
    msgs: (u32, u32),
}

/// The matching state of every rank: posted receives carrying an `R` (what the caller
/// needs back when one matches, e.g. the receive's op) and unexpected messages carrying
/// an `M`. See the module documentation for the order rules and the design.
pub struct Matcher<R, M> {
    buckets: FxHashMap<Key, Bucket>,
    recvs: Slab<RecvNode<R>>,
    msgs: Slab<MsgNode<M>>,
    lists: Vec<Lists>,
    seq: u64,
}

impl<R, M> Matcher<R, M> {
    /// Empty queues for ranks `0..num_ranks`.
    pub fn new(num_ranks: u32) -> Matcher<R, M> {
        let empty = Lists { wild: (NIL, NIL), msgs: (NIL, NIL) };
        Matcher {
            buckets: FxHashMap::default(),
            recvs: Slab::new(),
            msgs: Slab::new(),
            lists: vec![empty; num_ranks as usize],
            seq: 0,
        }
    }

    /// The number of posted receives not yet matched (all ranks).
    pub fn posted(&self) -> usize {
        self.recvs.live()
    }

    /// The number of unexpected messages not yet received (all ranks).
    pub fn unexpected(&self) -> usize {
        self.msgs.live()
    }

    /// Rank `rank` posts a receive: returns the earliest-arrived unexpected message it
    /// matches (taken off the queue), or `None`, the receive then waiting in the queue.
    ///
    /// # Panics
    /// If `rank` is not below the number of ranks (as [`arrive`](Self::arrive)).
    pub fn post(&mut self, rank: u32, pattern: Pattern, recv: R) -> Option<(Envelope, M)> {
        if let Some(e) = pattern.exact() {
            let key = Key::new(rank, &e);
            if let Some(i) = self.buckets.get(&key).map(|b| b.msg_head).filter(|&i| i != NIL) {
                self.pop_msg(key, i);
                return Some(self.take_msg(rank, i));
            }
            let seq = self.next_seq();
            let i = self.recvs.insert(RecvNode { seq, pattern, payload: recv, prev: NIL, next: NIL });
            let b = self.buckets.entry(key).or_default();
            if b.recv_tail == NIL {
                b.recv_head = i;
            } else {
                self.recvs.get_mut(b.recv_tail).next = i;
            }
            b.recv_tail = i;
            return None;
        }
        let mut i = self.lists[rank as usize].msgs.0;
        while i != NIL {
            let m = self.msgs.get(i);
            if pattern.matches(&m.env) {
                self.pop_msg(Key::new(rank, &m.env), i);
                return Some(self.take_msg(rank, i));
            }
            i = m.next;
        }
        let seq = self.next_seq();
        let tail = self.lists[rank as usize].wild.1;
        let i = self.recvs.insert(RecvNode { seq, pattern, payload: recv, prev: tail, next: NIL });
        self.link_tail(rank, tail, i, true);
        None
    }

    /// A message with envelope `env` arrives at rank `rank`: returns the earliest-posted
    /// receive that matches it (taken off the queue), or `None`, the message then waiting
    /// as unexpected.
    pub fn arrive(&mut self, rank: u32, env: Envelope, msg: M) -> Option<(Pattern, R)> {
        let key = Key::new(rank, &env);
        let b = self.buckets.get(&key).copied().unwrap_or_default();
        let exact_seq = if b.recv_head == NIL { u64::MAX } else { self.recvs.get(b.recv_head).seq };
        let mut i = self.lists[rank as usize].wild.0;
        while i != NIL {
            let r = self.recvs.get(i);
            if r.seq > exact_seq {
                break;
            }
            if r.pattern.matches(&env) {
                let (prev, next) = (r.prev, r.next);
                self.unlink(rank, prev, next, true);
                let r = self.recvs.remove(i);
                return Some((r.pattern, r.payload));
            }
            i = r.next;
        }
        if b.recv_head != NIL {
            let r = self.recvs.remove(b.recv_head);
            if r.next == NIL {
                self.buckets.remove(&key);
            } else {
                self.buckets.get_mut(&key).expect("exists").recv_head = r.next;
            }
            return Some((r.pattern, r.payload));
        }
        let tail = self.lists[rank as usize].msgs.1;
        let node = MsgNode { env, payload: msg, bucket_next: NIL, prev: tail, next: NIL };
        let i = self.msgs.insert(node);
        let b = self.buckets.entry(key).or_default();
        if b.msg_tail == NIL {
            b.msg_head = i;
        } else {
            self.msgs.get_mut(b.msg_tail).bucket_next = i;
        }
        b.msg_tail = i;
        self.link_tail(rank, tail, i, false);
        None
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Takes message `i`, the front of bucket `key`, off the bucket; drops the bucket when
    /// it empties, so the map holds only the keys with something waiting.
    fn pop_msg(&mut self, key: Key, i: u32) {
        let next = self.msgs.get(i).bucket_next;
        let b = self.buckets.get_mut(&key).expect("a message has a bucket");
        debug_assert_eq!(b.msg_head, i, "the first match is its bucket's front");
        if next == NIL {
            self.buckets.remove(&key);
        } else {
            b.msg_head = next;
        }
    }

    /// Unlinks message `i` (already off its bucket) from `rank`'s arrival list and frees it.
    fn take_msg(&mut self, rank: u32, i: u32) -> (Envelope, M) {
        let m = self.msgs.remove(i);
        self.unlink(rank, m.prev, m.next, false);
        (m.env, m.payload)
    }

    /// Appends node `i` (its `prev` already `tail`) to `rank`'s wildcard list (`wild`) or
    /// arrival list.
    fn link_tail(&mut self, rank: u32, tail: u32, i: u32, wild: bool) {
        let l = &mut self.lists[rank as usize];
        let list = if wild { &mut l.wild } else { &mut l.msgs };
        if tail == NIL {
            list.0 = i;
        } else if wild {
            self.recvs.get_mut(tail).next = i;
        } else {
            self.msgs.get_mut(tail).next = i;
        }
        let l = &mut self.lists[rank as usize];
        if wild {
            l.wild.1 = i;
        } else {
            l.msgs.1 = i;
        }
    }

    /// Joins `prev` and `next`, the neighbours of a node leaving a list of `rank`.
    fn unlink(&mut self, rank: u32, prev: u32, next: u32, wild: bool) {
        let l = &mut self.lists[rank as usize];
        let list = if wild { &mut l.wild } else { &mut l.msgs };
        if prev == NIL {
            list.0 = next;
        } else if wild {
            self.recvs.get_mut(prev).next = next;
        } else {
            self.msgs.get_mut(prev).next = next;
        }
        let l = &mut self.lists[rank as usize];
        let list = if wild { &mut l.wild } else { &mut l.msgs };
        if next == NIL {
            list.1 = prev;
        } else if wild {
            self.recvs.get_mut(next).prev = prev;
        } else {
            self.msgs.get_mut(next).prev = prev;
        }
    }
}

impl<R, M> std::fmt::Debug for Matcher<R, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("ranks", &self.lists.len())
            .field("posted", &self.posted())
            .field("unexpected", &self.unexpected())
            .finish()
    }
}
