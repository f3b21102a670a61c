//! Reading Chakra execution traces (MLCommons Chakra, the workload format of ASTRA-sim)
//! into schedules.
//!
//! # The format
//!
//! A job is one file per rank (ASTRA-sim names them `PREFIX.R.et`, [`rank_file`]). A file
//! is a stream of protobuf messages, each preceded by its length as a varint: first a
//! `GlobalMetadata`, then `Node`s, to the end of the file. A file may be gzipped: readers
//! look for the gzip magic `1f 8b` at its start. Messages are those of
//! `schema/protobuf/et_def.proto`:
//!
//! - `GlobalMetadata`: `version` (1, string) and `attr` (2, attributes).
//! - `Node`: `id` (1), `name` (2), `type` (3, `NodeType`), `ctrl_deps` (4) and `data_deps`
//!   (5, repeated `uint64` ids of nodes of the same file), `start_time_micros` (6),
//!   `duration_micros` (7), `inputs` and `outputs` (8, 9: strings of values, shapes and
//!   types) and `attr` (10).
//! - `AttributeProto`: `name` (1), `doc_string` (2) and a oneof of typed values: double,
//!   float, int32, int64, uint32, uint64, sint32, sint64, fixed32, fixed64, sfixed32,
//!   sfixed64, bool, string, bytes (odd fields 3 to 31) and a list of each (even fields 4
//!   to 32).
//!
//! # What is read
//!
//! [`read_rank`] reads a rank's file into a [`ChakraRank`]: the metadata's `version` and
//! `schema` attribute, and every node's fields (not `inputs` and `outputs`) and the
//! attributes a replay needs, *by name*, whichever integer member holds them (writers
//! differ: ASTRA-sim's generators put `comm_size` in `int64_val`, STAGE `comm_tag` in
//! `int32_val` and `is_cpu_op` in `int32_val`): `comm_type`, `comm_size`, `comm_src`,
//! `comm_dst`, `comm_tag`, `pg_name` (or STAGE's older `comm_group`), `root`, `is_cpu_op`,
//! `num_ops`, `tensor_size`; and the process groups a `METADATA_NODE` describes (PyTorch's,
//! below). Unknown fields are skipped by their wire type, unknown attributes by name; a
//! known field of another wire type, a group wire type (3, 4), a truncated message and a
//! known attribute of the wrong type (a negative `comm_size`) are errors naming the file,
//! the rank and the byte offset ([`ChakraError`]; in a gzipped file, the offset in its
//! gunzipped bytes). [`schedule_of_chakra`] turns ranks into a [`Schedule`](crate::Schedule)
//! (see there).
//!
//! The wire format is decoded by hand (`wire.rs`), not by code generated from the schema
//! (and no protobuf runtime is linked): a dozen fields are read; the schema versions in the
//! wild differ in which attributes and value types they write, which a generated reader
//! would each need spelled out; unknown fields must be passed over; and errors must name
//! the byte where a file went wrong, which generated parsers do not report.
//!
//! # Schema versions
//!
//! `et_def.proto` has had these messages since October 2023 (mlcommons/chakra commits
//! `c236cfa`, "Update the Chakra schema", and `a2b45c1`, which added `version`); the
//! writers since differ in what they write, not in the messages. All of these are read
//! alike; the version is kept ([`ChakraRank::version`], [`ChakraRank::schema`]), not acted
//! on:
//!
//! - PyTorch traces through Chakra's converter: no `version`; a `schema` attribute naming
//!   PyTorch's trace schema: `1.0.1` (Chakra's feeder test trace), `1.0.2-chakra.0.0.4`
//!   and later; nodes carry `is_cpu_op` (bool), `comm_type` and `comm_size` (`int64`),
//!   `pg_name` (string), and use `ctrl_deps` for the calling operator (in the 1.0.1 trace,
//!   the node itself or a node not in the file: [`ChakraOptions::ctrl_deps`]).
//! - Chakra's text converter: `schema` `1.0.2-chakra.1.0.0`; its generator: `version`
//!   `1.0.0`.
//! - ASTRA-sim's microbenchmark generators: `version` `0.0.4`, `comm_type` and `comm_size`
//!   `int64`, `is_cpu_op` `bool`; each rank's collective has a different node id.
//! - STAGE (ASTRA-sim's symbolic tensor graph generator, its "Chakra v0.0.4" backend):
//!   `schema` `symbolic_tensor_network`; `comm_size` `int64`, `comm_src`, `comm_dst`,
//!   `comm_tag` and `is_cpu_op` `int32`; `num_ops` and `tensor_size` for computations
//!   instead of durations (ASTRA-sim's roofline model times them; here they are `calc 0`
//!   unless the caller sets `duration_micros`).
//!
//! Not read: Chakra's earlier schemas, refused with a message saying so where they can be
//! told apart: 0.0.x (no metadata message; `Node.id` where the metadata's version would be)
//! and that of August to October 2023 (metadata attributes in field 1, told apart when the
//! metadata has some; nodes with string
//! fields 5 to 10 and attributes in field 11, typed by an `AttributeType`, and other
//! `CollectiveCommType` numbers). Nor `inputs` and `outputs` but for the process groups,
//! the lists of attributes (ASTRA-sim's `involved_dim`), tensors, `comm_priority`, memory
//! nodes' semantics.
//!
//! # Process groups
//!
//! A collective names its process group by `pg_name`. An absent, empty or `"0"` name is
//! every rank, whatever any description says, as ASTRA-sim's `extract_comm_group` has it.
//! Other groups' members come from, in order of precedence: the groups given to
//! [`schedule_of_chakra_with`] (ASTRA-sim's `--comm-group-configuration` file, read by
//! [`parse_comm_groups`], which STAGE writes: `{"1": [0, 1, 2, 3], ...}`); the groups the
//! traces describe (PyTorch's `## process_group:init ##` record, kept by Chakra's converter
//! as a `METADATA_NODE` whose `inputs.values` lists `{"pg_name": ..., "ranks": [...]}`
//! objects, `ranks` empty for every rank, as ASTRA-sim's `issue_pytorch_pg_metadata` reads
//! it; the ranks' descriptions must agree); failing those (ASTRA-sim would stop), the ranks
//! whose traces hold collectives on the group, in rank order. Members are listed in
//! comm-rank order. The Chakra traces read for this module carry no other description.
//!
//! # Sources
//!
//! Facts (not code) from: mlcommons/chakra at commit
//! `21585d8f2d65603d791d2121e3d4632351120262` (`schema/protobuf/et_def.proto`,
//! `src/third_party/utils/protoio.cc` and `protolib.py` for the stream and gzip,
//! `src/feeder/et_feeder_node.cpp` for the attributes, `src/converter/pytorch_converter.py`,
//! `pytorch_node.py`, `text_converter.py`, `src/generator/generator.py` for what writers
//! write); astra-sim/astra-sim at commit `518bd513ae110428cd62eb60efc0f3993fd53c70`
//! (`astra-sim/workload/Workload.cc`: process groups, µs durations turned into ns, sends
//! checked to be the sender's; `examples/workload/microbenchmarks/generator_scripts/`);
//! astra-sim/symbolic_tensor_graph (STAGE) at commit
//! `3a7f49c02ac3eb669e4eee597ef1a32f7db44d07`
//! (`symbolic_tensor_graph/chakra/backends/chakra_00_4_backend/chakra_00_4_backend.py`,
//! `symbolic_tensor_graph/graph/convert_chakra.py`); ASTRA-sim's Chakra feeder, which
//! follows both `ctrl_deps` and `data_deps`, takes the first attribute of a name and
//! converts between integer attribute types (`src/feeder_v3/` of astra-sim's submodule
//! `extern/graph_frontend/chakra` at commit `0e3cd40c569f0a4cacb6d961bb56be53407abd2f`,
//! read through a code index: that commit is not in mlcommons/chakra's history).

