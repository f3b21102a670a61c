//! A rank's pieces of a training step: computations, collectives and pipeline messages,
//! with what each waits for, in the order the rank's compute stream runs them (the
//! data-parallel reductions on a stream of their own).

use super::Shape;

/// Which communicator a collective runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Group {
    /// The rank's tensor-parallel ranks.
    Tensor,
    /// Its data-parallel ranks.
    Data,
    /// The data ranks its MoE layers' experts are spread over.
    Expert,
    /// The data ranks that hold the same experts.
    ExpertData,
}

/// A collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coll {
    /// Of the whole buffer.
    AllReduce,
    /// Of each rank's part.
    AllGather,
    /// To each rank's part.
    ReduceScatter,
    /// Of a block per pair of ranks.
    AllToAll,
}

impl Group {
    /// Its place among a rank's communicators (`emit::groups`: the pipeline's is 4).
    pub(crate) fn index(self) -> usize {
        match self {
            Group::Tensor => 0,
            Group::Data => 1,
            Group::Expert => 2,
            Group::ExpertData => 3,
        }
    }

    /// Its name in results.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Group::Tensor => "tensor",
            Group::Data => "data",
            Group::Expert => "expert",
            Group::ExpertData => "expert-data",
        }
    }
}

impl Coll {
    /// MPI's collective of the same name; [`Work::Collective`]'s bytes are what it counts
    /// (the buffer, each rank's part, each pair's block).
    pub(crate) fn kind(self) -> schedule::collectives::Kind {
        use schedule::collectives::Kind;
        match self {
            Coll::AllReduce => Kind::Allreduce,
            Coll::AllGather => Kind::Allgather,
            Coll::ReduceScatter => Kind::ReduceScatter,
            Coll::AllToAll => Kind::Alltoall,
        }
    }
}

/// One piece of a rank's step.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Work {
    /// Computation, ns.
    Compute(u64),
    /// A collective on one of the rank's groups: bytes of the buffer (all-reduce), of each
    /// rank's part (all-gather, reduce-scatter) or of each pair's block (all-to-all).
    Collective(Group, Coll, u64),
    /// Grouped sends (`true`) and receives to and from other stages: `(stage, bytes)`.
    P2p(Vec<(u32, u64, bool)>),
}

/// A piece and the pieces it waits for (indices in the rank's list).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Task {
    pub(crate) work: Work,
    pub(crate) after: Vec<usize>,
}

/// A rank's list as it is built: the compute stream's last piece is `tail`.
struct Builder {
    tasks: Vec<Task>,
    tail: Option<usize>,
}

impl Builder {
    /// `work` after the compute stream's last piece (and `extra`); it becomes the last.
    fn chain(&mut self, work: Work, extra: Option<usize>) -> usize {
        let mut after: Vec<usize> = self.tail.iter().copied().collect();
        after.extend(extra);
        self.tasks.push(Task { work, after });
        self.tail = Some(self.tasks.len() - 1);
        self.tasks.len() - 1
    }

    /// `work` after `after` only: on a stream of its own.
    fn aside(&mut self, work: Work, after: Vec<usize>) -> usize {
        self.tasks.push(Task { work, after });
        self.tasks.len() - 1
    }
}

/// The gradients a layer's backward pass completes: `(piece, dense parameters, expert
/// parameters)`.
type Grads = Vec<(usize, u64, u64)>;

impl Shape {
    /// Whether global layer `layer` is a mixture of experts.
    pub(crate) fn is_moe(&self, layer: u64) -> bool {
        self.experts > 0 && layer % self.moe_every == self.moe_every - 1
    }

    /// Bytes of an activation or its gradient that a tensor rank holds for one
    /// micro-batch: whole, or its share of the sequence with sequence parallelism.
    pub(crate) fn activation_bytes(&self) -> u64 {
        let whole = self.b * self.s * self.h * self.bytes;
        if self.sp {
            whole / u64::from(self.tp)
        } else {
            whole
        }
    }

