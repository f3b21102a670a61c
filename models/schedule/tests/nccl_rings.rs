//! NCCL's rings across GPU nodes (`ring_order`): each channel a permutation of the
//! communicator, every hop between nodes on one rail (two GPUs of one local index), as the
//! `crossNic = 2` rings of NCCL 2.30's topology search.

use xnet_schedule::nccl::ring_order;

/// The local index of rank `r` on nodes of `g` GPUs.
fn local(r: u32, g: u32) -> u32 {
    r % g
}

#[test]
fn rings_cross_nodes_on_one_rail_per_hop() {
    for (nodes, g) in [(2u32, 8u32), (4, 8), (3, 8), (5, 4), (2, 2), (4, 3)] {
        let ranks: Vec<u32> = (0..nodes * g).collect();
        for channel in 0..2 * g {
            let order = ring_order(&ranks, g, channel).expect("several nodes of several GPUs");
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, ranks, "channel {channel}: a permutation");
            let mut crossings = 0;
            for i in 0..order.len() {
                let (a, b) = (order[i], order[(i + 1) % order.len()]);
                if a / g != b / g {
                    crossings += 1;
                    let wrap = i + 1 == order.len();
                    // The hop back to the first node crosses rails when the node count is odd;
                    // with an odd number of GPUs the last channel has no pair, and NCCL's
                    // ring would leave by PXN, which is not modelled: its hops cross rails.
                    let unpaired = g % 2 == 1 && channel % g == g - 1;
                    let exempt = unpaired || (wrap && nodes % 2 == 1);
                    if !exempt {
                        assert_eq!(
                            local(a, g),
                            local(b, g),
                            "{nodes}x{g}, channel {channel}: {a} -> {b} changes rail"
                        );
                    }
                } else {
                    assert_eq!(a / g, b / g);
                }
            }
            assert_eq!(crossings, nodes, "{nodes}x{g}, channel {channel}: each node entered once");
            // Channel c enters node 0 at GPU c mod g.
            assert_eq!(local(order[0], g), channel % g);
        }
    }
}

#[test]
fn the_rings_of_nccl_s_dgx_graph() {
    // Two nodes of 8: channel 0 goes 0 7 6 5 4 3 2 1 on the first node, leaves by GPU 1's
    // NIC, and the second node takes the paired channel 1: 1 2 ... 7 0.
    let ranks: Vec<u32> = (0..16).collect();
    assert_eq!(ring_order(&ranks, 8, 0).unwrap(), vec![0, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12, 13, 14, 15, 8]);
    assert_eq!(ring_order(&ranks, 8, 1).unwrap(), vec![1, 2, 3, 4, 5, 6, 7, 0, 8, 15, 14, 13, 12, 11, 10, 9]);
    // Channel 8 is search channel 0 again.
    assert_eq!(ring_order(&ranks, 8, 8), ring_order(&ranks, 8, 0));
}

#[test]
fn one_node_or_one_gpu_per_node_keeps_the_communicator_s_order() {
    assert_eq!(ring_order(&(0..8).collect::<Vec<_>>(), 8, 3), None);
    // A data-parallel group: GPU 2 of four nodes.
    assert_eq!(ring_order(&[2, 10, 18, 26], 8, 0), None);
    assert_eq!(ring_order(&(0..16).collect::<Vec<_>>(), 1, 0), None);
}
