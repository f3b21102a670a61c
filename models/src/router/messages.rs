//! What a router's events carry, in two kinds of separate types: [`LinkMsg`], the messages
//! that cross a link from one router to another (possibly to another partition or rank),
//! and [`SelfEvent`], the events a router schedules for itself, each with its priority
//! within a cycle.
//!
//! The engine moves one message type per logical process, [`Msg`]. Wrapping the two kinds
//! (`Msg::Link(LinkMsg)`, `Msg::Local(SelfEvent)`) would cost an outer tag: both kinds hold
//! a 32-byte packet behind their own tag, so neither leaves room for the other's, and an
//! engine event would grow from 64 to 72 bytes, past a cache line, on every packet-hop.
//! So `Msg` is flat, the variants of both kinds side by side under one tag, and only this
//! file knows it: routers build a `LinkMsg` or a `SelfEvent` and post it through [`Post`]
//! (which converts it and, for self-events, supplies the priority), and take a received
//! `Msg` apart with [`Msg::split`]. The conversions are moves between same-shaped
//! variants, which the optimiser folds into the one match on the tag.
//!
//! Every variant is declared once, in the call of `router_messages!` below, which writes the
//! three enums and the conversions between them.

use super::RouterCtx;
use engine::LinkRoute;
use routing::packet::Packet;
use routing::{Feedback, Report};
use serde::{Deserialize, Serialize};
use topology::{EndpointId, PortId};

