//! The `training` kind: training steps of a transformer, as Megatron-LM runs them on
//! tensor, pipeline and data parallelism, generated from the model's shape.
//!
//! Sources: D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
//! Clusters Using Megatron-LM", SC'21 (the FLOPs of a layer, the 1F1B pipeline schedule,
//! the rank layout); M. Shoeybi et al., "Megatron-LM", arXiv:1909.08053 (the tensor
//! parallel layer's two all-reduces forward and two backward); Megatron-LM's
//! `distributed/` (gradient buckets reduced as the backward pass fills them).
//!
//! - **Ranks.** `tensor x pipeline x data` ranks; rank `r` is tensor rank `r mod t`, data
//!   rank `(r / t) mod d`, pipeline stage `r / (t d)` (Megatron's default order, tensor
//!   innermost). Each stage holds `layers / pipeline` layers.
//! - **Compute.** A layer's forward pass is `8 b s h^2 + 4 b s^2 h` FLOPs of attention and
//!   `4 b s h f` of MLP for a micro-batch of `b` sequences of `s` tokens, hidden size `h`
//!   and MLP size `f` (`4 h` unless given), split over the tensor ranks; the backward pass
//!   twice that; the last stage adds the logits, `2 b s h v` forward. A GPU does
//!   `gpu_tflops x efficiency` of them.
//! - **Tensor parallelism.** Per layer and micro-batch, an all-reduce of `b s h` values
//!   after attention and after the MLP forward, and two backward, in the compute's order.
//! - **Pipeline parallelism.** 1F1B: stage `p` runs `min(pipeline - p - 1, m)` forward
//!   passes, then alternates forward and backward, then drains the backward passes, for
//!   `m = global_batch / (micro_batch x data)` micro-batches. Activations (`b s h` values,
//!   whole on every tensor rank) go forward and gradients back as NCCL's grouped sends and
//!   receives, paired as Megatron pairs them (`send_forward_recv_backward`,
//!   `send_backward_recv_forward`).
//! - **Data parallelism.** The gradients are all-reduced over the data ranks in buckets of
//!   `bucket_params` parameters, in the backward pass's order; a bucket goes once the last
//!   micro-batch's backward pass has filled it, on its own stream, overlapped with the rest
//!   of the backward pass. A layer has `4 h^2 + 2 h f + f + 9 h` parameters (`12 h^2 +
//!   13 h` for `f = 4 h`), the first stage also the embedding's `v h`, all split over the
//!   tensor ranks.
//! - **Collectives** are NCCL's, as its tuning model chooses them (`schedule::nccl`).
//!
//! Not modelled yet: sequence and expert parallelism, ZeRO's sharding, activation
//! recomputation, the embedding's and loss's own communication, the optimizer's time
//! (give it as `compute`).

use super::{parse_as, CalcUnit, JobContext, JobOps, KindError, KindParams, WorkloadEntry};
use base::settings::Setting;
use schedule::nccl::p2p::{emit_nccl_group, P2p, P2pSettings};
use schedule::nccl::{emit_nccl, tuning, Algorithm, NcclKind, NcclSettings, Protocol};
use schedule::{Comm, OpId, Repeated, Schedule, ScheduleBuilder};
use serde::Deserialize;
use std::sync::Arc;

/// `training` in the workload registry.
pub(super) const TRAINING: WorkloadEntry = WorkloadEntry {
    name: "training",
    doc: "training steps of a transformer as Megatron-LM runs them: tensor, pipeline (1F1B) and data parallelism, each layer's computation from its FLOPs, NCCL's collectives",
    settings: &[
        Setting { key: "layers", default: "required", doc: "transformer layers; a multiple of pipeline" },
        Setting { key: "hidden", default: "required", doc: "hidden size h" },
        Setting { key: "heads", default: "required", doc: "attention heads; divide hidden, a multiple of tensor" },
        Setting { key: "ffn_hidden", default: "4 hidden", doc: "the MLP's hidden size f" },
        Setting { key: "sequence", default: "required", doc: "tokens per sequence s" },
        Setting { key: "vocabulary", default: "required", doc: "vocabulary size v" },
        Setting { key: "micro_batch", default: "1", doc: "sequences per micro-batch b" },
        Setting { key: "global_batch", default: "required", doc: "sequences per step; a multiple of micro_batch x data" },
        Setting { key: "tensor", default: "1", doc: "tensor-parallel ranks" },
        Setting { key: "pipeline", default: "1", doc: "pipeline stages" },
        Setting { key: "data", default: "1", doc: "data-parallel ranks; the job has tensor x pipeline x data ranks" },
        Setting { key: "gpu_tflops", default: "989", doc: "a GPU's peak, TFLOP/s (989: an H100 SXM's dense BF16)" },
        Setting { key: "efficiency", default: "0.5", doc: "the share of the peak the layers reach, (0, 1]" },
        Setting { key: "bucket_params", default: "40000000", doc: "parameters per gradient bucket of the data-parallel all-reduce" },
        Setting { key: "bytes_per_value", default: "2", doc: "bytes of an activation or gradient value (BF16)" },
        Setting { key: "channels", default: "2", doc: "NCCL's channels" },
    ],
    files: &[],
    parse: parse_as::<Training>,
};

