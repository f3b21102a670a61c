//! The Chakra reader on traces written by ASTRA-sim's and Chakra's own tools
//! (tests/data/chakra/README.md), on hand-built protobuf bytes, and on mutated files; traces
//! turned into schedules that complete.
//!
//! The fixtures' numbers were checked against Google's protobuf library (Python protobuf
//! 7.36.2, with the `et_def_pb2.py` generated from `et_def.proto` that STAGE ships) reading
//! the same files: node counts, ids, types, dependencies, durations, attributes and each
//! message's byte offset (the offset of its length prefix).

use std::path::Path;

use proptest::prelude::*;
use xnet_schedule::chakra::{
    parse_comm_groups, read_rank, schedule_of_chakra, schedule_of_chakra_with, ChakraCollective, ChakraError,
    ChakraOptions, ChakraRank, CollectiveKind, NodeType, ProcessGroup, POINT_TO_POINT_COMM,
};
use xnet_schedule::{emit, run_ideal, select, Collective, Comm, Op, OpId, Schedule, ScheduleBuilder};

fn data(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chakra").join(name)).unwrap()
}

/// Ranks `0..n` of the fixture `dir/NAME.R.et`.
fn fixture(dir: &str, name: &str, n: u32) -> Vec<ChakraRank> {
    (0..n)
        .map(|r| {
            let file = format!("{dir}/{name}.{r}.et");
            read_rank(&data(&file), &file, r).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

/// MPICH's algorithm for each collective, its sizes as `ChakraCollective::mpi` reads them.
fn mpich(
    b: &mut ScheduleBuilder,
    c: &ChakraCollective,
    comm: &Comm,
    me: usize,
    tag: u32,
    after: Option<OpId>,
) -> Option<OpId> {
    let (kind, bytes) = c.mpi(comm.size());
    let coll = Collective::new(kind, bytes, c.root, select(kind, bytes, comm.size())).unwrap();
    emit(b, &coll, comm, me, tag, after)
}

fn complete(s: &Schedule) -> u64 {
    assert_eq!(s.validate(), Vec::new());
    assert!(s.unmatched().is_empty(), "{:?}", s.unmatched());
    run_ideal(s).unwrap_or_else(|e| panic!("{e}")).time
}

const MICROBENCHMARKS: [(&str, CollectiveKind); 4] = [
    ("all_reduce", CollectiveKind::AllReduce),
    ("all_gather", CollectiveKind::AllGather),
    ("all_to_all", CollectiveKind::AllToAll),
    ("reduce_scatter", CollectiveKind::ReduceScatter),
];

#[test]
fn astra_sim_s_microbenchmarks_read_as_their_generator_wrote_them() {
    // generator_scripts/*.py: GlobalMetadata(version="0.0.4"), then one COMM_COLL_NODE of
    // id = the rank, is_cpu_op false, comm_type and comm_size 1 MiB in int64_val. The
    // metadata is 8 bytes with its length (07 0a 05 "0.0.4"), so the node starts at byte 8.
    for (name, kind) in MICROBENCHMARKS {
        for t in fixture("microbenchmarks", name, 4) {
            assert_eq!(
                (t.version.as_str(), t.schema_version(), &t.schema, t.gzipped),
                ("0.0.4", "0.0.4", &None, false)
            );
            let [node] = &t.nodes[..] else { panic!("{name}: {} nodes", t.nodes.len()) };
            assert_eq!((node.offset, node.id, node.node_type), (8, u64::from(t.rank), NodeType::CommColl));
            assert_eq!(node.name, format!("{name}_4npus_1MB"));
            assert_eq!(node.comm_type.and_then(CollectiveKind::from_number), Some(kind));
            assert_eq!((node.comm_size, node.is_cpu_op, &node.pg_name), (Some(1 << 20), Some(false), &None));
            assert!(node.ctrl_deps.is_empty() && node.data_deps.is_empty() && node.duration_micros == 0);
        }
    }
}

#[test]
fn a_custom_ring_all_reduce_reads_as_protobuf_decodes_it() {
    // MSCCLang's 8-rank ring all-reduce through ASTRA-sim's collectiveapi converter: per rank
    // 35 nodes, ids 0..35, each depending (data_deps) on the one before; 14 sends to the next
    // rank and 14 receives from the one before, 131,072 bytes each, tag 0 (int32_val); 7
    // computations of 7 us. The metadata embeds the MSCCL XML: nodes at bytes 26,717 to 29,486.
    for t in fixture("custom_ring_allreduce_8npus_1MB", "custom_allreduce", 8) {
        let r = t.rank;
        assert_eq!((t.version.as_str(), t.schema_version()), ("", "1.0.2-chakra.0.0.4"));
        assert_eq!(t.nodes.len(), 35);
        assert_eq!((t.nodes[0].offset, t.nodes[34].offset), (26_717, 29_486));
        let count = |ty| t.nodes.iter().filter(|n| n.node_type == ty).count();
        assert_eq!([NodeType::CommSend, NodeType::CommRecv, NodeType::Comp].map(count), [14, 14, 7]);
        for (i, n) in t.nodes.iter().enumerate() {
            assert_eq!(n.id, i as u64);
            assert_eq!(n.data_deps, if i == 0 { vec![] } else { vec![i as u64 - 1] });
            assert!(n.ctrl_deps.is_empty());
            match n.node_type {
                NodeType::CommSend => {
                    assert_eq!((n.comm_dst, n.comm_src, n.comm_tag), (Some((r + 1) % 8), None, Some(0)));
                    // The converter puts the node type's number in comm_type.
                    assert_eq!((n.comm_size, n.comm_type), (Some(131_072), Some(5)));
                }
                NodeType::CommRecv => {
                    assert_eq!((n.comm_src, n.comm_dst, n.comm_tag), (Some((r + 7) % 8), None, Some(0)));
                    assert_eq!((n.comm_size, n.comm_type), (Some(131_072), Some(6)));
                }
                _ => assert_eq!((n.node_type, n.duration_micros, n.duration_ns()), (NodeType::Comp, 7, 7000)),
            }
        }
    }
}

#[test]
fn chakra_s_feeder_test_trace_gunzips_and_reads_whole() {
    let file = "feeder_test/chakra.0.et.gz";
    let t = read_rank(&data(file), file, 0).unwrap_or_else(|e| panic!("{e}"));
    assert!(t.gzipped);
    assert_eq!((t.version.as_str(), t.schema.as_deref()), ("", Some("1.0.1")));
    assert_eq!(t.nodes.len(), 3664);
    let count = |ty| t.nodes.iter().filter(|n| n.node_type == ty).count();
    assert_eq!((count(NodeType::Comp), count(NodeType::CommColl)), (3643, 21));
    // Sums over the nodes, as protobuf's own parser gives them.
    let sum = |f: &dyn Fn(&xnet_schedule::chakra::ChakraNode) -> u64| t.nodes.iter().map(f).sum::<u64>();
    assert_eq!(sum(&|n| n.duration_micros), 381_795);
    assert_eq!(sum(&|n| n.id), 14_089_597);
    assert_eq!(sum(&|n| n.ctrl_deps.len() as u64), 3664);
    assert_eq!(sum(&|n| n.data_deps.len() as u64), 181_878);
    assert_eq!(sum(&|n| u64::from(n.is_cpu_op == Some(true))), 2448);
    assert!(t.nodes.iter().all(|n| n.is_cpu_op.is_some()));
    let offsets: Vec<u64> = t.nodes.iter().take(3).map(|n| n.offset).collect();
    assert_eq!((offsets, t.nodes[3663].offset, t.nodes[3663].id), (vec![95, 6045, 11_998], 2_958_486, 7022));
    let first = &t.nodes[0];
    assert_eq!(
        (first.id, first.duration_micros, first.is_cpu_op, &first.ctrl_deps),
        (216, 318, Some(true), &vec![3])
    );
    assert_eq!(first.name, "aten::flatten_dense_tensors(0)");
    // The seven GPU collectives: (offset, id, comm_type, comm_size); the CPU-side c10d nodes
    // are COMM_COLL_NODEs without attributes.
    let colls: Vec<(u64, u64, i64, u64)> =
        t.nodes.iter().filter_map(|n| Some((n.offset, n.id, n.comm_type?, n.comm_size?))).collect();
    assert_eq!(
        colls,
        [
            (19_346, 435, 5, 212_480),
            (30_195, 622, 5, 424),
            (740_060, 3256, 0, 8_196_000),
            (877_096, 3512, 0, 31_502_336),
            (965_833, 3686, 0, 26_255_360),
            (1_443_048, 4486, 0, 26_550_272),
            (2_122_609, 5700, 0, 9_724_160),
        ]
    );
}

#[test]
fn microbenchmarks_become_the_collective_itself() {
    for (name, kind) in MICROBENCHMARKS {
        let ranks = fixture("microbenchmarks", name, 4);
        let s = schedule_of_chakra(&ranks, &mut mpich).unwrap_or_else(|e| panic!("{e}"));
        assert!(complete(&s) == 0, "{name}: an ideal network moves data in no time");
        // Exactly the collective on communicator 1 (every rank) with tag 0, from the start.
        let mut b = ScheduleBuilder::new();
        for r in 0..4 {
            b.add_rank();
            let c = ChakraCollective { kind, bytes: 1 << 20, root: 0 };
            mpich(&mut b, &c, &Comm::world(1, 4), r, 0, None);
        }
        assert_eq!(s, b.build(), "{name}");
    }
}

#[test]
fn the_custom_ring_all_reduce_replays_on_an_ideal_network() {
    let ranks = fixture("custom_ring_allreduce_8npus_1MB", "custom_allreduce", 8);
    let s = schedule_of_chakra(&ranks, &mut |_, _, _, _, _, _| panic!("no collectives here")).unwrap();
    // Each rank's 7 computations of 7 us wait in turn for the previous rank's data.
    assert_eq!(complete(&s), 49_000);
    for r in 0..8u32 {
        assert_eq!(s.ops_in_rank(r), 35);
        let sends: Vec<Op> = s.ops(r).filter(|o| matches!(o, Op::Send { .. })).collect();
        assert_eq!(
            sends,
            vec![Op::Send { to: (r + 1) % 8, bytes: 131_072, tag: 0, comm: POINT_TO_POINT_COMM }; 14]
        );
        assert_eq!(s.requires_in_rank(r), 34, "a chain");
    }
}

#[test]
fn the_feeder_test_trace_is_refused_naming_the_node() {
    let file = "feeder_test/chakra.0.et.gz";
    let t = vec![read_rank(&data(file), file, 0).unwrap()];
    // PyTorch 1.0.1-era traces give the caller in ctrl_deps: node 216's is node 3, absent.
    let e = schedule_of_chakra(&t, &mut mpich).unwrap_err();
    assert_eq!(
        e.to_string(),
        "feeder_test/chakra.0.et.gz: rank 0: byte 95: COMP_NODE 216 (aten::flatten_dense_tensors(0)) \
         depends on node 3, which rank 0's trace does not have"
    );
    // Following data_deps only (as Chakra's et_feeder), the CPU-side c10d::broadcast_(0) is a
    // COMM_COLL_NODE without comm_type.
    let options = ChakraOptions { ctrl_deps: false, ..ChakraOptions::default() };
    let e = schedule_of_chakra_with(&t, &options, &mut mpich).unwrap_err();
    assert_eq!((e.rank, e.offset), (Some(0), 18_144));
    assert!(e.message.ends_with("432 (c10d::broadcast_(0)) has no comm_type"), "{e}");
}

/// A protobuf message, encoded by hand.
#[derive(Clone, Default)]
struct Msg(Vec<u8>);

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Msg {
    fn key(mut self, field: u64, wire: u64) -> Msg {
        varint(&mut self.0, field << 3 | wire);
        self
    }
    fn int(self, field: u64, v: u64) -> Msg {
        let mut m = self.key(field, 0);
        varint(&mut m.0, v);
        m
    }
    fn bytes(self, field: u64, b: &[u8]) -> Msg {
        let mut m = self.key(field, 2);
        varint(&mut m.0, b.len() as u64);
        m.0.extend_from_slice(b);
        m
    }
    fn str(self, field: u64, s: &str) -> Msg {
        self.bytes(field, s.as_bytes())
    }
    fn msg(self, field: u64, m: Msg) -> Msg {
        self.bytes(field, &m.0)
    }
    fn fixed(self, field: u64, v: u64, len: usize) -> Msg {
        let mut m = self.key(field, if len == 8 { 1 } else { 5 });
        m.0.extend_from_slice(&v.to_le_bytes()[..len]);
        m
    }
    /// An attribute of `name` with value field `field` (a varint).
    fn attr(self, name: &str, field: u64, v: u64) -> Msg {
        self.msg(10, Msg::default().str(1, name).int(field, v))
    }
    fn pg(self, name: &str) -> Msg {
        self.msg(10, Msg::default().str(1, "pg_name").str(29, name))
    }
    fn cat(mut self, more: Msg) -> Msg {
        self.0.extend(more.0);
        self
    }
    fn node(id: u64, ty: u64) -> Msg {
        Msg::default().int(1, id).str(2, &format!("n{id}")).int(3, ty)
    }
}

/// A stream of messages, each with its length.
fn stream<'a>(messages: impl IntoIterator<Item = &'a Msg>) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        varint(&mut out, m.0.len() as u64);
        out.extend_from_slice(&m.0);
    }
    out
}

