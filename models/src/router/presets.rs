//! Router presets: the `[router]` settings that reproduce a peer simulator's router as far
//! as xnet's model allows, each value with the source it comes from. A preset fills the
//! keys a config does not set; the network's own figures (VCs, buffer sizes, packet size,
//! link latencies) stay the config's, since the peers require them per experiment.
//!
//! Sources: caminos-lib 0.6.3 (the crate CAMINOS 0.6.3 pins), `src/router/basic.rs` and
//! `src/lib.rs`; BookSim2 at commit 28f43299 (github.com/booksim/booksim2), its `iq`
//! router and `src/examples/dragonflyconfig`. docs/peers.md has the key-by-key survey
//! behind them, with what xnet does not model.
//!
//! The hardware presets (`infiniband_hdr`, `infiniband_ndr`, `slingshot`) set what a
//! switch of that kind has: its MTU and header, its port-to-port latency, its buffers and
//! how its crossbar holds them, in cycles of 0.64 ns (a 16-byte phit at 200 Gb/s; a
//! 32-byte one at 400 Gb/s for NDR: set `workload.bytes_per_phit` to match). The cables'
//! latencies are the topology's (about 7.8 cycles a metre at 5 ns/m) and the congestion
//! control's settings `[congestion]`'s: docs/congestion.md lists both for each preset.
//! Vendors publish neither buffer sizes nor crossbar speedups: those values are estimates
//! (the credit loop with a margin), said so in each key's doc.

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
    Preset {
        name: "infiniband_hdr",
        doc: "an InfiniBand HDR switch (NVIDIA Quantum QM8700: 40 ports of 200 Gb/s, 8 data VLs, cut-through) in cycles of 0.64 ns and 16-byte phits; set vcs (up to 8 VLs) and the cables' latencies (docs/congestion.md)",
        settings: &[
            Setting {
                key: "packet_size",
                default: "258",
                doc: "a 4,096-byte MTU (the RDMA path MTU on HDR fabrics; NVOS `max-supported-mtu 4096`) and its 26-byte header: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 (IBA Vol. 1, ch. 5 and 9)",
            },
            Setting { key: "header_phits", default: "2", doc: "the 26-byte header: a full packet carries 4,096 bytes" },
            Setting {
                key: "router_delay",
                default: "203",
                doc: "about 130 ns port to port (the QM8700 product brief's \"sub-130 ns\") at 0.64 ns a cycle",
            },
            Setting {
                key: "credit_check",
                default: "\"crossbar\"",
                doc: "a packet leaves its input buffer only with the downstream VL's credits, the output stage a few 64-byte blocks (Mellanox's InfiniBand flit model, OMNeT++): heads block at the input, where congestion trees form",
            },
            Setting { key: "crossbar", default: "\"port\"", doc: "an input-buffered crossbar, one transfer per port at a time (Santos, Turner and Janakiraman, Globecom'02: input buffering is typical of InfiniBand)" },
            Setting { key: "speedup", default: "2", doc: "not published; 2 (an estimate)" },
            Setting {
                key: "input_buffer",
                default: "2048",
                doc: "32 KB per VL (an estimate: vendors publish none); it covers the credit loop (2 x 3 m + the switch + a packet: 509 phits) four times. The one vendor figure found, 64 KB a port in Mellanox's QDR-era flit model, scaled by the bandwidth",
            },
            Setting {
                key: "output_buffer",
                default: "1032",
                doc: "4 packets (an estimate): with credit_check = crossbar it holds only packets that already have their downstream credits",
            },
            Setting { key: "injection_vc", default: "\"any\"", doc: "an HCA sends on any VL with credits" },
            Setting { key: "ejection_vc", default: "\"any\"", doc: "any VL with room towards an HCA" },
        ],
    },
    Preset {
        name: "infiniband_ndr",
        doc: "an InfiniBand NDR switch (NVIDIA Quantum-2 QM9700: 64 ports of 400 Gb/s, 8 data VLs) in cycles of 0.64 ns and 32-byte phits (workload.bytes_per_phit = 32); set vcs and the cables' latencies (docs/congestion.md)",
        settings: &[
            Setting { key: "packet_size", default: "129", doc: "the 4,096-byte MTU and its 26-byte header in 32-byte phits (NVOS `mtu 4096`; IBA Vol. 1)" },
            Setting { key: "header_phits", default: "1", doc: "the 26-byte header" },
            Setting {
                key: "router_delay",
                default: "203",
                doc: "about 130 ns (NVIDIA publishes no Quantum-2 figure; third-party claims run from under 150 ns to 330 ns): the HDR switch's, an estimate",
            },
            Setting { key: "credit_check", default: "\"crossbar\"", doc: "as the HDR switch" },
            Setting { key: "crossbar", default: "\"port\"", doc: "as the HDR switch" },
            Setting { key: "speedup", default: "2", doc: "not published; 2 (an estimate)" },
            Setting { key: "input_buffer", default: "2048", doc: "64 KB per VL (an estimate), the credit loop (380 phits over 3 m) five times" },
            Setting { key: "output_buffer", default: "516", doc: "4 packets (an estimate)" },
            Setting { key: "injection_vc", default: "\"any\"", doc: "an HCA sends on any VL with credits" },
            Setting { key: "ejection_vc", default: "\"any\"", doc: "any VL with room towards an HCA" },
        ],
    },
    Preset {
        name: "slingshot",
        doc: "an HPE Slingshot switch (Rosetta: 64 ports of 200 Gb/s, a tiled hierarchical crossbar, HPC Ethernet with link-level retry) in cycles of 0.64 ns and 16-byte phits; set vcs (what the routing needs) and the cables' latencies (docs/congestion.md)",
        settings: &[
            Setting {
                key: "packet_size",
                default: "132",
                doc: "2,048 bytes of payload and at most 64 bytes of header (HPE's open-source Cassini NIC driver fixes the MTU at 2 KiB)",
            },
            Setting { key: "header_phits", default: "4", doc: "the 64-byte header" },
            Setting {
                key: "router_delay",
                default: "547",
                doc: "about 350 ns port to port (secondary sources on Frontier's fabric; De Sensi et al., SC'20, report Slingshot's switch latency in this range) at 0.64 ns a cycle",
            },
            Setting {
                key: "crossbar",
                default: "\"output_queued\"",
                doc: "Rosetta's crossbar is hierarchical, 32 tiles of 16-input, 8-output crossbars on row buses and column channels, with buffers in between (WikiChip, \"Rosetta\"; the buffered crossbars of Kim, Dally and Abts, ISCA'05 and ISCA'07): it behaves close to output queueing",
            },
            Setting { key: "speedup", default: "2", doc: "not published; 2 (an estimate; with output queueing it decides little)" },
            Setting { key: "credit_check", default: "\"link\"", doc: "packets wait in the column and output buffers for their link's credits" },
            Setting {
                key: "input_buffer",
                default: "2048",
                doc: "32 KB per VC (an estimate): the credit loop over a 2 m cable (711 phits) three times",
            },
            Setting { key: "output_buffer", default: "1056", doc: "8 packets (an estimate: the column buffers' size is not public)" },
            Setting { key: "injection_vc", default: "\"any\"", doc: "the NIC sends on any traffic class with credits" },
            Setting { key: "ejection_vc", default: "\"any\"", doc: "any VC with room towards a NIC" },
        ],
    },
];