/// The settings of `training`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Training {
    layers: u32,
    hidden: u64,
    heads: u32,
    ffn_hidden: Option<u64>,
    sequence: u64,
    vocabulary: u64,
    #[serde(default = "one")]
    micro_batch: u64,
    global_batch: u64,
    #[serde(default = "one_u32")]
    tensor: u32,
    #[serde(default = "one_u32")]
    pipeline: u32,
    #[serde(default = "one_u32")]
    data: u32,
    #[serde(default = "h100")]
    gpu_tflops: f64,
    #[serde(default = "half")]
    efficiency: f64,
    #[serde(default = "bucket")]
    bucket_params: u64,
    #[serde(default = "two")]
    bytes_per_value: u64,
    channels: Option<u32>,
}

fn one() -> u64 {
    1
}
fn one_u32() -> u32 {
    1
}
fn h100() -> f64 {
    989.0
}
fn half() -> f64 {
    0.5
}
fn bucket() -> u64 {
    40_000_000
}
fn two() -> u64 {
    2
}

/// The step's shape, checked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub(crate) layers: u64,
    pub(crate) h: u64,
    pub(crate) f: u64,
    pub(crate) s: u64,
    pub(crate) v: u64,
    pub(crate) b: u64,
    /// Micro-batches per step.
    pub(crate) m: u64,
    pub(crate) tp: u32,
    pub(crate) pp: u32,
    pub(crate) dp: u32,
    /// FLOPs per ns a GPU reaches.
    pub(crate) flops_per_ns: f64,
    pub(crate) bucket: u64,
    pub(crate) bytes: u64,
}

impl Training {
    fn shape(&self) -> Result<Shape, KindError> {
        let positive = [
            ("layers", u64::from(self.layers)),
            ("hidden", self.hidden),
            ("heads", u64::from(self.heads)),
            ("sequence", self.sequence),
            ("vocabulary", self.vocabulary),
            ("micro_batch", self.micro_batch),
            ("global_batch", self.global_batch),
            ("tensor", u64::from(self.tensor)),
            ("pipeline", u64::from(self.pipeline)),
            ("data", u64::from(self.data)),
            ("bucket_params", self.bucket_params),
            ("bytes_per_value", self.bytes_per_value),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(KindError::new(key, "must be at least 1, got 0"));
        }
        if !self.layers.is_multiple_of(self.pipeline) {
            return Err(KindError::new(
                "layers",
                format!("must be a multiple of pipeline ({}), got {}", self.pipeline, self.layers),
            ));
        }
        if !self.hidden.is_multiple_of(u64::from(self.heads)) {
            return Err(KindError::new(
                "heads",
                format!("must divide hidden ({}), got {}", self.hidden, self.heads),
            ));
        }
        if !self.heads.is_multiple_of(self.tensor) {
            return Err(KindError::new(
                "tensor",
                format!("must divide heads ({}), got {}", self.heads, self.tensor),
            ));
        }
        let per_step = self.micro_batch * u64::from(self.data);
        if !self.global_batch.is_multiple_of(per_step) {
            return Err(KindError::new(
                "global_batch",
                format!("must be a multiple of micro_batch x data ({per_step}), got {}", self.global_batch),
            ));
        }
        if !(self.gpu_tflops > 0.0 && self.gpu_tflops.is_finite()) {
            return Err(KindError::new("gpu_tflops", format!("must be > 0, got {}", self.gpu_tflops)));
        }
        if !(self.efficiency > 0.0 && self.efficiency <= 1.0) {
            return Err(KindError::new("efficiency", format!("must be in (0, 1], got {}", self.efficiency)));
        }
        if let Some(c) = self.channels.filter(|c| !(1..=schedule::nccl::MAX_CHANNELS).contains(c)) {
            return Err(KindError::new(
                "channels",
                format!("must be 1 to {}, got {c}", schedule::nccl::MAX_CHANNELS),
            ));
        }
        let ranks = u64::from(self.tensor) * u64::from(self.pipeline) * u64::from(self.data);
        if ranks > u64::from(u32::MAX) {
            return Err(KindError::new(
                "data",
                format!("tensor x pipeline x data is {ranks} ranks: too many"),
            ));
        }
        Ok(Shape {
            layers: u64::from(self.layers),
            h: self.hidden,
            f: self.ffn_hidden.unwrap_or(4 * self.hidden),
            s: self.sequence,
            v: self.vocabulary,
            b: self.micro_batch,
            m: self.global_batch / per_step,
            tp: self.tensor,
            pp: self.pipeline,
            dp: self.data,
            flops_per_ns: self.gpu_tflops * 1e3 * self.efficiency,
            bucket: self.bucket_params,
            bytes: self.bytes_per_value,
        })
    }
}