mod convert;
mod groups;
mod nodes;
mod wire;
mod write;

pub use convert::{
    schedule_of_chakra, schedule_of_chakra_with, ChakraCollective, ChakraOptions, Expand, POINT_TO_POINT_COMM,
};
pub use nodes::{ChakraNode, CollectiveKind, NodeType};
pub use write::{AttrValue, ChakraTraces, ChakraWriter, WRITTEN_VERSION};

use std::io::Read;

/// Why a trace could not be read or converted: the file, the rank, the byte offset (in a
/// gzipped file, of its gunzipped bytes) and what was wrong (`None` for the rank of a
/// communicator-group file).
pub type ChakraError = crate::ByteError;

/// A process group: its name (`pg_name`) and its members, ranks of the whole job in
/// comm-rank order; no members means every rank (as PyTorch describes its default group).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessGroup {
    /// Its name.
    pub name: String,
    /// Its members.
    pub ranks: Vec<u32>,
}

/// One rank's trace, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChakraRank {
    /// The file, as named to the reader.
    pub file: String,
    /// The rank.
    pub rank: u32,
    /// Whether the file was gzipped (offsets are then in its gunzipped bytes).
    pub gzipped: bool,
    /// `GlobalMetadata.version` (empty where not written).
    pub version: String,
    /// The metadata's `schema` attribute, where written.
    pub schema: Option<String>,
    /// The nodes, in the file's order.
    pub nodes: Vec<ChakraNode>,
}

