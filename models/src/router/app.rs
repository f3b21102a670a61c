//! Application ranks at the endpoints (see `crate::workload`): a rank posts its step's
//! messages into its endpoint's source queue, counts the packets that arrive for each
//! step, moves on once the step's receives are in and its own sends have left the
//! endpoint (as `MPI_Waitall` over the step's sends and receives), and computes after
//! each iteration. Everything a rank reacts to arrives as an event at its router (a
//! delivery, the end of its computation), so the ranks' progress is as deterministic as
//! the network's.

use super::buffers::{store_in, Held, NIL};
use super::messages::{Post, SelfEvent};
use super::stats::{JobStats, PartitionStats, StalledRank};
use super::{RouterCtx, RouterState, Shared};
use crate::workload::{Order, Workload, WORKLOAD_PACKET};
use routing::packet::Packet;
use std::collections::{HashMap, VecDeque};
use topology::EndpointId;

/// One rank of a job, running at one of the router's endpoints.
pub(super) struct AppRank {
    /// Its job (index in the workload).
    job: u32,
    /// Its rank in the job.
    rank: u32,
    /// Local index of its endpoint.
    nic: u16,
    /// Global step it is in (the job's total steps: finished).
    step: u32,
    /// Packets it must receive in the current step.
    expected: u32,
    /// It computes (a `ComputeDone` event is pending).
    computing: bool,
    /// The current step's sends are posted.
    sent: bool,
    /// Packets received for the current step and the ones after it (senders may be ahead).
    received: VecDeque<u32>,
    /// Messages posted and not yet all in the source queue: `(destination, packets left)`.
    outbox: VecDeque<(EndpointId, u32)>,
    /// When the current step's messages were posted (their packets' creation time).
    posted: u64,
    /// Number within the step of the next packet to leave the outbox.
    next_index: u32,
    /// Transfers of several packets partly received: `(source rank, step)` to packets
    /// received so far. Looked up only, never iterated, so its order cannot matter.
    partial: HashMap<(u32, u32), u32>,
}

/// Packets a rank keeps in its endpoint's source queue; the rest wait in its outbox.
const QUEUED: u32 = 2;

impl AppRank {
    /// Packets posted that have not reached the source queue.
    fn unsent(&self) -> u32 {
        self.outbox.iter().map(|m| m.1).sum()
    }
}

fn job_stats(st: &mut PartitionStats, job: u32) -> &mut JobStats {
    if st.jobs.len() <= job as usize {
        st.jobs.resize_with(job as usize + 1, JobStats::default);
    }
    &mut st.jobs[job as usize]
}

impl RouterState {
    /// The ranks of the router's endpoints, from the workload's mapping: one per endpoint
    /// that runs a rank.
    pub(super) fn place_ranks(&mut self, sh: &Shared) {
        let Some(w) = &sh.workload else { return };
        for (i, nic) in self.nics.iter_mut().enumerate() {
            if let Some((job, rank)) = w.rank_at(nic.endpoint) {
                nic.app = self.apps.len() as u32;
                self.apps.push(AppRank {
                    job,
                    rank,
                    nic: i as u16,
                    step: 0,
                    expected: 0,
                    computing: false,
                    sent: false,
                    received: VecDeque::new(),
                    outbox: VecDeque::new(),
                    posted: 0,
                    next_index: 0,
                    partial: HashMap::new(),
                });
            }
        }
    }

    /// Every rank of the router enters its first step.
    pub(super) fn start_ranks(&mut self, sh: &Shared, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
        for a in 0..self.apps.len() {
            self.enter_step(sh, a, ctx, st);
            self.advance(sh, a, ctx, st);
        }
    }

    /// Rank `a` begins its current step: it learns how many packets to expect and, in an
    /// exchange, posts its sends. At the end of its program it records its finish.
    fn enter_step(&mut self, sh: &Shared, a: usize, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
        let w = sh.workload.as_deref().expect("ranks run only with a workload");
        let app = &mut self.apps[a];
        let job = &w.jobs[app.job as usize];
        if app.step as u64 >= job.total_steps() {
            let (rank, t) = (app.rank, ctx.now());
            job_stats(st, app.job).finished.push((rank, t));
            st.period.finished_ranks += 1;
            return;
        }
        let (iteration, step) = job.split_step(app.step);
        let mut messages = std::mem::take(&mut self.messages);
        messages.clear();
        job.program.receives(app.rank, iteration, step, &mut messages);
        app.expected = messages.iter().map(|m| w.packets(m.1)).sum();
        app.sent = false;
        self.messages = messages;
        if job.program.order() == Order::SendFirst {
            self.post_sends(sh, w, a, ctx, st);
        }
    }