/// Which communicator a collective runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Group {
    Tensor,
    Data,
}

/// One piece of a rank's step.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Work {
    /// Computation, ns.
    Compute(u64),
    /// An all-reduce of `bytes` on the rank's tensor or data group.
    AllReduce(Group, u64),
    /// Grouped sends (`true`) and receives to and from other stages: `(stage, bytes)`.
    P2p(Vec<(u32, u64, bool)>),
}

/// A piece and the pieces it waits for (indices in the rank's list).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Task {
    pub(crate) work: Work,
    pub(crate) after: Vec<usize>,
}

impl Shape {
    pub(crate) fn ranks(&self) -> u32 {
        self.tp * self.pp * self.dp
    }

    /// `(tensor rank, data rank, stage)` of rank `r`.
    pub(crate) fn coords(&self, r: u32) -> (u32, u32, u32) {
        (r % self.tp, (r / self.tp) % self.dp, r / (self.tp * self.dp))
    }

    fn layers_per_stage(&self) -> u64 {
        self.layers / u64::from(self.pp)
    }

    /// FLOPs of a layer's attention and MLP forward for one micro-batch, per tensor rank.
    fn layer_flops(&self) -> (f64, f64) {
        let (b, s, h, f) = (self.b as f64, self.s as f64, self.h as f64, self.f as f64);
        let tp = f64::from(self.tp);
        ((8.0 * b * s * h * h + 4.0 * b * s * s * h) / tp, 4.0 * b * s * h * f / tp)
    }

    fn ns(&self, flops: f64) -> u64 {
        (flops / self.flops_per_ns).round() as u64
    }

    /// Bytes of an activation or its gradient for one micro-batch.
    pub(crate) fn activation_bytes(&self) -> u64 {
        self.b * self.s * self.h * self.bytes
    }

    /// A layer's parameters on one tensor rank.
    pub(crate) fn layer_params(&self) -> u64 {
        let (h, f) = (self.h, self.f);
        (4 * h * h + 2 * h * f + f + 9 * h).div_ceil(u64::from(self.tp))
    }