    /// Bytes of each pair's block of an MoE all-to-all: the micro-batch's tokens, `top_k`
    /// copies, spread evenly over the expert ranks.
    pub(crate) fn dispatch_bytes(&self) -> u64 {
        (self.b * self.s * self.top_k * self.h * self.bytes).div_ceil(u64::from(self.ep))
    }

    /// A layer's parameters on one tensor rank: `(dense, experts)`; a dense layer's MLP is
    /// dense, an MoE layer's experts are the rank's `experts / expert_parallel`.
    pub(crate) fn layer_params(&self, layer: u64) -> (u64, u64) {
        let (h, f, tp) = (self.h, self.f, u64::from(self.tp));
        let attention = 4 * h * h + 8 * h;
        let mlp = 2 * h * f + f + h;
        if self.is_moe(layer) {
            let router = h * self.experts;
            ((attention + router).div_ceil(tp), mlp * (self.experts / u64::from(self.ep)))
        } else {
            ((attention + mlp).div_ceil(tp), 0)
        }
    }

    /// A tensor-parallel block's communication around its computation `flops`: an
    /// all-reduce after it, or with sequence parallelism an all-gather before and a
    /// reduce-scatter after; returns the computation's piece.
    fn block(&self, t: &mut Builder, flops: f64) -> usize {
        let whole = self.b * self.s * self.h * self.bytes;
        let part = whole / u64::from(self.tp);
        if self.tp > 1 && self.sp {
            t.chain(Work::Collective(Group::Tensor, Coll::AllGather, part), None);
        }
        let c = t.chain(Work::Compute(self.ns(flops)), None);
        if self.tp > 1 {
            if self.sp {
                t.chain(Work::Collective(Group::Tensor, Coll::ReduceScatter, part), None);
            } else {
                t.chain(Work::Collective(Group::Tensor, Coll::AllReduce, whole), None);
            }
        }
        c
    }

    /// An MoE layer's experts: tokens to their experts, the experts' MLP `flops`, tokens
    /// back; returns the computation's piece.
    fn experts_block(&self, t: &mut Builder, flops: f64) -> usize {
        let block = self.dispatch_bytes();
        t.chain(Work::Collective(Group::Expert, Coll::AllToAll, block), None);
        let c = t.chain(Work::Compute(self.ns(flops)), None);
        t.chain(Work::Collective(Group::Expert, Coll::AllToAll, block), None);
        c
    }

    /// The forward pass of one micro-batch through stage `p`'s layers.
    fn forward(&self, t: &mut Builder, p: u32) {
        let (attn, mlp) = self.layer_flops();
        let experts = self.expert_flops();
        for layer in self.stage_layers(p) {
            self.block(t, attn);
            if self.is_moe(layer) {
                self.experts_block(t, experts);
            } else {
                self.block(t, mlp);
            }
        }
        if p + 1 == self.pp {
            t.chain(Work::Compute(self.ns(self.logits_flops())), None);
        }
    }

    /// The backward pass of one micro-batch through stage `p`'s layers (last first): the
    /// pieces that complete each layer's gradients go to `grads`.
    fn backward(&self, t: &mut Builder, p: u32, grads: &mut Grads) {
        let (attn, mlp) = self.layer_flops();
        let experts = self.expert_flops();
        if p + 1 == self.pp {
            t.chain(Work::Compute(self.ns(2.0 * self.logits_flops())), None);
        }
        for layer in self.stage_layers(p).rev() {
            if self.is_moe(layer) {
                self.experts_block(t, 2.0 * experts);
            } else {
                self.block(t, 2.0 * mlp);
            }
            let c = self.block(t, 2.0 * attn);
            let (dense, expert) = self.layer_params(layer);
            grads.push((c, dense, expert));
        }
    }

    /// Stage `p`'s global layers.
    fn stage_layers(&self, p: u32) -> std::ops::Range<u64> {
        let per = self.layers / u64::from(self.pp);
        u64::from(p) * per..u64::from(p + 1) * per
    }