/// A file: the metadata (version `1.0.0`), then the nodes.
fn file(nodes: &[Msg]) -> Vec<u8> {
    stream(std::iter::once(&Msg::default().str(1, "1.0.0")).chain(nodes))
}

fn read(bytes: &[u8], rank: u32) -> Result<ChakraRank, ChakraError> {
    read_rank(bytes, "t.et", rank)
}

const COLL: u64 = 7;

#[test]
fn integer_attributes_are_read_whatever_member_holds_them() {
    let zigzag = |v: i64| ((v << 1) ^ (v >> 63)) as u64;
    let encodings = [
        Msg::default().attr("comm_size", 9, 1024),          // int64
        Msg::default().attr("comm_size", 13, 1024),         // uint64
        Msg::default().attr("comm_size", 7, 1024),          // int32
        Msg::default().attr("comm_size", 11, 1024),         // uint32
        Msg::default().attr("comm_size", 17, zigzag(1024)), // sint64
        Msg::default().msg(10, Msg::default().str(1, "comm_size").fixed(21, 1024, 8)), // fixed64
        Msg::default().msg(10, Msg::default().str(1, "comm_size").fixed(23, 1024, 4)), // sfixed32
    ];
    for (i, a) in encodings.into_iter().enumerate() {
        let t = read(&file(&[Msg::node(1, COLL).cat(a)]), 0).unwrap_or_else(|e| panic!("encoding {i}: {e}"));
        assert_eq!(t.nodes[0].comm_size, Some(1024), "encoding {i}");
    }
    // STAGE's int32 is_cpu_op and tags; a negative int32 size (sign-extended to ten bytes).
    let node = Msg::node(1, 5).attr("is_cpu_op", 7, 0).attr("comm_tag", 7, 3).attr("comm_dst", 13, 1);
    let n = &read(&file(&[node]), 0).unwrap().nodes[0];
    assert_eq!((n.is_cpu_op, n.comm_tag, n.comm_dst), (Some(false), Some(3), Some(1)));
    let bytes = file(&[Msg::node(1, COLL).attr("comm_size", 7, -1i64 as u64)]);
    let e = read(&bytes, 0).unwrap_err();
    assert!(e.message.contains("attribute comm_size is -1"), "{e}");
    // The value's key: after the node's prefix, its fields and the attribute's name.
    assert_eq!(e.offset, bytes.len() as u64 - 11);
    let e = read(&file(&[Msg::node(1, COLL).msg(10, Msg::default().str(1, "comm_size").str(29, "1"))]), 0)
        .unwrap_err();
    assert!(e.message.contains("has a string, where an integer is expected"), "{e}");
}