    /// Rank `a` posts the messages of its current step: they wait in its outbox, from which
    /// its endpoint's source queue takes packets as it sends them ([`Self::feed_rank`]).
    fn post_sends(
        &mut self,
        sh: &Shared,
        w: &Workload,
        a: usize,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let app = &mut self.apps[a];
        app.sent = true;
        let (job_index, nic_index) = (app.job, app.nic);
        let job = &w.jobs[job_index as usize];
        let (iteration, step) = job.split_step(app.step);
        let mut messages = std::mem::take(&mut self.messages);
        messages.clear();
        job.program.sends(app.rank, iteration, step, &mut messages);
        let mut packets = 0u64;
        for &(peer, bytes) in &messages {
            let count = w.packets(bytes);
            app.outbox.push_back((job.endpoints[peer as usize], count));
            packets += count as u64;
        }
        app.posted = t;
        app.next_index = 0;
        self.messages = messages;
        let size = sh.params.packet_size as u64;
        st.generated_total += packets;
        st.period.generated_packets += packets;
        st.period.generated_phits += packets * size;
        if Self::in_measurement(sh, t) {
            self.nics[nic_index as usize].generated_phits += packets * size;
            st.measured.generated_packets += packets;
            st.measured.generated_phits += packets * size;
        }
        job_stats(st, job_index).packets_sent += packets;
        let was_idle = self.nics[nic_index as usize].source_queue.is_empty();
        self.feed_rank(sh, nic_index);
        if was_idle && packets > 0 {
            // The rank's own code is running: an emptied queue must not call back into it
            // (`on_sends_left`); the caller looks at the queue after posting.
            self.posting = true;
            self.try_inject(sh, nic_index, ctx, st);
            self.posting = false;
        }
    }

    /// Moves the next packets of the rank at endpoint `nic` from its outbox into the
    /// source queue, keeping [`QUEUED`] there: a rank that posts a large step holds one
    /// record per message, not one per packet, until its endpoint sends them.
    pub(super) fn feed_rank(&mut self, sh: &Shared, nic: u16) {
        let a = self.nics[nic as usize].app;
        if a == NIL {
            return;
        }
        let w = sh.workload.as_deref().expect("ranks run only with a workload");
        let app = &mut self.apps[a as usize];
        let job = &w.jobs[app.job as usize];
        let src = self.nics[nic as usize].endpoint;
        while self.nics[nic as usize].source_queue.len < QUEUED {
            let Some(front) = app.outbox.front_mut() else { break };
            let dst = front.0;
            front.1 -= 1;
            if front.1 == 0 {
                app.outbox.pop_front();
            }
            let mut packet = Packet::new(
                src,
                Workload::tag(job, app.step, app.next_index),
                dst,
                sh.params.packet_size,
                app.posted,
            );
            packet.id |= WORKLOAD_PACKET;
            app.next_index += 1;
            let slot = store_in(&mut self.slab, &mut self.free_slots, Held { packet, ready: 0, next: NIL });
            self.nics[nic as usize].source_queue.push_back(slot, &mut self.slab);
        }
    }

    /// Rank `a` moves on as far as it can: a step is done once its receives are in and its
    /// own packets have left the endpoint; then, at the end of an iteration, it computes.
    fn advance(&mut self, sh: &Shared, a: usize, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
        let w = sh.workload.as_deref().expect("ranks run only with a workload");
        loop {
            let app = &self.apps[a];
            let job = &w.jobs[app.job as usize];
            if app.computing || app.step as u64 >= job.total_steps() {
                return;
            }
            if app.received.front().copied().unwrap_or(0) < app.expected {
                return;
            }
            if !app.sent {
                // A pipeline step forwards once its receives are in.
                self.post_sends(sh, w, a, ctx, st);
            }
            let app = &self.apps[a];
            if !self.nics[app.nic as usize].source_queue.is_empty() {
                // Its sends must leave too; the endpoint calls back when they have.
                return;
            }
            let app = &mut self.apps[a];
            let (_, step) = job.split_step(app.step);
            if step + 1 == job.program.steps_per_iteration() && job.compute > 0 {
                app.computing = true;
                let nic = app.nic;
                ctx.schedule_self(job.compute, SelfEvent::ComputeDone { nic });
                return;
            }
            self.next_step(sh, a, ctx, st);
        }
    }

