//! State shared between neighbouring routers, for routings that decide on another
//! router's state (UGAL-G, piggybacking; [`routing::Routing::sharing`]).
//!
//! Remote state travels as messages over the links, like credits: a router's report
//! reaches its neighbour after the link's latency and takes no bandwidth. So what a router
//! knows of another is exactly as old on one thread as on many ranks, and results stay
//! identical for every partitioning. A router reports at multiples of the routing's period
//! while it has something to say (packets buffered, or a last report that was not empty),
//! and only what changed since its last report.

use super::messages::{LinkMsg, Post, SelfEvent};
use super::{RouterCtx, RouterState, Shared};
use routing::{Report, REPORT_BYTES};
use topology::{PortId, PortTarget};

/// A router's share of the reports: what it last heard over each port and last said.
pub(super) struct Reports {
    /// Cycles between reports.
    period: u64,
    /// The ports its reports go out on.
    to: Vec<PortId>,
    /// The last report received over each port (zero before the first).
    pub(super) received: Vec<Report>,
    /// Its last report.
    sent: Report,
    /// A report event is pending.
    scheduled: bool,
}

impl Reports {
    /// The reports of switch `at` whose ports are `ports`, if the routing shares state.
    pub(super) fn new(sh: &Shared, at: u32, ports: &[topology::Port]) -> Option<Box<Reports>> {
        let routing = &sh.routes.routing;
        let sharing = routing.sharing()?;
        let to = (0..ports.len() as PortId)
            .filter(|&p| {
                matches!(ports[p as usize].target, PortTarget::Switch { .. }) && routing.reports_to(at, p)
            })
            .collect();
        Some(Box::new(Reports {
            period: sharing.period.max(1) as u64,
            to,
            received: vec![[0; REPORT_BYTES]; ports.len()],
            sent: [0; REPORT_BYTES],
            scheduled: false,
        }))
    }
}

impl RouterState {
    /// A neighbour's report arrives over `port`.
    pub(super) fn on_report(&mut self, port: PortId, report: Report) {
        if let Some(r) = self.reports.as_deref_mut() {
            r.received[port as usize] = report;
        }
    }

    /// Something arrived that may change what the router reports: make sure a report is
    /// due at the next multiple of the period.
    #[inline]
    pub(super) fn wake_reports(&mut self, ctx: &mut RouterCtx<'_>) {
        if let Some(r) = self.reports.as_deref_mut() {
            if !r.scheduled {
                r.scheduled = true;
                let now = ctx.now();
                ctx.schedule_self(r.period - now % r.period, SelfEvent::Report);
            }
        }
    }

    /// The report is due: send it where it changed, and keep reporting while there is
    /// something to say.
    pub(super) fn on_report_due(&mut self, sh: &Shared, ctx: &mut RouterCtx<'_>) {
        let report = self.current_report(sh, ctx.now());
        let Some(r) = self.reports.as_deref_mut() else {
            return;
        };
        if report != r.sent {
            r.sent = report;
            for &p in &r.to {
                let port = &self.sw.ports[p as usize];
                ctx.send_link(port.route, LinkMsg::Report { port: port.peer_port, report });
            }
        }
        r.scheduled = self.sw.waiting > 0 || report != [0; REPORT_BYTES];
        if r.scheduled {
            ctx.schedule_self(r.period, SelfEvent::Report);
        }
    }
}