impl ChakraRank {
    /// The schema version the file states: its `version`, else its `schema` attribute,
    /// else `""`.
    pub fn schema_version(&self) -> &str {
        if self.version.is_empty() {
            self.schema.as_deref().unwrap_or("")
        } else {
            &self.version
        }
    }

    /// The process groups its metadata nodes describe, in order.
    pub fn process_groups(&self) -> impl Iterator<Item = &ProcessGroup> + '_ {
        self.nodes.iter().flat_map(|n| &n.process_groups)
    }
}

/// ASTRA-sim's name of rank `rank`'s file of the trace `prefix`: `PREFIX.RANK.et`.
pub fn rank_file(prefix: &str, rank: u32) -> String {
    format!("{prefix}.{rank}.et")
}

/// Reads rank `rank`'s trace file `bytes` (named `file` in errors), gunzipping it if it
/// starts with the gzip magic.
pub fn read_rank(bytes: &[u8], file: &str, rank: u32) -> Result<ChakraRank, ChakraError> {
    let err =
        |offset: u64, message: String| ChakraError { file: file.into(), rank: Some(rank), offset, message };
    let gzipped = bytes.starts_with(&[0x1f, 0x8b]);
    let gunzipped;
    let data = if gzipped {
        let mut d = flate2::bufread::MultiGzDecoder::new(bytes);
        let mut out = Vec::new();
        if let Err(e) = d.read_to_end(&mut out) {
            let at = bytes.len() - d.get_ref().len();
            return Err(err(at as u64, format!("gzipped, but not a gzip stream that inflates whole: {e}")));
        }
        gunzipped = out;
        &gunzipped[..]
    } else {
        bytes
    };
    let fail = |f: wire::Fault| {
        let gz = if gzipped { " (an offset in the gunzipped bytes)" } else { "" };
        err(f.offset, format!("{}{gz}", f.message))
    };
    let mut stream = wire::Stream::new(data);
    let Some(first) = stream.next_message() else {
        return Err(err(0, "an empty file: a Chakra trace starts with a GlobalMetadata message".into()));
    };
    let (version, schema) = nodes::metadata(first.map_err(fail)?.1).map_err(fail)?;
    let mut out = ChakraRank { file: file.into(), rank, gzipped, version, schema, nodes: Vec::new() };
    while let Some(message) = stream.next_message() {
        let (at, m) = message.map_err(fail)?;
        out.nodes.push(nodes::node(m, at).map_err(fail)?);
    }
    Ok(out)
}

/// Reads ASTRA-sim's communicator-group file (`--comm-group-configuration`, which STAGE
/// writes beside its traces): a JSON object from group names (`pg_name`s) to lists of
/// ranks. `file` names it in errors, whose offsets are bytes of `text`.
pub fn parse_comm_groups(text: &str, file: &str) -> Result<Vec<ProcessGroup>, ChakraError> {
    groups::astra_sim(text).map_err(|(at, message)| ChakraError {
        file: file.into(),
        rank: None,
        offset: at as u64,
        message,
    })
}
