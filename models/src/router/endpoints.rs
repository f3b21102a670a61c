//! The endpoints of one switch, as one record apart from the switch's ports and VCs: their
//! NICs, the application ranks they run, the packets on their way to them and the credits
//! on their way back. The router's other files reach them through `RouterState::ends`;
//! the switch's files (`allocator.rs`, `route.rs`, `link.rs`, `separable.rs`,
//! `buffers.rs`, `sharing.rs`) only through the crossings below: credits returned to an
//! endpoint at the grant, and a packet ejected to one (checked by `cli/tests/layers.rs`).

use super::app::{AppRank, Mailroom};
use super::nic::Nic;
use routing::packet::Packet;
use std::collections::{HashMap, VecDeque};
use topology::EndpointId;

/// The endpoints of one switch.
pub(super) struct Endpoints {
    pub(super) nics: Vec<Nic>,
    /// Packets on their way to an own endpoint: `(delivery time, nic, packet)`, in order.
    pub(super) deliveries: VecDeque<(u64, u16, Packet)>,
    /// Credits on their way back to the endpoints: `(arrival, nic, vc, phits)`, in time
    /// order; applied lazily, when an endpoint next looks at its credits.
    pub(super) nic_credit_returns: VecDeque<(u64, u16, u8, u16)>,
    /// The application ranks at this router's endpoints (see `app.rs`).
    pub(super) apps: Vec<AppRank>,
    /// Their messages: matching queues, messages partly in, sequence numbers (`None`
    /// without ranks).
    pub(super) mail: Option<Box<Mailroom>>,
    /// The ranks' ops to start (`false`) or end (`true`) now: `(rank, op, end)`.
    pub(super) app_work: VecDeque<(u32, u32, bool)>,
    /// The work list is being run (see `app.rs`).
    pub(super) app_running: bool,
    /// Per-destination notices an endpoint sends at once (`cc.rs`), kept for their room.
    pub(super) notice_scratch: Vec<(EndpointId, u32)>,
    /// With `simulation.reordering`: per endpoint, the latest injection time of a packet
    /// from each source that has arrived (`nic.rs`); empty otherwise (`Router::new`).
    pub(super) latest_from: Vec<HashMap<EndpointId, u32>>,
}

impl Endpoints {
    /// The endpoints of `nics`, without ranks, packets or credits on their way.
    pub(super) fn new(nics: Vec<Nic>) -> Endpoints {
        Endpoints {
            nics,
            deliveries: VecDeque::new(),
            nic_credit_returns: VecDeque::new(),
            apps: Vec::new(),
            mail: None,
            app_work: VecDeque::new(),
            app_running: false,
            notice_scratch: Vec::new(),
            latest_from: Vec::new(),
        }
    }

    /// Credits for `phits` of VC `vc` go back to endpoint `nic`'s NIC, arriving at `back`
    /// (the switch granted the packet that held them). Returns whether the NIC waits for
    /// them and must be woken then (it is marked as scheduled).
    pub(super) fn return_credits(&mut self, back: u64, nic: u16, vc: u8, phits: u16) -> bool {
        let ret = (back, nic, vc, phits);
        // Terminal links share one latency, so returns arrive in the order they leave;
        // keep the queue in time order whatever happens.
        match self.nic_credit_returns.back() {
            Some(last) if last.0 > back => {
                let at = self.nic_credit_returns.partition_point(|r| r.0 <= back);
                self.nic_credit_returns.insert(at, ret);
            }
            _ => self.nic_credit_returns.push_back(ret),
        }
        let nic = &mut self.nics[nic as usize];
        let wake = nic.blocked_on_credits && !nic.inject_scheduled;
        if wake {
            nic.inject_scheduled = true;
        }
        wake
    }

    /// A packet ejected to endpoint `nic`, its tail arriving at `at`. Queued here, to be
    /// accounted once its time has passed without an event (`Ok`), unless something at the
    /// endpoint reacts to its arrival (application ranks, or congestion control: `reacts`)
    /// or packets of different sizes would break the queue's time order: then it comes
    /// back (`Err`) to be delivered by an event.
    pub(super) fn eject(&mut self, at: u64, nic: u16, packet: Packet, reacts: bool) -> Result<(), Packet> {
        if self.apps.is_empty() && !reacts && self.deliveries.back().is_none_or(|d| d.0 <= at) {
            self.deliveries.push_back((at, nic, packet));
            Ok(())
        } else {
            Err(packet)
        }
    }
}
