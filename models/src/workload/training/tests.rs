//! The generator's pieces against Megatron's formulas, and its checks.

use super::step::{Coll, Group, Task, Work};
use super::*;

fn training(tp: u32, pp: u32, dp: u32, m: u64) -> Training {
    Training {
        layers: 8,
        hidden: 1024,
        heads: 16,
        ffn_hidden: None,
        sequence: 512,
        vocabulary: 32_000,
        micro_batch: 2,
        global_batch: 2 * u64::from(dp) * m,
        tensor: tp,
        pipeline: pp,
        data: dp,
        gpu_tflops: 100.0,
        efficiency: 0.5,
        bucket_params: 5_000_000,
        bytes_per_value: 2,
        channels: None,
        sequence_parallel: false,
        experts: 0,
        top_k: 2,
        expert_parallel: 1,
        moe_every: 1,
        distributed_optimizer: false,
    }
}

fn shape(tp: u32, pp: u32, dp: u32, m: u64) -> Shape {
    training(tp, pp, dp, m).shape().unwrap()
}

/// Bytes a rank's pieces move, per group and collective, and sent and received.
#[derive(Debug, Default, PartialEq)]
struct Volume {
    tensor_all_reduce: u64,
    tensor_gather: u64,
    tensor_scatter: u64,
    data_all_reduce: u64,
    data_scatter: u64,
    data_gather: u64,
    expert_blocks: u64,
    expert_data: u64,
    sent: u64,
    received: u64,
}

fn volume(tasks: &[Task]) -> Volume {
    let mut v = Volume::default();
    for t in tasks {
        match &t.work {
            Work::Collective(Group::Tensor, Coll::AllReduce, b) => v.tensor_all_reduce += b,
            Work::Collective(Group::Tensor, Coll::AllGather, b) => v.tensor_gather += b,
            Work::Collective(Group::Tensor, Coll::ReduceScatter, b) => v.tensor_scatter += b,
            Work::Collective(Group::Data, Coll::AllReduce, b) => v.data_all_reduce += b,
            Work::Collective(Group::Data, Coll::ReduceScatter, b) => v.data_scatter += b,
            Work::Collective(Group::Data, Coll::AllGather, b) => v.data_gather += b,
            Work::Collective(Group::Expert, Coll::AllToAll, b) => v.expert_blocks += b,
            Work::Collective(Group::ExpertData, _, b) => v.expert_data += b,
            Work::Collective(g, c, _) => panic!("{g:?} {c:?}"),
            Work::P2p(ops) => {
                for &(_, b, send) in ops {
                    if send {
                        v.sent += b
                    } else {
                        v.received += b
                    }
                }
            }
            Work::Compute(_) => {}
        }
    }
    v
}

const H: u64 = 1024;
const ACT: u64 = 2 * 512 * H * 2; // b s h values of 2 bytes

#[test]
fn a_rank_moves_what_megatron_s_formulas_say() {
    let (tp, pp, dp, m) = (4, 4, 2, 8);
    let s = shape(tp, pp, dp, m);
    // A layer: 12 h^2 + 13 h parameters (f = 4h), split over the tensor ranks.
    assert_eq!(s.layer_params(0), ((12 * H * H + 13 * H).div_ceil(4), 0));
    for r in 0..s.ranks() {
        let (_, _, p) = s.coords(r);
        let v = volume(&s.tasks(r));
        // Two all-reduces of b s h values per layer forward, two backward.
        assert_eq!(v.tensor_all_reduce, 4 * 2 * m * ACT, "rank {r}");
        // Activations forward, gradients back, one per micro-batch and neighbour.
        let neighbours = u64::from(p > 0) + u64::from(p < 3);
        assert_eq!((v.sent, v.received), (neighbours * m * ACT, neighbours * m * ACT), "rank {r}");
        // Every gradient once; the first stage's embedding too.
        let embedding = if p == 0 { (32_000 * H).div_ceil(4) } else { 0 };
        assert_eq!(v.data_all_reduce, (2 * s.layer_params(0).0 + embedding) * 2, "rank {r}");
    }
}

#[test]
fn sequence_parallelism_gathers_and_scatters_what_it_would_all_reduce() {
    let mut t = training(4, 2, 1, 4);
    t.sequence_parallel = true;
    let s = t.shape().unwrap();
    for r in 0..s.ranks() {
        let v = volume(&s.tasks(r));
        // Per layer and micro-batch, 2 all-gathers and 2 reduce-scatters forward, as many
        // backward, each of a rank's part b s h / t: an all-reduce's bytes split in two.
        assert_eq!(v.tensor_all_reduce, 0);
        assert_eq!(
            (v.tensor_gather, v.tensor_scatter),
            (4 * 4 * 4 * ACT / 4, 4 * 4 * 4 * ACT / 4),
            "rank {r}"
        );
        // Between stages, the rank's share of the sequence.
        assert_eq!(v.sent, 4 * ACT / 4, "rank {r}");
    }
}