#[test]
fn unknown_fields_and_attributes_are_skipped() {
    let unknown = Msg::default().int(99, 7).fixed(98, 1, 8).fixed(97, 1, 4).str(96, "x");
    let meta = Msg::default()
        .str(1, "1.0.2-chakra.1.0.0")
        .msg(2, Msg::default().str(1, "schema").str(29, "s"))
        .int(50, 1);
    let node = Msg::node(4, COLL)
        .int(4, 2) // ctrl_deps, unpacked
        .bytes(5, &[2, 3]) // data_deps, packed
        .int(7, 12)
        .msg(8, Msg::default().str(1, "[1]").str(2, "[[1]]"))
        .msg(10, Msg::default().str(1, "involved_dim").msg(28, Msg::default().bytes(1, &[1, 1])))
        .msg(10, Msg::default().str(1, "whatever").str(2, "doc").fixed(3, 1.5f64.to_bits(), 8))
        .attr("comm_type", 9, 7)
        .attr("comm_type", 9, 0) // the first of a name counts
        .pg("7")
        .cat(unknown);
    let t = read(&stream([&meta, &Msg::node(2, 4), &Msg::node(3, 4), &node]), 0)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((t.version.as_str(), t.schema.as_deref()), ("1.0.2-chakra.1.0.0", Some("s")));
    let n = &t.nodes[2];
    assert_eq!(
        (n.id, n.node_type, &n.ctrl_deps[..], &n.data_deps[..]),
        (4, NodeType::CommColl, &[2][..], &[2, 3][..])
    );
    assert_eq!((n.duration_micros, n.comm_type, n.pg_name.as_deref()), (12, Some(7), Some("7")));
}

