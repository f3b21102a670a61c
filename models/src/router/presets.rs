//! Router presets: the `[router]` settings that reproduce a peer simulator's router as far
//! as xnet's model allows, each value with the source it comes from. A preset fills the
//! keys a config does not set; the network's own figures (VCs, buffer sizes, packet size,
//! link latencies) stay the config's, since the peers require them per experiment.
//!
//! Sources: caminos-lib 0.6.3 (the crate CAMINOS 0.6.3 pins), `src/router/basic.rs` and
//! `src/lib.rs`; BookSim2 at commit 28f43299 (github.com/booksim/booksim2), its `iq`
//! router and `src/examples/dragonflyconfig`. docs/peers.md has the key-by-key survey
//! behind them, with what xnet does not model.

use base::settings::{EntryDoc, Setting};

/// A named set of `[router]` values.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// Name in `router.preset`.
    pub name: &'static str,
    /// What it reproduces.
    pub doc: &'static str,
    /// The values (`default` holds the TOML value) and their sources (`doc`).
    pub settings: &'static [Setting],
}

impl Preset {
    /// As users see it.
    pub fn doc(&self) -> EntryDoc {
        EntryDoc { name: self.name, doc: self.doc, details: Vec::new(), settings: self.settings }
    }
}

/// The presets `router.preset` accepts.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "caminos",
        doc: "CAMINOS 0.6.3's Basic router (the SurePath paper's simulator); set vcs, input_buffer, output_buffer and packet_size as in the CAMINOS config (flit_size = packet size)",
        settings: &[
            Setting {
                key: "router_delay",
                default: "0",
                doc: "`delay` is read and ignored: a head is routed, granted and sent in its arrival cycle (basic.rs:472)",
            },
            Setting {
                key: "crossbar",
                default: "\"vc\"",
                doc: "each (output port, output VC) takes one phit per cycle from its input (port, VC), with no per-port limit (basic.rs:1104-1157)",
            },
            Setting {
                key: "speedup",
                default: "1",
                doc: "one phit per cycle per (port, VC) pair: a packet crosses in packet_size cycles (basic.rs:1111-1157)",
            },
            Setting {
                key: "arbitration",
                default: "\"random\"",
                doc: "requests are shuffled and granted greedily in one pass (basic.rs:1031-1100)",
            },
            Setting {
                key: "reselect",
                default: "true",
                doc: "every head without a granted output is routed again each cycle; candidates without room, or whose output VC the crossbar is feeding from another input, are dropped (EnforceFlowControl) (basic.rs:906-1011, 932-957)",
            },
            Setting {
                key: "injection_vc",
                default: "\"any\"",
                doc: "a server takes the lowest VC with flit_size credits (lib.rs:1162-1175)",
            },
            Setting {
                key: "ejection_vc",
                default: "\"any\"",
                doc: "the Hops policy keeps every VC towards a server; candidates without room are dropped and ties broken at random (policies.rs:467-481, 514-518)",
            },
            Setting {
                key: "source_queue",
                default: "20",
                doc: "server_queue_size defaults to 20 messages; generations beyond it are counted as missed (lib.rs:778, 1084-1106)",
            },
        ],
    },
    Preset {
        name: "booksim",
        doc: "BookSim2's iq router as its Dragonfly example configures it (separable input-first allocators, 1 iteration, internal speedup 2); BookSim is flit-level wormhole, xnet packet-level cut-through, and BookSim's output queues are unbounded (bounded only by the downstream credits they hold): give a deep output_buffer (docs/peers.md)",
        settings: &[
            Setting {
                key: "router_delay",
                default: "3",
                doc: "routing_delay 0 (lookahead) + vc_alloc_delay 1 + sw_alloc_delay 1 + st_final_delay 1 (examples/dragonflyconfig:46-49)",
            },
            Setting {
                key: "speedup",
                default: "2",
                doc: "internal_speedup = 2.0 runs the router's step twice per cycle (examples/dragonflyconfig:53, router.cpp:105-112)",
            },
            Setting {
                key: "crossbar",
                default: "\"port\"",
                doc: "input_speedup = output_speedup = 1: one crossbar input and output per physical port (examples/dragonflyconfig:51-52, iq_router.cpp:121-124)",
            },
            Setting {
                key: "credit_check",
                default: "\"crossbar\"",
                doc: "switch allocation requires a credit of the downstream VC (iq_router.cpp:1375-1377), spent as the flit crosses (iq_router.cpp:1122): the output queue is inside the credit loop, and UGAL's GetUsedCredit counts it (iq_router.cpp:2288-2293)",
            },
            Setting {
                key: "allocator",
                default: "\"input_first\"",
                doc: "separable_input_first VC and switch allocators (examples/dragonflyconfig:41-42)",
            },
            Setting {
                key: "allocator_iterations",
                default: "1",
                doc: "alloc_iters 1; the separable allocators make one pass whatever it says (examples/dragonflyconfig:43, separable_input_first.cpp:49-103)",
            },
            Setting {
                key: "arbitration",
                default: "\"round_robin\"",
                doc: "arb_type round_robin (booksim_config.cpp:150)",
            },
            Setting {
                key: "reselect",
                default: "false",
                doc: "a route is computed once per router; a head that loses allocation asks again with the same routes (iq_router.cpp:904-921)",
            },
            Setting {
                key: "injection_vc",
                default: "\"any\"",
                doc: "the Dragonfly routings inject on a random VC (dragonfly.cpp:415-418); xnet's nearest choice takes the lowest VC with credits",
            },
            Setting {
                key: "ejection_vc",
                default: "\"any\"",
                doc: "ejection goes through the output port's single, unbounded output queue, whatever the VC (iq_router.cpp:161-162); xnet's output buffers are per VC, and any VC with room is the nearest",
            },
            Setting {
                key: "source_queue",
                default: "0",
                doc: "unbounded, time-stamped source queues (trafficmanager.cpp:922-951)",
            },
        ],
    },
];
