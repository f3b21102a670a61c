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
//! - **Sequence parallelism** (Korthikanti et al., "Reducing Activation Recomputation in
//!   Large Transformer Models", MLSys'23): each tensor all-reduce becomes an all-gather
//!   before the block and a reduce-scatter after it (forward and backward), and the
//!   activations between stages are split over the tensor ranks.
//! - **Experts** (mixture of experts, Megatron-LM's MoE layers): with `experts`, every
//!   `moe_every`-th layer's MLP is `experts` experts, each token going to `top_k`, spread
//!   over `expert_parallel` data ranks; tokens go to their experts and come back by
//!   all-to-all (forward and backward, routing taken as uniform); the experts' gradients
//!   are reduced over the data ranks that hold the same experts.
//! - **ZeRO** (`distributed_optimizer`, Rajbhandari et al., SC'20; Megatron's distributed
//!   optimizer): gradients are reduce-scattered instead of all-reduced, and the updated
//!   parameters all-gathered after the step.
//! - **Collectives** are NCCL's, as its tuning model chooses them (`schedule::nccl`).
//!
//! `step.rs` lists a rank's pieces of a step; `emit.rs` turns them into ops, `chakra.rs`
//! into Chakra execution traces. Not modelled
//! yet: experts with tensor parallelism, activation recomputation, the embedding's and
//! loss's own communication, the optimizer's time (give it as `compute`).

mod chakra;
mod emit;
mod step;

use super::{parse_as, CalcUnit, JobContext, JobOps, KindError, KindParams, WorkloadEntry};
use base::settings::Setting;
use emit::{emit_rank, emit_step};
use schedule::{Repeated, ScheduleBuilder};
use serde::Deserialize;
use std::sync::Arc;

/// `training` in the workload registry.
pub(super) const TRAINING: WorkloadEntry = WorkloadEntry {
    name: "training",
    doc: "training steps of a transformer as Megatron-LM runs them: tensor (with sequence), pipeline (1F1B), data and expert parallelism, ZeRO, each layer's computation from its FLOPs, NCCL's collectives",
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
        Setting { key: "sequence_parallel", default: "false", doc: "Megatron's sequence parallelism: all-gathers and reduce-scatters instead of the tensor all-reduces; activations between stages split over the tensor ranks" },
        Setting { key: "experts", default: "0", doc: "experts of a mixture-of-experts MLP (0: dense); with tensor = 1" },
        Setting { key: "top_k", default: "2", doc: "experts each token goes to" },
        Setting { key: "expert_parallel", default: "1", doc: "data ranks the experts are spread over; divides data and experts" },
        Setting { key: "moe_every", default: "1", doc: "every moe_every-th layer is a mixture of experts" },
        Setting { key: "distributed_optimizer", default: "false", doc: "ZeRO: gradients reduce-scattered over the data ranks, parameters all-gathered after the step" },
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
    #[serde(default)]
    sequence_parallel: bool,
    #[serde(default)]
    experts: u32,
    #[serde(default = "two_u32")]
    top_k: u32,
    #[serde(default = "one_u32")]
    expert_parallel: u32,
    #[serde(default = "one_u32")]
    moe_every: u32,
    #[serde(default)]
    distributed_optimizer: bool,
}

fn two_u32() -> u32 {
    2
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
    /// Sequence parallelism.
    pub(crate) sp: bool,
    /// Experts per MoE layer (0: dense), each token's experts, the data ranks they are
    /// spread over, and which layers have them (every `moe_every`-th).
    pub(crate) experts: u64,
    pub(crate) top_k: u64,
    pub(crate) ep: u32,
    pub(crate) moe_every: u64,
    /// ZeRO's sharded gradients and parameters.
    pub(crate) zero: bool,
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
        if self.sequence_parallel && !self.sequence.is_multiple_of(u64::from(self.tensor)) {
            return Err(KindError::new(
                "sequence",
                format!(
                    "must be a multiple of tensor ({}) with sequence_parallel, got {}",
                    self.tensor, self.sequence
                ),
            ));
        }
        if self.experts > 0 {
            if self.tensor != 1 {
                return Err(KindError::new(
                    "experts",
                    "experts need tensor = 1 here (expert tensor parallelism is not modelled)",
                ));
            }
            if self.expert_parallel == 0 || !self.data.is_multiple_of(self.expert_parallel) {
                return Err(KindError::new(
                    "expert_parallel",
                    format!("must divide data ({}), got {}", self.data, self.expert_parallel),
                ));
            }
            if !self.experts.is_multiple_of(self.expert_parallel) {
                return Err(KindError::new(
                    "expert_parallel",
                    format!("must divide experts ({}), got {}", self.experts, self.expert_parallel),
                ));
            }
            if self.top_k == 0 || self.top_k > self.experts {
                return Err(KindError::new(
                    "top_k",
                    format!("must be 1 to experts ({}), got {}", self.experts, self.top_k),
                ));
            }
            if self.moe_every == 0 {
                return Err(KindError::new("moe_every", "must be at least 1, got 0"));
            }
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
            sp: self.sequence_parallel && self.tensor > 1,
            experts: u64::from(self.experts),
            top_k: u64::from(self.top_k),
            ep: if self.experts > 0 { self.expert_parallel } else { 1 },
            moe_every: u64::from(self.moe_every),
            zero: self.distributed_optimizer,
        })
    }
}

