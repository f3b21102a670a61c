//! The transports' requester (the source's end of a connection): what it keeps of the
//! messages it sent, its acknowledgements, going back (RC) or resending what is lost
//! (selective), and its timer's count.

use super::psn::{widen, PSN_MASK};

/// One message a requester sent on a connection, kept until acknowledged whole: enough to
/// build any of its packets again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentMessage {
    /// PSN of its first packet (full width).
    pub first: u32,
    /// Its packets.
    pub packets: u32,
    /// Phits of each packet but the last, and of the last.
    pub full: u16,
    /// Phits of its last packet.
    pub last: u16,
    /// The low 32 bits of its packets' ids (which op sent it).
    pub low: u32,
    /// When it was posted (its packets' creation time).
    pub created: u64,
    /// The send op its acknowledgement ends, if any.
    pub ends: Option<u32>,
}

impl SentMessage {
    /// Phits of its packet of PSN `psn`.
    pub fn size_of(&self, psn: u32) -> u16 {
        if psn.wrapping_sub(self.first) + 1 == self.packets {
            self.last
        } else {
            self.full
        }
    }
}

/// One connection at its requester (the source). PSNs here are full width (a count of the
/// connection's packets); packets carry their low [`PSN_BITS`](super::PSN_BITS).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Requester {
    /// The next new packet's PSN.
    next: u32,
    /// The oldest unacknowledged PSN.
    unacknowledged: u32,
    /// The next PSN to send: `next` but while going back.
    resend: u32,
    /// Messages with packets not acknowledged, oldest first.
    messages: std::collections::VecDeque<SentMessage>,
    /// When the timer counts from: the last acknowledgement that moved things on, the
    /// first packet sent with none outstanding, or the last timeout.
    pub armed_at: u64,
    /// A timer event is pending.
    pub timer_pending: bool,
    /// Timeouts since the last acknowledgement that moved things on (selective: timeout
    /// periods since then, counted when a packet times out).
    pub timeouts: u8,
    /// It gave up (`retries` timeouts in a row).
    pub failed: bool,
    /// Selective (UEC-like): which of the PSNs from the oldest unacknowledged on have been
    /// acknowledged one by one, and which were declared lost; empty for RC.
    sacked: std::collections::VecDeque<Flags>,
    /// Selective: PSNs declared lost, to send again, oldest first.
    lost: std::collections::VecDeque<u32>,
    /// Selective: the highest PSN acknowledged one by one, plus one (0: none).
    highest: u32,
    /// Selective: PSNs below this were examined for loss.
    examined: u32,
    /// Selective mode.
    selective: bool,
    /// Selective: phits in the network: sent, not acknowledged and not declared lost since
    /// (each packet once, however often sent).
    in_flight: u64,
    /// NSCC's window, with `transport.uec.congestion = "nscc"`.
    pub nscc: Option<super::NsccWindow>,
}

/// A selective requester's record of one PSN: acknowledged, declared lost by the
/// out-of-order count, in flight (counted in `in_flight`), its phits, when it was last sent
/// and how often.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Flags {
    acked: bool,
    lost: bool,
    flying: bool,
    size: u16,
    sends: u8,
    sent_at: u64,
}

impl Flags {
    /// It leaves the network's count: acknowledged or declared lost.
    fn land(&mut self, in_flight: &mut u64) {
        if self.flying {
            *in_flight -= u64::from(self.size);
            self.flying = false;
        }
    }
}

/// What an acknowledgement did at the requester ([`Requester::acknowledge`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Acknowledged {
    /// The sends whose last packet it acknowledged, oldest first.
    pub ended: Vec<u32>,
    /// It acknowledged something new.
    pub progress: bool,
    /// Selective: the phits in flight it acknowledged (those it declared lost are not).
    pub phits: u64,
}

impl Requester {
    /// A requester that acknowledges and resends packet by packet (UEC-like) if
    /// `selective`, else by going back (RC).
    pub fn new(selective: bool) -> Self {
        Requester { selective, ..Default::default() }
    }

    /// Packets sent and not acknowledged.
    pub fn outstanding(&self) -> u32 {
        self.next.wrapping_sub(self.unacknowledged)
    }

    /// Whether a new packet may go with `window` packets allowed unacknowledged (none
    /// while it goes back or has failed; a selective one sends its lost packets first,
    /// which the caller does, and new ones beside them).
    pub fn may_send_new(&self, window: u32) -> bool {
        !self.failed && (self.selective || self.resend == self.next) && self.outstanding() < window
    }

    /// A new packet of `size` phits: its PSN (full width); `message` is recorded if it is
    /// its message's first packet.
    pub fn send_new(&mut self, message: Option<SentMessage>, size: u16) -> u32 {
        let psn = self.next;
        if let Some(mut m) = message {
            m.first = psn;
            self.messages.push_back(m);
        }
        self.next = self.next.wrapping_add(1);
        self.resend = self.next;
        if self.selective {
            self.sacked.push_back(Flags { size, ..Flags::default() });
        }
        psn
    }