#[test]
fn experts_exchange_their_tokens_by_all_to_all_and_reduce_their_gradients_apart() {
    let mut t = training(1, 1, 8, 2);
    (t.experts, t.top_k, t.expert_parallel, t.moe_every) = (16, 2, 4, 2);
    let s = t.shape().unwrap();
    let v = volume(&s.tasks(0));
    // 4 of the 8 layers have experts: per micro-batch 2 all-to-alls forward and 2 backward,
    // each pair's block b s k h values over the 4 expert ranks.
    let block = 2 * 512 * 2 * H * 2 / 4;
    assert_eq!(v.expert_blocks, 4 * 4 * 2 * block);
    // The experts' gradients go over the 2 data ranks holding the same 4 experts; the
    // rest over all 8; the embedding with the dense ones.
    let experts = 4 * (2 * H * 4 * H + 4 * H + H);
    assert_eq!(v.expert_data, 4 * experts * 2);
    let dense = 4 * (4 * H * H + 8 * H + 16 * H) + 4 * (12 * H * H + 13 * H) + 32_000 * H;
    assert_eq!(v.data_all_reduce, dense * 2);
}

#[test]
fn zero_reduce_scatters_the_gradients_and_gathers_the_parameters() {
    let mut t = training(2, 1, 4, 2);
    t.distributed_optimizer = true;
    let s = t.shape().unwrap();
    let v = volume(&s.tasks(0));
    assert_eq!(v.data_all_reduce, 0);
    // Each bucket's share of a data rank, both ways.
    let grads = (8 * s.layer_params(0).0 + (32_000 * H).div_ceil(2)) * 2;
    assert!(
        v.data_scatter >= grads / 4 && v.data_scatter < grads / 4 + 8,
        "{} vs {}",
        v.data_scatter,
        grads / 4
    );
    assert_eq!(v.data_gather, v.data_scatter);
}

#[test]
fn the_compute_is_three_forward_passes_of_the_layers_flops() {
    let s = shape(2, 2, 1, 4);
    let (b, seq, h, f, v) = (2.0, 512.0, 1024.0, 4096.0, 32_000.0);
    let layer = 8.0 * b * seq * h * h + 4.0 * b * seq * seq * h + 4.0 * b * seq * h * f;
    for (r, logits) in [(0, 0.0), (2, 2.0 * b * seq * h * v)] {
        let ns: u64 = s.tasks(r).iter().map(|t| if let Work::Compute(ns) = t.work { ns } else { 0 }).sum();
        // 4 micro-batches of 4 layers, each 3 forward passes' worth, per tensor rank
        // (rounded per piece).
        let expected = 4.0 * 3.0 * (4.0 * layer + logits) / 2.0 / (100.0 * 1e3 * 0.5);
        assert!((ns as f64 - expected).abs() < 64.0, "rank {r}: {ns} vs {expected}");
    }
}

#[test]
fn one_f_one_b_runs_the_stage_s_warm_up_then_alternates() {
    // Stage p runs min(pp - p, m) forward passes before its first backward pass.
    let s = shape(1, 4, 1, 6);
    for p in 0..4u32 {
        let computes: Vec<u64> = s
            .tasks(p)
            .iter()
            .filter_map(|t| if let Work::Compute(ns) = t.work { Some(ns) } else { None })
            .collect();
        // The first backward piece: the logits' on the last stage, else an MLP's.
        let first = if p == 3 { s.ns(2.0 * s.logits_flops()) } else { s.ns(2.0 * s.layer_flops().1) };
        let per_pass = 2 * 2 + usize::from(p == 3); // 2 layers x (attention, MLP), + logits
        let forwards = computes.iter().position(|&ns| ns == first).unwrap() / per_pass;
        assert_eq!(forwards as u64, u64::from(4 - p).min(6), "stage {p}");
    }
}

#[test]
fn bad_shapes_are_refused_naming_the_key() {
    let mut t = training(1, 4, 1, 2);
    t.layers = 6;
    assert_eq!(t.shape().unwrap_err().key, "layers");
    t.layers = 8;
    t.tensor = 3;
    assert_eq!(t.shape().unwrap_err().key, "tensor");
    t.tensor = 2;
    t.data = 3;
    assert_eq!(t.shape().unwrap_err().key, "global_batch");
    t.data = 1;
    t.efficiency = 1.5;
    assert_eq!(t.shape().unwrap_err().key, "efficiency");
    t.efficiency = 0.5;
    t.experts = 8;
    assert_eq!(t.shape().unwrap_err().key, "experts", "experts need tensor 1");
    t.tensor = 1;
    t.expert_parallel = 3;
    assert_eq!(t.shape().unwrap_err().key, "expert_parallel");
    t.expert_parallel = 1;
    t.top_k = 9;
    assert_eq!(t.shape().unwrap_err().key, "top_k");
    t.top_k = 2;
    t.heads = 0;
    assert_eq!(t.shape().unwrap_err().key, "heads");
}