    /// Rank `r`'s pieces of one step, in the order its compute stream runs them (the
    /// data-parallel all-reduces on their own stream, each after the previous).
    pub(crate) fn tasks(&self, r: u32) -> Vec<Task> {
        let (_, _, p) = self.coords(r);
        let (first, last) = (p == 0, p + 1 == self.pp);
        let mut t: Vec<Task> = Vec::new();
        let push = |t: &mut Vec<Task>, work: Work, after: Vec<usize>| {
            t.push(Task { work, after });
            t.len() - 1
        };
        let act = self.activation_bytes();
        let (attn, mlp) = self.layer_flops();
        let logits = 2.0 * (self.b * self.s * self.h * self.v) as f64 / f64::from(self.tp);
        let tensor = self.tp > 1;
        // The compute stream's last piece.
        let mut tail: Option<usize> = None;
        let chain = |t: &mut Vec<Task>, tail: &mut Option<usize>, work: Work, extra: Option<usize>| {
            let mut after: Vec<usize> = tail.iter().copied().collect();
            after.extend(extra);
            let i = push(t, work, after);
            *tail = Some(i);
            i
        };
        let forward = |t: &mut Vec<Task>, tail: &mut Option<usize>| {
            for _ in 0..self.layers_per_stage() {
                for flops in [attn, mlp] {
                    chain(t, tail, Work::Compute(self.ns(flops)), None);
                    if tensor {
                        chain(t, tail, Work::AllReduce(Group::Tensor, act), None);
                    }
                }
            }
            if last {
                chain(t, tail, Work::Compute(self.ns(logits)), None);
            }
        };
        // The backward pass; with `grads`, the layer's last compute piece per layer (the
        // stage's last layer first).
        let backward = |t: &mut Vec<Task>, tail: &mut Option<usize>, grads: &mut Vec<usize>| {
            if last {
                chain(t, tail, Work::Compute(self.ns(2.0 * logits)), None);
            }
            for _ in 0..self.layers_per_stage() {
                for (k, flops) in [mlp, attn].into_iter().enumerate() {
                    let c = chain(t, tail, Work::Compute(self.ns(2.0 * flops)), None);
                    if k == 1 {
                        // The layer's gradients are complete with its attention's.
                        grads.push(c);
                    }
                    if tensor {
                        chain(t, tail, Work::AllReduce(Group::Tensor, act), None);
                    }
                }
            }
        };
        let m = self.m;
        let warm = u64::from(self.pp - p - 1).min(m);
        let (prev, next) = (p.wrapping_sub(1), p + 1);
        let mut grads = Vec::new();
        let mut scratch = Vec::new();
        // Warm-up: forward passes only.
        for _ in 0..warm {
            if !first {
                chain(&mut t, &mut tail, Work::P2p(vec![(prev, act, false)]), None);
            }
            forward(&mut t, &mut tail);
            if !last {
                chain(&mut t, &mut tail, Work::P2p(vec![(next, act, true)]), None);
            }
        }
        let steady = m - warm;
        if steady > 0 && !first {
            chain(&mut t, &mut tail, Work::P2p(vec![(prev, act, false)]), None);
        }
        for i in 0..steady {
            forward(&mut t, &mut tail);
            if !last {
                chain(&mut t, &mut tail, Work::P2p(vec![(next, act, true), (next, act, false)]), None);
            }
            let out = if i + 1 == steady && warm == 0 { &mut grads } else { &mut scratch };
            backward(&mut t, &mut tail, out);
            if !first {
                if i + 1 == steady {
                    chain(&mut t, &mut tail, Work::P2p(vec![(prev, act, true)]), None);
                } else {
                    chain(&mut t, &mut tail, Work::P2p(vec![(prev, act, true), (prev, act, false)]), None);
                }
            }
        }
        // Cool-down: the remaining backward passes.
        for i in 0..warm {
            if !last {
                chain(&mut t, &mut tail, Work::P2p(vec![(next, act, false)]), None);
            }
            let out = if i + 1 == warm { &mut grads } else { &mut scratch };
            backward(&mut t, &mut tail, out);
            if !first {
                chain(&mut t, &mut tail, Work::P2p(vec![(prev, act, true)]), None);
            }
        }
        // Data parallelism: buckets filled as the last backward pass goes, in its order.
        if self.dp > 1 {
            let mut stream: Option<usize> = None;
            let mut filled = 0u64;
            let n = grads.len();
            for (k, &g) in grads.iter().enumerate() {
                filled += self.layer_params();
                if first && k + 1 == n {
                    filled += (self.v * self.h).div_ceil(u64::from(self.tp));
                }
                if filled >= self.bucket || k + 1 == n {
                    let mut after = vec![g];
                    after.extend(stream);
                    stream = Some(push(&mut t, Work::AllReduce(Group::Data, filled * self.bytes), after));
                    filled = 0;
                }
            }
            if let Some(s) = stream {
                // The step ends once the gradients are reduced.
                chain(&mut t, &mut tail, Work::Compute(0), Some(s));
            }
        }
        t
    }
}

impl KindParams for Training {
    fn ops(&self, job: &JobContext) -> Result<JobOps, KindError> {
        let shape = self.shape()?;
        let template = emit_step(&shape, job, self.channels.unwrap_or(2));
        let graph = Repeated::new(vec![template], job.iterations)
            .map_err(|e| KindError::new("iterations", format!("the steps cannot be repeated: {e}")))?;
        Ok(JobOps {
            graph: Arc::new(graph),
            steps_per_iteration: 1,
            unit: CalcUnit::Nanoseconds,
            phases: None,
        })
    }