    /// Selective: PSN `psn` (its carried bits) left the endpoint at `t`, first or again;
    /// from its departure it counts in flight until acknowledged or declared lost (a
    /// packet waiting in the endpoint's source queue does not: its round trip has not
    /// started), and its timer runs from `t`.
    pub fn stamp(&mut self, psn: u32, t: u64) {
        let at = widen(psn, self.unacknowledged).wrapping_sub(self.unacknowledged);
        if let Some(f) = self.sacked.get_mut(at as usize) {
            if !f.flying && !f.acked {
                self.in_flight += u64::from(f.size);
                f.flying = true;
            }
            f.sends = f.sends.saturating_add(1);
            f.sent_at = t;
        }
    }

    /// Selective: the round trip of PSN `psn` acknowledged at `t`, if it was sent once
    /// (an acknowledgement of a resent packet could answer either copy).
    pub fn rtt_sample(&self, psn: u32, t: u64) -> Option<u64> {
        let at = widen(psn, self.unacknowledged).wrapping_sub(self.unacknowledged);
        let f = self.sacked.get(at as usize)?;
        (f.sends == 1 && !f.acked).then(|| t.saturating_sub(f.sent_at))
    }

    /// Selective: phits sent and not acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// The next packet to send again (going back, or one declared lost): its PSN and
    /// message.
    pub fn next_resend(&mut self) -> Option<(u32, SentMessage)> {
        if self.failed {
            return None;
        }
        if self.selective {
            while let Some(&psn) = self.lost.front() {
                let at = psn.wrapping_sub(self.unacknowledged);
                let f = (at < self.outstanding()).then(|| self.sacked[at as usize]);
                let Some(f) = f.filter(|f| !f.acked && !f.flying) else {
                    self.lost.pop_front();
                    continue;
                };
                // Under NSCC a packet sent again takes room in the window as a new one.
                if self.nscc.as_ref().is_some_and(|w| !w.may_send(self.in_flight, f.size)) {
                    return None;
                }
                self.lost.pop_front();
                return Some((psn, self.message_of(psn)));
            }
            return None;
        }
        if self.resend == self.next {
            return None;
        }
        let psn = self.resend;
        self.resend = self.resend.wrapping_add(1);
        Some((psn, self.message_of(psn)))
    }

    /// The kept message PSN `psn` belongs to.
    fn message_of(&self, psn: u32) -> SentMessage {
        *self
            .messages
            .iter()
            .find(|m| psn.wrapping_sub(m.first) < m.packets)
            .expect("an unacknowledged PSN belongs to a kept message")
    }

    /// Whether it has packets to send again.
    pub fn resending(&self) -> bool {
        !self.failed && if self.selective { !self.lost.is_empty() } else { self.resend != self.next }
    }

    /// Selective: PSN `psn` arrived, and everything up to `cumulative` (carried bits). A
    /// packet not acknowledged when `threshold` packets sent after it have been is
    /// declared lost, once (its timeout may declare it again once it was sent again).
    pub fn selective_ack(&mut self, psn: u32, cumulative: u32, threshold: u32) -> Acknowledged {
        let in_flight = self.in_flight;
        let mut done = self.acknowledge(cumulative);
        let at = widen(psn, self.unacknowledged).wrapping_sub(self.unacknowledged);
        if !self.failed && at < self.outstanding() && !self.sacked[at as usize].acked {
            self.sacked[at as usize].acked = true;
            self.sacked[at as usize].land(&mut self.in_flight);
            self.highest = self.highest.max(self.unacknowledged.wrapping_add(at + 1));
            self.timeouts = 0;
            done.progress = true;
            // Everything acknowledged from the oldest on is acknowledged in order.
            let mut leading = 0;
            while self.sacked.get(leading).is_some_and(|f| f.acked) {
                leading += 1;
            }
            if leading > 0 {
                let through = self.unacknowledged.wrapping_add(leading as u32 - 1);
                let more = self.acknowledge(through & PSN_MASK);
                done.ended.extend(more.ended);
            }
        }
        done.phits = in_flight - self.in_flight;
        // Loss: unacknowledged packets `threshold` or more below the highest acknowledged.
        let limit = self.highest.saturating_sub(threshold);
        let mut q = self.examined.max(self.unacknowledged);
        while q < limit {
            let at = q.wrapping_sub(self.unacknowledged) as usize;
            if let Some(f) = self.sacked.get_mut(at) {
                if !f.acked && !f.lost {
                    f.lost = true;
                    f.land(&mut self.in_flight);
                    self.lost.push_back(q);
                }
            }
            q += 1;
        }
        self.examined = self.examined.max(limit);
        done
    }