    /// Rank `r`'s pieces of one step, in the order its compute stream runs them (the
    /// data-parallel reductions on their own stream, each after the previous).
    pub(crate) fn tasks(&self, r: u32) -> Vec<Task> {
        let (_, _, p) = self.coords(r);
        let (first, last) = (p == 0, p + 1 == self.pp);
        let mut t = Builder { tasks: Vec::new(), tail: None };
        let act = self.activation_bytes();
        let m = self.m;
        let warm = u64::from(self.pp - p - 1).min(m);
        let (prev, next) = (p.wrapping_sub(1), p + 1);
        let (mut grads, mut scratch): (Grads, Grads) = (Vec::new(), Vec::new());
        // Warm-up: forward passes only.
        for _ in 0..warm {
            if !first {
                t.chain(Work::P2p(vec![(prev, act, false)]), None);
            }
            self.forward(&mut t, p);
            if !last {
                t.chain(Work::P2p(vec![(next, act, true)]), None);
            }
        }
        let steady = m - warm;
        if steady > 0 && !first {
            t.chain(Work::P2p(vec![(prev, act, false)]), None);
        }
        for i in 0..steady {
            self.forward(&mut t, p);
            if !last {
                t.chain(Work::P2p(vec![(next, act, true), (next, act, false)]), None);
            }
            let out = if i + 1 == steady && warm == 0 { &mut grads } else { &mut scratch };
            self.backward(&mut t, p, out);
            if !first {
                if i + 1 == steady {
                    t.chain(Work::P2p(vec![(prev, act, true)]), None);
                } else {
                    t.chain(Work::P2p(vec![(prev, act, true), (prev, act, false)]), None);
                }
            }
        }
        // Cool-down: the remaining backward passes.
        for i in 0..warm {
            if !last {
                t.chain(Work::P2p(vec![(next, act, false)]), None);
            }
            let out = if i + 1 == warm { &mut grads } else { &mut scratch };
            self.backward(&mut t, p, out);
            if !first {
                t.chain(Work::P2p(vec![(prev, act, true)]), None);
            }
        }
        if first {
            if let Some(g) = grads.last_mut() {
                g.1 += (self.v * self.h).div_ceil(u64::from(self.tp));
            }
        }
        self.reduce_gradients(&mut t, &grads);
        t.tasks
    }

    /// Data parallelism: the gradients in buckets as the last backward pass fills them,
    /// each reduced once full (the dense ones over the data ranks, the experts' over the
    /// ranks holding the same experts), one after the other on their own stream; with
    /// ZeRO, reduce-scattered, and the parameters all-gathered after the step.
    fn reduce_gradients(&self, t: &mut Builder, grads: &Grads) {
        let groups = [(Group::Data, self.dp), (Group::ExpertData, self.dp / self.ep)];
        let mut stream: Option<usize> = None;
        let mut gathers: Vec<(Group, u64)> = Vec::new();
        for (g, (group, ranks)) in groups.into_iter().enumerate() {
            if ranks < 2 {
                continue;
            }
            let mut filled = 0u64;
            for (k, item) in grads.iter().enumerate() {
                filled += if g == 0 { item.1 } else { item.2 };
                if filled > 0 && (filled >= self.bucket || k + 1 == grads.len()) {
                    let bytes = filled * self.bytes;
                    let work = if self.zero {
                        let part = bytes.div_ceil(u64::from(ranks));
                        gathers.push((group, part));
                        Work::Collective(group, Coll::ReduceScatter, part)
                    } else {
                        Work::Collective(group, Coll::AllReduce, bytes)
                    };
                    let mut after = vec![item.0];
                    after.extend(stream);
                    stream = Some(t.aside(work, after));
                    filled = 0;
                }
            }
        }
        let Some(reduced) = stream else { return };
        // The step ends once the gradients are reduced (and, with ZeRO, the updated
        // parameters gathered back).
        let mut end = t.chain(Work::Compute(0), Some(reduced));
        for (group, part) in gathers {
            end = t.chain(Work::Collective(group, Coll::AllGather, part), Some(end));
        }
    }
}