#[test]
fn gzip_truncation_and_wire_types() {
    // A gzipped file reads as the plain one; a gzip stream cut short is refused.
    use std::io::Write;
    let plain = file(&[Msg::node(1, 4).int(7, 5), Msg::node(2, 4).int(5, 1)]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain).unwrap();
    let gz = gz.finish().unwrap();
    let (a, b) = (read(&plain, 0).unwrap(), read(&gz, 0).unwrap());
    assert!(!a.gzipped && b.gzipped);
    assert_eq!(a.nodes, b.nodes);
    let e = read(&gz[..gz.len() - 4], 0).unwrap_err();
    assert!(e.message.contains("gzip"), "{e}");
    let bytes = file(&[Msg::node(1, 4), Msg::node(2, 4).int(7, 300)]);
    let last = bytes.len() - Msg::node(2, 4).int(7, 300).0.len() - 1;
    for cut in last + 1..bytes.len() {
        let e = read(&bytes[..cut], 3).unwrap_err();
        assert_eq!((e.rank, e.offset), (Some(3), last as u64), "{e}");
        assert!(e.message.contains("truncated"), "{e}");
    }
    assert!(read(&[], 0).unwrap_err().message.contains("empty file"));
    // A node's id (field 1) length-delimited; a group's start (wire type 3) in a node.
    let e = read(&file(&[Msg::default().str(1, "7")]), 0).unwrap_err();
    assert_eq!(
        (e.offset, e.message.as_str()),
        (9, "field 1 (Node.id) has wire type 2 (length-delimited), where the schema has 0 (varint)")
    );
    let e = read(&file(&[Msg::node(1, 4).key(11, 3)]), 0).unwrap_err();
    assert!(e.message.contains("wire type 3 (start of a group)"), "{e}");
    // Chakra 0.0.x: no metadata; the first message is a node (id, a varint, in field 1).
    let e = read(&[2, 8, 1], 0).unwrap_err();
    assert!(e.message.contains("0.0.x schema"), "{e}");
    // Chakra's 2023 schema: metadata attributes in field 1, nodes with string fields.
    let e = read(&stream([&Msg::default().msg(1, Msg::default().str(1, "schema"))]), 0).unwrap_err();
    assert!(e.message.contains("2023 schema"), "{e}");
    assert!(read(&file(&[Msg::node(1, 4).str(6, "[[1]]")]), 0).unwrap_err().message.contains("2023 schema"));
}