    /// Everything up to PSN `psn` (carried bits) arrived. Stale acknowledgements (behind
    /// what is acknowledged, or ahead of what was sent) change nothing.
    pub fn acknowledge(&mut self, psn: u32) -> Acknowledged {
        let through = widen(psn, self.unacknowledged.wrapping_sub(1));
        let newly = through.wrapping_sub(self.unacknowledged).wrapping_add(1);
        let mut done = Acknowledged::default();
        // A failed connection is in its error state: late acknowledgements complete nothing.
        if self.failed || newly == 0 || newly > self.outstanding() {
            return done;
        }
        for _ in 0..newly {
            if let Some(mut f) = self.sacked.pop_front() {
                f.land(&mut self.in_flight);
            }
        }
        self.unacknowledged = through.wrapping_add(1);
        if self.resend.wrapping_sub(self.unacknowledged) > self.outstanding() {
            // The resend point was acknowledged meanwhile.
            self.resend = self.unacknowledged;
        }
        while let Some(m) = self.messages.front() {
            if m.first.wrapping_add(m.packets).wrapping_sub(self.unacknowledged) as i32 > 0 {
                break;
            }
            done.ended.extend(m.ends);
            self.messages.pop_front();
        }
        done.progress = true;
        self.timeouts = 0;
        done
    }

    /// A NAK for PSN `psn`: everything before it arrived, and the requester goes back to
    /// it. Returns what the implied acknowledgement did and whether it went back.
    pub fn nak(&mut self, psn: u32) -> (Acknowledged, bool) {
        let done = self.acknowledge(psn.wrapping_sub(1) & PSN_MASK);
        let at = widen(psn, self.unacknowledged);
        if at != self.unacknowledged || self.outstanding() == 0 || self.failed {
            return (done, false);
        }
        self.resend = at;
        (done, true)
    }

    /// RC: the timer expired with packets unacknowledged: it goes back to the oldest, or,
    /// after `retries` timeouts in a row, fails. Returns whether it failed.
    pub fn time_out(&mut self, retries: u8) -> bool {
        debug_assert!(!self.selective, "a selective requester's packets expire one by one");
        self.timeouts += 1;
        if self.timeouts > retries {
            self.failed = true;
        } else {
            self.resend = self.unacknowledged;
        }
        self.failed
    }

    /// When the connection's timer comes due, at `t`: RC, a timeout after `armed_at`;
    /// selective, when the next packet in flight times out, or with nothing in flight (all
    /// of it lost, waiting for room) a timeout from now, still counting from the last
    /// acknowledgement.
    pub fn timer_due(&self, t: u64, timeout: u64) -> u64 {
        if self.selective {
            self.next_expiry(timeout).unwrap_or(t + timeout)
        } else {
            self.armed_at + timeout
        }
    }

    /// The timer is due at `t`: RC goes back to the oldest unacknowledged packet and
    /// restarts the timer ([`Self::time_out`]), selective sends again what timed out
    /// ([`Self::expire`]). Returns whether the connection failed and the phits declared
    /// lost (selective).
    pub fn on_timer(&mut self, t: u64, timeout: u64, retries: u8) -> (bool, u64) {
        if self.selective {
            return self.expire(t, timeout, retries);
        }
        let failed = self.time_out(retries);
        if !failed {
            self.armed_at = t;
        }
        (failed, 0)
    }

    /// Selective: when the next packet in flight times out, `timeout` cycles after it was
    /// last sent (`None`: nothing is in flight).
    pub fn next_expiry(&self, timeout: u64) -> Option<u64> {
        self.sacked.iter().filter(|f| f.flying).map(|f| f.sent_at + timeout).min()
    }

    /// Selective: at `t`, every packet in flight sent `timeout` or more cycles ago is
    /// declared lost and queued to go again, each on its own timer as Ultra Ethernet's
    /// packet delivery sublayer keeps them. The connection fails once nothing has been
    /// acknowledged for more than `retries` timeouts (since `armed_at`, as RC's timer
    /// counts them). Returns whether it failed and the phits declared lost.
    pub fn expire(&mut self, t: u64, timeout: u64, retries: u8) -> (bool, u64) {
        let (before, mut expired) = (self.in_flight, Vec::new());
        for (i, f) in self.sacked.iter_mut().enumerate() {
            if f.flying && f.sent_at + timeout <= t {
                f.land(&mut self.in_flight);
                expired.push(self.unacknowledged.wrapping_add(i as u32));
            }
        }
        self.timeouts = u8::try_from(t.saturating_sub(self.armed_at) / timeout.max(1)).unwrap_or(u8::MAX);
        if self.timeouts > retries {
            self.failed = true;
            return (true, before - self.in_flight);
        }
        // Oldest first, ahead of those the out-of-order count declared.
        for psn in expired.into_iter().rev() {
            self.lost.push_front(psn);
        }
        (false, before - self.in_flight)
    }

    /// The oldest unacknowledged PSN (full width).
    pub fn oldest(&self) -> u32 {
        self.unacknowledged
    }
}