impl Shape {
    pub(crate) fn ranks(&self) -> u32 {
        self.tp * self.pp * self.dp
    }

    /// `(tensor rank, data rank, stage)` of rank `r`.
    pub(crate) fn coords(&self, r: u32) -> (u32, u32, u32) {
        (r % self.tp, (r / self.tp) % self.dp, r / (self.tp * self.dp))
    }

    /// FLOPs of a layer's attention and MLP forward for one micro-batch, per tensor rank.
    pub(crate) fn layer_flops(&self) -> (f64, f64) {
        let (b, s, h, f) = (self.b as f64, self.s as f64, self.h as f64, self.f as f64);
        let tp = f64::from(self.tp);
        ((8.0 * b * s * h * h + 4.0 * b * s * s * h) / tp, 4.0 * b * s * h * f / tp)
    }

    /// FLOPs of an MoE layer's experts forward on one rank for one micro-batch: its share
    /// of the `top_k` copies of every token of the expert ranks' micro-batches (the
    /// micro-batch's own count, routing taken as uniform).
    pub(crate) fn expert_flops(&self) -> f64 {
        4.0 * (self.b * self.s * self.top_k) as f64 * self.h as f64 * self.f as f64
    }

    /// FLOPs of the logits forward for one micro-batch, per tensor rank.
    pub(crate) fn logits_flops(&self) -> f64 {
        2.0 * (self.b * self.s * self.h * self.v) as f64 / f64::from(self.tp)
    }

    /// Nanoseconds a GPU takes for `flops`.
    pub(crate) fn ns(&self, flops: f64) -> u64 {
        (flops / self.flops_per_ns).round() as u64
    }
}

impl KindParams for Training {
    fn ops(&self, job: &JobContext) -> Result<JobOps, KindError> {
        let shape = self.shape()?;
        let step = emit_step(&shape, job, self.channels.unwrap_or(2));
        let graph = Repeated::new(vec![step.schedule], job.iterations)
            .map_err(|e| KindError::new("iterations", format!("the steps cannot be repeated: {e}")))?;
        Ok(JobOps {
            graph: Arc::new(graph),
            steps_per_iteration: 1,
            unit: CalcUnit::Nanoseconds,
            phases: Some(Arc::new(step.phases)),
            compute: Some(step.compute.into()),
        })
    }

    fn chakra(&self, job: &JobContext) -> Option<Result<schedule::chakra::ChakraTraces, KindError>> {
        if job.iterations != 1 {
            return Some(Err(KindError::new(
                "iterations",
                "a Chakra trace is one step: export the job with iterations = 1",
            )));
        }
        Some(self.shape().map(|shape| chakra::chakra_step(&shape)))
    }

    /// NCCL's steps wait for each other, so a rank has a few messages posted at a time:
    /// configs/training-gpt-16k.toml (about 153 M ops) peaked at 10.0 GiB, 69 bytes an op
    /// with its graph, and configs/training-gpt13b-nodes.toml at 1.38 GiB.
    fn run_bytes_per_op(&self) -> u64 {
        30
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
                emit_rank(&mut b, &shape, job, channels, p * shape.tp * shape.dp, None);
                u64::from(b.ops_in_rank()) * u64::from(shape.tp * shape.dp)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests;