/// Declares the link messages and the self-events once: each kind's enum, the flat [`Msg`]
/// holding both (a self-event under the flat name given after `as`, where a link message
/// has its name), [`Msg::split`] and the `From` conversions.
macro_rules! router_messages {
    (
        link { $($(#[$ldoc:meta])* $link:ident $({ $($(#[$lfdoc:meta])* $lf:ident: $lty:ty,)* })?,)* }
        local { $($(#[$sdoc:meta])* $local:ident as $flat:ident $({ $($(#[$sfdoc:meta])* $sf:ident: $sty:ty,)* })?,)* }
    ) => {
        /// A message that crosses a link: it arrives `latency` cycles after it was sent, at
        /// the router at the far end. Link messages come before self-events in every cycle.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum LinkMsg {
            $($(#[$ldoc])* $link $({ $($(#[$lfdoc])* $lf: $lty,)* })?,)*
        }

        /// An event a router schedules for itself.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum SelfEvent {
            $($(#[$sdoc])* $local $({ $($(#[$sfdoc])* $sf: $sty,)* })?,)*
        }

        /// A router's message as the engine carries it: a [`LinkMsg`] or a [`SelfEvent`],
        /// flat under one tag so that an event stays 64 bytes (see the module docs). Build
        /// it from either kind with `From`; take it apart with [`Msg::split`].
        #[derive(Clone, Copy, Debug, Serialize, Deserialize)]
        pub enum Msg {
            $(
                #[doc = concat!("[`LinkMsg::", stringify!($link), "`].")]
                $link $({ $($(#[$lfdoc])* $lf: $lty,)* })?,
            )*
            $(
                #[doc = concat!("[`SelfEvent::", stringify!($local), "`].")]
                $flat $({ $($(#[$sfdoc])* $sf: $sty,)* })?,
            )*
        }

        impl Msg {
            /// The message as what it is: a link message or a self-event.
            #[inline]
            pub fn split(self) -> MsgKind {
                match self {
                    $(Msg::$link $({ $($lf),* })? => MsgKind::Link(LinkMsg::$link $({ $($lf),* })?),)*
                    $(Msg::$flat $({ $($sf),* })? => MsgKind::Local(SelfEvent::$local $({ $($sf),* })?),)*
                }
            }
        }

        impl From<LinkMsg> for Msg {
            #[inline]
            fn from(msg: LinkMsg) -> Msg {
                match msg {
                    $(LinkMsg::$link $({ $($lf),* })? => Msg::$link $({ $($lf),* })?,)*
                }
            }
        }

        impl From<SelfEvent> for Msg {
            #[inline]
            fn from(event: SelfEvent) -> Msg {
                match event {
                    $(SelfEvent::$local $({ $($sf),* })? => Msg::$flat $({ $($sf),* })?,)*
                }
            }
        }
    };
}

router_messages! {
    link {
        /// A packet head arrives at input `port`.
        Head {
            /// Receiving input port.
            port: PortId,
            /// The packet.
            packet: Packet,
        },
        /// Credits arrive at output `port` for downstream VC `vc`.
        Credit {
            /// Output port the credits are for.
            port: PortId,
            /// Downstream VC.
            vc: u8,
            /// Phits freed.
            phits: u16,
        },
        /// PFC (`router.flow_control = "pfc"`): the receiver across output `port` pauses
        /// or resumes its sending on VC `vc`.
        Pause {
            /// Output port it concerns.
            port: PortId,
            /// Downstream VC (priority class).
            vc: u8,
            /// Paused (true) or resumed (false).
            paused: bool,
        },
        /// What the downstream router measured of a packet that arrived there, for output
        /// `port` (routings that learn, [`routing::Routing::on_arrive`]).
        Feedback {
            /// Output port it concerns.
            port: PortId,
            /// What the downstream router tells.
            feedback: Feedback,
        },
        /// The neighbour across input `port` reports its state (routings that share state,
        /// [`routing::Routing::sharing`]).
        Report {
            /// Receiving port.
            port: PortId,
            /// What the neighbour's routing reported.
            report: Report,
        },
        /// A congestion notification travelling outside the buffers
        /// (`congestion.infiniband.notification = "direct"`), arriving at input `port`.
        Notice {
            /// Receiving port.
            port: PortId,
            /// The notification (a [`Packet::cnp`]).
            packet: Packet,
        },
    }
    local {
        /// The link of output `port` is free again (the last tail has left). Scheduled only
        /// when something waits for it: a queued packet, or the allocator waiting for room.
        LinkFree as LinkFree {
            /// Output port.
            port: PortId,
        },
        /// The tail of `packet` reaches endpoint `nic`.
        Deliver as Deliver {
            /// Local endpoint index.
            nic: u16,
            /// The packet.
            packet: Packet,
        },
        /// Endpoint `nic` generates a packet.
        Generate as Generate {
            /// Local endpoint index.
            nic: u16,
        },
        /// Endpoint `nic` tries to inject its next packet.
        Inject as Inject {
            /// Local endpoint index.
            nic: u16,
        },
        /// With congestion control: a flow that endpoint `nic` holds may send now. Apart
        /// from `Inject`, whose one pending event the endpoint keeps for its link and
        /// credits: a held flow's time is later, and may be superseded by an earlier one.
        Wake as Wake {
            /// Local endpoint index.
            nic: u16,
        },
        /// Run the switch allocator.
        Allocate as Allocate,
        /// The rank at endpoint `nic` ends its computation `op`.
        ComputeDone as ComputeDone {
            /// Local endpoint index.
            nic: u16,
            /// The `calc` op.
            op: u32,
        },
        /// Time to report the switch's state to its neighbours (routings that share state).
        Report as ReportDue,
        /// The transport's timer of endpoint `nic`'s connection to `peer` comes due
        /// (`transport.kind = "rc"`).
        Timeout as Timeout {
            /// Local endpoint index.
            nic: u16,
            /// The connection's destination.
            peer: EndpointId,
        },
        /// A congestion notification from endpoint `from` reaches endpoint `nic`.
        Notify as Notify {
            /// Local endpoint index.
            nic: u16,
            /// The endpoint that sent it: the destination of the flow it slows.
            from: EndpointId,
            /// Per-destination throttling: the senders it reports (0 otherwise).
            senders: u16,
            /// Per-destination throttling: an acknowledgement of a packet, not a count.
            ack: bool,
        },
    }
}

impl SelfEvent {
    /// Priority within a cycle (link arrivals always come first): link frees, deliveries,
    /// generation, injection, then allocation, which sees everything that arrived; a report
    /// last, of the state the cycle leaves.
    #[inline]
    pub fn priority(&self) -> u16 {
        match self {
            SelfEvent::LinkFree { .. } => 1,
            SelfEvent::Deliver { .. } | SelfEvent::Notify { .. } => 2,
            SelfEvent::ComputeDone { .. } => 3,
            SelfEvent::Generate { .. } => 3,
            SelfEvent::Inject { .. } | SelfEvent::Wake { .. } | SelfEvent::Timeout { .. } => 4,
            SelfEvent::Allocate => 5,
            SelfEvent::Report => 6,
        }
    }
}

/// A received [`Msg`], by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgKind {
    /// It came over a link.
    Link(LinkMsg),
    /// The router scheduled it for itself.
    Local(SelfEvent),
}

/// How a router posts its messages: link messages on a link, self-events at their
/// priority. The only way the router's code hands messages to the engine.
pub(super) trait Post {
    /// Sends `msg` on the link `route` (it arrives after the link's latency).
    fn send_link(&mut self, route: LinkRoute, msg: LinkMsg);
    /// Sends `msg` over the link of `route` `delay` cycles from now.
    fn send_link_after(&mut self, route: LinkRoute, delay: u64, msg: LinkMsg);
    /// Schedules `event` for this router `delay` cycles from now.
    fn schedule_self(&mut self, delay: u64, event: SelfEvent);
}

impl Post for RouterCtx<'_> {
    #[inline]
    fn send_link(&mut self, route: LinkRoute, msg: LinkMsg) {
        self.send_on(route, msg.into());
    }

    #[inline]
    fn send_link_after(&mut self, route: LinkRoute, delay: u64, msg: LinkMsg) {
        self.send_on_after(route, delay, msg.into());
    }

    #[inline]
    fn schedule_self(&mut self, delay: u64, event: SelfEvent) {
        self.schedule(delay, event.priority(), event.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_cache_line() {
        // Every packet-hop moves one event through the engine's queues: a 32-byte packet,
        // the variant's tag and port, and the engine's time, LP and tie-breaker.
        assert_eq!(std::mem::size_of::<Msg>(), 40);
        assert_eq!(std::mem::size_of::<engine::Event<Msg>>(), 64);
        // The nested layout the flat `Msg` avoids.
        #[allow(dead_code)]
        enum Nested {
            Link(LinkMsg),
            Local(SelfEvent),
        }
        assert_eq!(std::mem::size_of::<engine::Event<Nested>>(), 72);
    }

    #[test]
    fn messages_split_back_into_what_they_were_built_from() {
        let packet = Packet::new(3, 7, 9, 16, 100);
        let links = [
            LinkMsg::Head { port: 4, packet },
            LinkMsg::Credit { port: 5, vc: 1, phits: 16 },
            LinkMsg::Report { port: 6, report: [7; routing::REPORT_BYTES] },
            LinkMsg::Feedback { port: 7, feedback: Feedback { row: 3, value: 250 } },
            LinkMsg::Notice { port: 8, packet },
        ];
        for msg in links {
            assert_eq!(Msg::from(msg).split(), MsgKind::Link(msg));
        }
        let events = [
            SelfEvent::LinkFree { port: 2 },
            SelfEvent::Deliver { nic: 1, packet },
            SelfEvent::Generate { nic: 6 },
            SelfEvent::Inject { nic: 6 },
            SelfEvent::Allocate,
            SelfEvent::Report,
        ];
        for (k, event) in events.into_iter().enumerate() {
            assert_eq!(Msg::from(event).split(), MsgKind::Local(event));
            // The order of self-events within a cycle.
            assert_eq!(event.priority(), k as u16 + 1);
        }
        // A held flow's wake runs as an injection does.
        let wake = SelfEvent::Wake { nic: 3 };
        assert_eq!(Msg::from(wake).split(), MsgKind::Local(wake));
        assert_eq!(wake.priority(), SelfEvent::Inject { nic: 3 }.priority());
        // A notification reaches an endpoint as a delivery does.
        let notify = SelfEvent::Notify { nic: 1, from: 12, senders: 7, ack: true };
        assert_eq!(Msg::from(notify).split(), MsgKind::Local(notify));
        assert_eq!(notify.priority(), SelfEvent::Deliver { nic: 1, packet }.priority());
    }
}
