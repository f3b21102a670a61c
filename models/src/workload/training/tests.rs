//! The generator's pieces against Megatron's formulas, and its checks.

use super::*;

fn shape(tp: u32, pp: u32, dp: u32, m: u64) -> Shape {
    let t = Training {
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
    };
    t.shape().unwrap()
}

/// Bytes a rank's pieces move: (tensor all-reduces, data all-reduces, sent, received).
fn volume(tasks: &[Task]) -> (u64, u64, u64, u64) {
    let mut v = (0, 0, 0, 0);
    for t in tasks {
        match &t.work {
            Work::AllReduce(Group::Tensor, b) => v.0 += b,
            Work::AllReduce(Group::Data, b) => v.1 += b,
            Work::P2p(ops) => {
                for &(_, b, send) in ops {
                    if send {
                        v.2 += b
                    } else {
                        v.3 += b
                    }
                }
            }
            Work::Compute(_) => {}
        }
    }
    v
}

#[test]
fn a_rank_moves_what_megatron_s_formulas_say() {
    let (tp, pp, dp, m) = (4, 4, 2, 8);
    let s = shape(tp, pp, dp, m);
    let (h, seq, b, layers, bytes) = (1024u64, 512u64, 2u64, 8u64, 2u64);
    let act = b * seq * h * bytes;
    // A layer: 12 h^2 + 13 h parameters (f = 4h), split over the tensor ranks.
    assert_eq!(s.layer_params(), (12 * h * h + 13 * h).div_ceil(4));
    for r in 0..s.ranks() {
        let (_, _, p) = s.coords(r);
        let (tensor, data, sent, received) = volume(&s.tasks(r));
        // Two all-reduces of b s h values per layer forward, two backward.
        assert_eq!(tensor, 4 * (layers / 4) * m * act, "rank {r}");
        // Activations forward, gradients back, one per micro-batch and neighbour.
        let neighbours = u64::from(p > 0) + u64::from(p < 3);
        assert_eq!((sent, received), (neighbours * m * act, neighbours * m * act), "rank {r}");
        // Every gradient once; the first stage's embedding too.
        let embedding = if p == 0 { (32_000 * h).div_ceil(4) } else { 0 };
        assert_eq!(data, ((layers / 4) * s.layer_params() + embedding) * bytes, "rank {r}");
    }
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
    let logits = 2.0 * (2.0 * 512.0 * 1024.0 * 32_000.0);
    for p in 0..4u32 {
        let computes: Vec<u64> = s
            .tasks(p)
            .iter()
            .filter_map(|t| if let Work::Compute(ns) = t.work { Some(ns) } else { None })
            .collect();
        // The first backward piece: the logits' on the last stage, else an MLP's.
        let first = if p == 3 { s.ns(2.0 * logits) } else { s.ns(2.0 * s.layer_flops().1) };
        let per_pass = 2 * 2 + usize::from(p == 3); // 2 layers x (attention, MLP), + logits
        let forwards = computes.iter().position(|&ns| ns == first).unwrap() / per_pass;
        assert_eq!(forwards as u64, u64::from(4 - p).min(6), "stage {p}");
    }
}

#[test]
fn bad_shapes_are_refused_naming_the_key() {
    let mut t = Training {
        layers: 6,
        hidden: 1024,
        heads: 16,
        ffn_hidden: None,
        sequence: 512,
        vocabulary: 32_000,
        micro_batch: 1,
        global_batch: 8,
        tensor: 1,
        pipeline: 4,
        data: 1,
        gpu_tflops: 989.0,
        efficiency: 0.5,
        bucket_params: 1,
        bytes_per_value: 2,
        channels: None,
    };
    assert_eq!(t.shape().unwrap_err().key, "layers");
    t.layers = 8;
    t.tensor = 3;
    assert_eq!(t.shape().unwrap_err().key, "tensor");
    t.tensor = 2;
    t.data = 3;
    assert_eq!(t.shape().unwrap_err().key, "global_batch");
    t.data = 2;
    t.efficiency = 1.5;
    assert_eq!(t.shape().unwrap_err().key, "efficiency");
    t.efficiency = 0.5;
    t.heads = 0;
    assert_eq!(t.shape().unwrap_err().key, "heads");
}
