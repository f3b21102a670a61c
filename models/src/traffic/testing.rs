//! Networks and checks the patterns' tests share.

use super::{Pattern, PatternParams};
use topology::{dragonfly, hyperx, Network};

/// A HyperX of `sides` with `t` endpoints per switch.
pub(super) fn hyperx(sides: Vec<u32>, t: u32) -> Network {
    hyperx::build(&hyperx::HyperXParams {
        sides,
        endpoints_per_switch: t,
        terminal_latency: 1,
        link_latency: 1,
    })
    .unwrap()
}

/// A Dragonfly of 9 groups of 4 switches with 2 endpoints each.
pub(super) fn small_dragonfly() -> Network {
    let params = dragonfly::DragonflyParams {
        p: 2,
        a: 4,
        h: 2,
        groups: None,
        arrangement: Default::default(),
        terminal_latency: 1,
        local_latency: 1,
        global_latency: 1,
    };
    dragonfly::build(&params).unwrap()
}

/// The fixed map `params` build on `net`.
pub(super) fn map(params: &dyn PatternParams, net: &Network) -> Vec<u32> {
    match params.build(net, 9).unwrap() {
        Pattern::Map(m) => m,
        other => panic!("expected a fixed map, got {other:?}"),
    }
}

/// Every endpoint is the destination of exactly one.
pub(super) fn is_permutation(m: &[u32]) -> bool {
    let mut seen = m.to_vec();
    seen.sort_unstable();
    seen.iter().enumerate().all(|(i, &d)| d == i as u32)
}
