//! The transports' responders (the destination's end of a connection): RC's, which takes
//! only the PSN it expects, and the selective one, which holds packets past a gap.

use super::psn::{psn_ahead, PSN_MASK};

/// What the responder does with a data packet ([`Responder::receive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receipt {
    /// The PSN it expected: the packet is taken; `ack` says whether to acknowledge it now
    /// (given whether it ends its message, see [`Responder::acknowledges`]).
    Accepted,
    /// A packet it took already: dropped, and the last PSN taken is acknowledged again.
    Duplicate {
        /// The PSN to acknowledge.
        ack: u32,
    },
    /// A packet past a gap: dropped; the first such packet of a gap is answered with a NAK
    /// naming the PSN expected, the others silently.
    OutOfSequence {
        /// The PSN to name in a NAK, if one is due.
        nak: Option<u32>,
    },
}

/// One connection at its responder (the destination).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Responder {
    /// The PSN it expects next.
    expected: u32,
    /// A NAK went out for `expected` (no other until it comes).
    nak_sent: bool,
    /// Packets taken since the last acknowledgement.
    unacknowledged: u32,
}

impl Responder {
    /// A data packet of PSN `psn` arrives.
    pub fn receive(&mut self, psn: u32) -> Receipt {
        match psn_ahead(psn, self.expected) {
            0 => {
                self.expected = (self.expected + 1) & PSN_MASK;
                self.nak_sent = false;
                self.unacknowledged += 1;
                Receipt::Accepted
            }
            d if d < 0 => Receipt::Duplicate { ack: self.expected.wrapping_sub(1) & PSN_MASK },
            _ => Receipt::OutOfSequence {
                nak: (!std::mem::replace(&mut self.nak_sent, true)).then_some(self.expected),
            },
        }
    }

    /// After an accepted packet: whether it is acknowledged now (every `ack_every`-th, and
    /// the last of a message), and the PSN to acknowledge.
    pub fn acknowledges(&mut self, ends_message: bool, ack_every: u32) -> Option<u32> {
        if ends_message || self.unacknowledged >= ack_every {
            self.unacknowledged = 0;
            Some(self.expected.wrapping_sub(1) & PSN_MASK)
        } else {
            None
        }
    }
}

/// What a selective responder does with a data packet ([`Reorder::receive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The PSN expected: taken, with the packets held after it that now follow in order.
    InOrder,
    /// A PSN ahead of the one expected, within the window: held until the gap fills.
    Ahead,
    /// A PSN taken or held already: dropped.
    Duplicate,
}

/// A selective responder: it takes packets in any order within the window, holds those
/// ahead of a gap and releases them in PSN order (to a rank that matches messages in
/// order), and acknowledges each one it receives with the PSN expected next.
#[derive(Clone, Debug)]
pub struct Reorder<T> {
    /// The PSN expected next (carried bits).
    expected: u32,
    /// Held packets: slot `i` is PSN `expected + 1 + i`.
    held: std::collections::VecDeque<Option<T>>,
    /// Packets held now.
    count: u32,
}

impl<T> Default for Reorder<T> {
    fn default() -> Self {
        Reorder { expected: 0, held: std::collections::VecDeque::new(), count: 0 }
    }
}

impl<T> Reorder<T> {
    /// Packet `item` of PSN `psn` arrives; what is released in order goes to `release`.
    pub fn receive(&mut self, psn: u32, item: T, mut release: impl FnMut(T)) -> Arrival {
        let ahead = psn_ahead(psn, self.expected);
        if ahead < 0 {
            return Arrival::Duplicate;
        }
        if ahead > 0 {
            let slot = ahead as usize - 1;
            if self.held.len() <= slot {
                self.held.resize_with(slot + 1, || None);
            }
            if self.held[slot].is_some() {
                return Arrival::Duplicate;
            }
            self.held[slot] = Some(item);
            self.count += 1;
            return Arrival::Ahead;
        }
        release(item);
        self.expected = (self.expected + 1) & PSN_MASK;
        while let Some(front) = self.held.pop_front() {
            match front {
                Some(next) => {
                    self.count -= 1;
                    release(next);
                    self.expected = (self.expected + 1) & PSN_MASK;
                }
                None => {
                    // The next gap: its slot becomes the expected PSN's.
                    break;
                }
            }
        }
        Arrival::InOrder
    }

    /// The last PSN taken in order (what a cumulative acknowledgement carries).
    pub fn cumulative(&self) -> u32 {
        self.expected.wrapping_sub(1) & PSN_MASK
    }

    /// Packets held out of order now.
    pub fn held(&self) -> u32 {
        self.count
    }
}