/// The collectives `schedule_of_chakra_with` hands to `expand`, per rank: (kind, bytes,
/// comm id, members, comm rank, tag).
type Seen = Vec<(CollectiveKind, u64, u32, Vec<u32>, usize, u32)>;

fn expansions(ranks: &[ChakraRank], options: &ChakraOptions) -> Result<Seen, ChakraError> {
    let mut seen = Vec::new();
    schedule_of_chakra_with(ranks, options, &mut |b, c, comm, me, tag, after| {
        seen.push((c.kind, c.bytes, comm.id, comm.ranks.clone(), me, tag));
        let op = b.calc(0);
        after.inspect(|&a| b.requires(op, a));
        Some(op)
    })?;
    Ok(seen)
}

fn coll(id: u64, kind: u64, bytes: u64, pg: Option<&str>) -> Msg {
    let m = Msg::node(id, COLL).attr("comm_type", 9, kind).attr("comm_size", 9, bytes);
    pg.map_or(m.clone(), |pg| m.pg(pg))
}

#[test]
fn process_groups_from_descriptions_files_or_their_users() {
    // PyTorch's process_group:init record, as Chakra's converter keeps it.
    let pg = r#"['[{"pg_name": "0", "ranks": [], "group_size": 4}, {"pg_name": "5", "ranks": [2, 0]}]']"#;
    let meta = Msg::node(9, 1).str(2, "## process_group:init ##").msg(8, Msg::default().str(1, pg));
    let job = |described: bool| -> Vec<ChakraRank> {
        (0..4u32)
            .map(|r| {
                let mut nodes = vec![coll(1, 0, 64, None), coll(2, 2, 8, Some("0"))];
                if r % 2 == 0 {
                    nodes.push(coll(3, 5, 16, Some("5")).int(5, 2));
                }
                if described {
                    nodes.insert(0, meta.clone());
                }
                read(&file(&nodes), r).unwrap()
            })
            .collect()
    };
    let t = job(true);
    assert_eq!(
        t[1].process_groups().cloned().collect::<Vec<_>>(),
        [
            ProcessGroup { name: "0".into(), ranks: vec![] },
            ProcessGroup { name: "5".into(), ranks: vec![2, 0] }
        ]
    );
    let seen = expansions(&t, &ChakraOptions::default()).unwrap();
    use CollectiveKind::*;
    // "" and "0" are every rank (comm 1, tags 0 and 1); group 5 is ranks [2, 0] (comm 2).
    assert_eq!(
        seen[0..3],
        [
            (AllReduce, 64, 1, vec![0, 1, 2, 3], 0, 0),
            (AllGather, 8, 1, vec![0, 1, 2, 3], 0, 1),
            (Broadcast, 16, 2, vec![2, 0], 1, 0)
        ]
    );
    assert_eq!((seen.len(), &seen[3]), (10, &(AllReduce, 64, 1, vec![0, 1, 2, 3], 1, 0)));
    // Undescribed, group 5 is the ranks that use it; a communicator-group file overrides.
    assert_eq!(expansions(&job(false), &ChakraOptions::default()).unwrap()[2].3, vec![0, 2]);
    let groups = parse_comm_groups(r#"{"5": [0, 2, 3]}"#, "groups.json").unwrap();
    let e = expansions(&job(false), &ChakraOptions { groups, ctrl_deps: true }).unwrap_err();
    assert_eq!((e.rank, e.offset), (Some(0), job(false)[0].nodes[2].offset));
    assert!(e.message.contains("is collective 0 of rank 0 on process group \"5\", but rank 3 has no"), "{e}");
    let e = parse_comm_groups("{\"1\": [0, -2]}", "groups.json").unwrap_err();
    assert_eq!(e.to_string(), "groups.json: byte 10: a rank is not an integer from 0 to 2^32 - 1");
    let groups = vec![ProcessGroup { name: "5".into(), ranks: vec![1, 3] }];
    let e = expansions(&job(false), &ChakraOptions { groups, ctrl_deps: true }).unwrap_err();
    assert!(e.message.contains("whose members [1, 3] do not include rank 0"), "{e}");
}

#[test]
fn collectives_must_agree_between_members() {
    let rank = |r: u64, sizes: &[u64]| -> ChakraRank {
        let nodes: Vec<Msg> = sizes.iter().zip(10 * r..).map(|(&b, id)| coll(id, 0, b, None)).collect();
        read(&file(&nodes), r as u32).unwrap()
    };
    let job = |a: &[u64], b: &[u64]| vec![rank(0, a), rank(1, b)];
    let e = expansions(&job(&[8, 16], &[8, 32]), &ChakraOptions::default()).unwrap_err();
    assert_eq!(e.rank, Some(1));
    let want = concat!(
        "collective 1 on the default process group (every rank) is ALL_REDUCE of 16 bytes, root 0 at rank 0 ",
        "(COMM_COLL_NODE 1 (n1)) but ALL_REDUCE of 32 bytes, root 0 at rank 1 (COMM_COLL_NODE 11 (n11))"
    );
    assert_eq!(e.message, want);
    let e = expansions(&job(&[8], &[8, 32]), &ChakraOptions::default()).unwrap_err();
    assert!(
        e.message
            .contains("COMM_COLL_NODE 11 (n11) (ALL_REDUCE of 32 bytes, root 0) is collective 1 of rank 1"),
        "{e}"
    );
    let e = convert(&[coll(1, 5, 8, None).attr("root", 13, 1)]).unwrap_err();
    assert!(
        e.message.contains("has root 1, but the default process group (every rank) has 1 members"),
        "{e}"
    );
}

/// Rank 0 of a job of one, of `nodes`, with MPICH's collectives.
fn convert(nodes: &[Msg]) -> Result<Schedule, ChakraError> {
    schedule_of_chakra(&[read(&file(nodes), 0).unwrap()], &mut mpich)
}

#[test]
fn dependencies_cycles_and_messages() {
    // Node 3 depends on 1 (ctrl) and 2 (data): the collective's `after` joins them.
    let nodes =
        [Msg::node(1, 4).int(7, 2), Msg::node(2, 4).int(7, 3), coll(3, 0, 8, None).int(4, 1).int(5, 2)];
    let s = convert(&nodes).unwrap();
    let calcs: Vec<Op> = [2000, 3000, 0, 0].map(|time| Op::Calc { time }).to_vec();
    assert_eq!(s.ops(0).collect::<Vec<_>>(), calcs);
    assert_eq!((s.after_end(0, 0), s.after_end(0, 1), s.after_end(0, 2)), (&[2][..], &[2][..], &[3][..]));
    assert_eq!(complete(&s), 3000);
    // A node the file does not have; a cycle; a node depending on itself.
    let e = convert(&[Msg::node(1, 4), Msg::node(2, 4).int(5, 9)]).unwrap_err();
    assert_eq!(
        (e.offset, e.message.as_str()),
        (17, "COMP_NODE 2 (n2) depends on node 9, which rank 0's trace does not have")
    );
    let cyc =
        [Msg::node(1, 4).int(5, 3), Msg::node(2, 4).int(5, 1), Msg::node(3, 4).int(4, 2), Msg::node(4, 4)];
    let e = convert(&cyc).unwrap_err();
    assert!(
        e.message.ends_with("a dependency cycle: node 1 -> 3 -> 2 -> 1 (each depends on the next)"),
        "{e}"
    );
    let e = convert(&[Msg::node(1, 4).int(4, 1)]).unwrap_err();
    assert!(e.message.ends_with("node 1 -> 1 (each depends on the next)"), "{e}");
    // Sends and receives between ranks, on communicator 0; to oneself, or as another.
    let pair = |a: Msg, b: Msg| vec![read(&file(&[a]), 0).unwrap(), read(&file(&[b]), 1).unwrap()];
    let send = Msg::node(1, 5).attr("comm_size", 9, 10).attr("comm_dst", 7, 1).attr("comm_tag", 7, 4);
    let recv = Msg::node(1, 6).attr("comm_size", 9, 10).attr("comm_src", 7, 0).attr("comm_tag", 7, 4);
    let s = schedule_of_chakra(&pair(send.clone(), recv.clone()), &mut mpich).unwrap();
    assert_eq!(s.op(0, 0), Op::Send { to: 1, bytes: 10, tag: 4, comm: POINT_TO_POINT_COMM });
    complete(&s);
    let e =
        schedule_of_chakra(&pair(send.clone().attr("comm_src", 7, 1), recv.clone()), &mut mpich).unwrap_err();
    assert!(e.message.ends_with("of rank 0 has comm_src 1"), "{e}");
    let to_self = Msg::node(1, 6).attr("comm_size", 9, 10).attr("comm_src", 7, 1);
    let e = schedule_of_chakra(&pair(send, to_self), &mut mpich).unwrap_err();
    assert!(e.message.ends_with("has comm_src 1: its own rank"), "{e}");
}

/// Reads (and, if it reads, converts) `bytes` as rank `rank` among `others`: whatever the
/// bytes, no panic. (The expansion is trivial: the reader and converter are under test.)
fn survive(bytes: &[u8], rank: u32, others: &[ChakraRank]) {
    if let Ok(t) = read_rank(bytes, "mutated", rank) {
        let mut ranks = others.to_vec();
        ranks[rank as usize] = t;
        let _ = schedule_of_chakra(&ranks, &mut |b, _, _, _, _, after| {
            let op = b.calc(0);
            after.inspect(|&a| b.requires(op, a));
            Some(op)
        });
    }
}

/// `bytes` with the bytes at `edits` (within `from..`) flipped, and maybe cut short.
fn mutate(mut bytes: Vec<u8>, from: usize, edits: &[(usize, u8)], keep: usize) -> Vec<u8> {
    for &(at, v) in edits {
        let i = from + at % (bytes.len() - from);
        bytes[i] ^= v;
    }
    // A quarter of the cases are cut short anywhere.
    if keep.is_multiple_of(4) {
        bytes.truncate(keep / 4 % (bytes.len() + 1));
    }
    bytes
}

/// Up to `n` byte flips: (where, which bits).
fn edits(n: usize) -> impl Strategy<Value = Vec<(usize, u8)>> {
    prop::collection::vec((any::<usize>(), 1u8..), 0..n)
}

/// A fixture to mutate: its bytes, its rank, where edits may land, the job's ranks.
fn target(which: usize) -> (Vec<u8>, u32, usize, Vec<ChakraRank>) {
    let (micro, ring, gz) =
        ("microbenchmarks", "custom_ring_allreduce_8npus_1MB", "feeder_test/chakra.0.et.gz");
    match which {
        0 => (data(&format!("{micro}/all_reduce.1.et")), 1, 0, fixture(micro, "all_reduce", 4)),
        // The ring's edits land on its nodes, after the metadata's long string.
        1 => {
            (data(&format!("{ring}/custom_allreduce.1.et")), 1, 26_717, fixture(ring, "custom_allreduce", 8))
        }
        w => {
            let (bytes, mut plain) = (data(gz), Vec::new());
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut plain).unwrap();
            let one = vec![read_rank(&bytes, gz, 0).unwrap()];
            (if w == 2 { bytes } else { plain }, 0, 0, one)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn mutated_traces_never_panic(edits in edits(8), keep in any::<usize>(), which in 0usize..4) {
        let (bytes, rank, from, others) = target(which);
        survive(&mutate(bytes, from, &edits, keep), rank, &others);
    }
}