    /// Rank `a` finished its step (and its computation, if the step ended an iteration).
    fn next_step(&mut self, sh: &Shared, a: usize, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
        let w = sh.workload.as_deref().expect("ranks run only with a workload");
        let app = &mut self.apps[a];
        let job = &w.jobs[app.job as usize];
        let (iteration, step) = job.split_step(app.step);
        if step + 1 == job.program.steps_per_iteration() {
            let t = ctx.now();
            let s = job_stats(st, app.job);
            let n = job.iterations as usize;
            if s.iteration_end_max.len() < n {
                s.iteration_end_max.resize(n, 0);
                s.iteration_end_sum.resize(n, 0);
                s.iteration_ranks.resize(n, 0);
            }
            s.iteration_ranks[iteration as usize] += 1;
            s.iteration_end_max[iteration as usize] = s.iteration_end_max[iteration as usize].max(t);
            s.iteration_end_sum[iteration as usize] += t;
        }
        // The step's count leaves the front: the next step's (early arrivals included) is there.
        app.received.pop_front();
        app.step += 1;
        self.enter_step(sh, a, ctx, st);
    }

    /// The computation of the rank at endpoint `nic` ends.
    pub(super) fn on_compute_done(
        &mut self,
        sh: &Shared,
        nic: u16,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let a = self.nics[nic as usize].app as usize;
        self.apps[a].computing = false;
        self.next_step(sh, a, ctx, st);
        self.advance(sh, a, ctx, st);
    }

    /// The rank at endpoint `nic` receives workload packet `packet` at `t`.
    pub(super) fn on_rank_receive(
        &mut self,
        sh: &Shared,
        nic: u16,
        packet: &Packet,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let w = sh.workload.as_deref().expect("workload packets exist only with a workload");
        let t = ctx.now();
        let a = self.nics[nic as usize].app as usize;
        let app = &mut self.apps[a];
        let job = &w.jobs[app.job as usize];
        let step = Workload::step_of_tag(job, packet.id as u32);
        let (src_job, src_rank) = w.rank_at(packet.src()).expect("a workload packet comes from a rank");
        assert!(
            src_job == app.job && step >= app.step,
            "rank {} of job {} got a packet of job {src_job} for step {step} in step {}",
            app.rank,
            app.job,
            app.step
        );
        let ahead = (step - app.step) as usize;
        if app.received.len() <= ahead {
            app.received.resize(ahead + 1, 0);
        }
        app.received[ahead] += 1;
        // The transfer from this source in this step is complete when its last packet is in.
        let (iteration, s) = job.split_step(step);
        let mut messages = std::mem::take(&mut self.messages);
        messages.clear();
        let due =
            job.program.packets_between(src_rank, app.rank, iteration, s, &mut messages, |b| w.packets(b));
        self.messages = messages;
        let whole = if due == 1 {
            true
        } else {
            let got = app.partial.entry((src_rank, step)).or_insert(0);
            *got += 1;
            if *got == due {
                app.partial.remove(&(src_rank, step));
                true
            } else {
                false
            }
        };
        let stats = job_stats(st, app.job);
        stats.packets_received += 1;
        if whole {
            stats.messages += 1;
            stats.message_latency.record(t - packet.created as u64);
        }
        if ahead == 0 {
            self.advance(sh, a, ctx, st);
        }
    }

    /// The source queue of endpoint `nic` emptied: its rank may be done with its step.
    #[inline]
    pub(super) fn on_sends_left(
        &mut self,
        sh: &Shared,
        nic: u16,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let a = self.nics[nic as usize].app;
        if a != NIL && !self.posting {
            self.advance(sh, a as usize, ctx, st);
        }
    }

    /// Packets the ranks posted that have not reached their source queues.
    pub(super) fn outbox_packets(&self) -> u64 {
        self.apps.iter().map(|a| a.unsent() as u64).sum()
    }

    /// The ranks that have not finished, with what they wait for.
    pub(super) fn stalled_ranks(&self, sh: &Shared) -> Vec<StalledRank> {
        let Some(w) = &sh.workload else { return Vec::new() };
        self.apps
            .iter()
            .filter(|app| (app.step as u64) < w.jobs[app.job as usize].total_steps())
            .map(|app| StalledRank {
                job: app.job,
                rank: app.rank,
                step: app.step,
                received: app.received.front().copied().unwrap_or(0),
                expected: app.expected,
                unsent: self.nics[app.nic as usize].source_queue.len + app.unsent(),
                computing: app.computing,
            })
            .collect()
    }
}