    /// The ops of one rank per stage, emitted alone, for every rank of its stage (they
    /// all run the same pieces), times the iterations' share of a repeated graph (one).
    fn ops_estimate(&self, job: &JobContext) -> u64 {
        let Ok(shape) = self.shape() else { return 0 };
        let channels = self.channels.unwrap_or(2);
        (0..shape.pp)
            .map(|p| {
                let mut b = ScheduleBuilder::new();
                b.add_rank();
                emit_rank(&mut b, &shape, job, channels, p * shape.tp * shape.dp);
                u64::from(b.ops_in_rank()) * u64::from(shape.tp * shape.dp)
            })
            .sum()
    }
}

/// One step of every rank, as ops.
fn emit_step(shape: &Shape, job: &JobContext, channels: u32) -> Schedule {
    let mut b = ScheduleBuilder::new();
    for r in 0..shape.ranks() {
        b.add_rank();
        emit_rank(&mut b, shape, job, channels, r);
    }
    b.build()
}

/// Rank `r`'s step, into the builder's current rank.
fn emit_rank(b: &mut ScheduleBuilder, shape: &Shape, job: &JobContext, channels: u32, r: u32) {
    let (tp, dp, pp) = (shape.tp, shape.dp, shape.pp);
    let tensor_groups = pp * dp;
    let data_groups = pp * tp;
    let (t, d, p) = shape.coords(r);
    let base = p * tp * dp;
    let tensor = Comm { id: 1 + p * dp + d, ranks: (0..tp).map(|k| base + d * tp + k).collect() };
    let data =
        Comm { id: 1 + tensor_groups + p * tp + t, ranks: (0..dp).map(|k| base + k * tp + t).collect() };
    let pipe = Comm {
        id: 1 + tensor_groups + data_groups + d * tp + t,
        ranks: (0..pp).map(|k| k * tp * dp + d * tp + t).collect(),
    };
    let (mut tensor_tag, mut data_tag) = (0u32, 0u32);
    let tasks = shape.tasks(r);
    let mut ends: Vec<Option<OpId>> = Vec::with_capacity(tasks.len());
    for task in &tasks {
        let deps: Vec<OpId> = task.after.iter().filter_map(|&i| ends[i]).collect();
        let after = match deps[..] {
            [] => None,
            [one] => Some(one),
            _ => {
                let join = b.calc(0);
                for &d in &deps {
                    b.requires(join, d);
                }
                Some(join)
            }
        };
        let end = match &task.work {
            Work::Compute(ns) => {
                let op = b.calc(*ns);
                if let Some(a) = after {
                    b.requires(op, a);
                }
                Some(op)
            }
            Work::AllReduce(group, bytes) => {
                let (comm, tag) = match group {
                    Group::Tensor => (&tensor, &mut tensor_tag),
                    Group::Data => (&data, &mut data_tag),
                };
                let me = comm.ranks.iter().position(|&x| x == r).expect("a member");
                let e = tuning::choose(
                    NcclKind::AllReduce,
                    *bytes,
                    comm.size().max(2),
                    job.link_gbs(),
                    channels,
                    &[Algorithm::Ring, Algorithm::Tree],
                    &[Protocol::Ll, Protocol::Ll128, Protocol::Simple],
                )
                .expect("all-reduce has its ring");
                let c = tuning::channels_for(e.algorithm, e.protocol, *bytes, comm.size(), channels);
                let settings = NcclSettings::new(e.algorithm, e.protocol, c);
                let op = emit_nccl(
                    b,
                    NcclKind::AllReduce,
                    *bytes,
                    0,
                    &settings,
                    comm,
                    me,
                    *tag & 0xff_ffff,
                    after,
                );
                *tag += 1;
                op.or(after)
            }
            Work::P2p(ops) => {
                let ops: Vec<P2p> = ops
                    .iter()
                    .map(|&(stage, bytes, send)| P2p { peer: stage as usize, bytes, send })
                    .collect();
                // NCCL matches a pair's messages in order, untagged: one tag for all.
                emit_nccl_group(b, &ops, &P2pSettings::new(channels), &pipe, p as usize, 0, after).or(after)
            }
        };
        ends.push(end);
    }
    let last = b.calc(job.compute * job.ps_per_cycle / 1000);
    for e in ends.iter().flatten() {
        b.requires(last, *e);
    }
}

#[cfg(test)]
mod tests;
