//! Writing Chakra execution traces: one rank's file, a stream of length-prefixed protobuf
//! messages (`GlobalMetadata`, then the `Node`s), encoded by hand with the field numbers of
//! `et_def.proto` that the reader decodes (see the module's documentation).
//!
//! Attributes are written as ASTRA-sim's microbenchmark generator writes them
//! (`comm_type`, `comm_size` as `int64_val`; `comm_src`, `comm_dst`, `comm_tag` as
//! `int32_val`; `pg_name` as `string_val`; `is_cpu_op` as `bool_val`), so that ASTRA-sim's
//! feeder and this reader both take them.

use super::nodes::{CollectiveKind, NodeType};
use super::ProcessGroup;

/// The version written in `GlobalMetadata`: the schema of ASTRA-sim 2.x's generators.
pub const WRITTEN_VERSION: &str = "0.0.4";

/// A job's traces as they are written: one file's bytes per rank (`PREFIX.R.et`), and the
/// process groups its collectives name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChakraTraces {
    /// Rank r's file.
    pub ranks: Vec<Vec<u8>>,
    /// The process groups, each by its `pg_name`.
    pub groups: Vec<ProcessGroup>,
}

impl ChakraTraces {
    /// The groups as ASTRA-sim's communicator-group file (`--comm-group-configuration`):
    /// a JSON object from group names to their ranks.
    pub fn groups_json(&self) -> String {
        let entries: Vec<String> = self
            .groups
            .iter()
            .map(|g| {
                let ranks: Vec<String> = g.ranks.iter().map(u32::to_string).collect();
                format!("  \"{}\": [{}]", g.name.replace('\\', "\\\\").replace('"', "\\\""), ranks.join(", "))
            })
            .collect();
        format!("{{\n{}\n}}\n", entries.join(",\n"))
    }
}

/// An attribute's value, in the member that the writers in the wild use for it.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// `int32_val` (field 7).
    Int32(i32),
    /// `int64_val` (field 9).
    Int64(i64),
    /// `bool_val` (field 27).
    Bool(bool),
    /// `string_val` (field 29).
    Str(String),
}

/// One rank's trace as it is written: its bytes, and the id the next node gets.
pub struct ChakraWriter {
    out: Vec<u8>,
    next_id: u64,
    /// One message's bytes, reused.
    message: Vec<u8>,
}

impl Default for ChakraWriter {
    fn default() -> Self {
        ChakraWriter::new()
    }
}

impl ChakraWriter {
    /// A trace whose `GlobalMetadata` gives [`WRITTEN_VERSION`].
    pub fn new() -> ChakraWriter {
        let mut w = ChakraWriter { out: Vec::new(), next_id: 0, message: Vec::new() };
        put_bytes(&mut w.message, 1, WRITTEN_VERSION.as_bytes());
        w.frame();
        w
    }

    /// Appends a node of `node_type` named `name` that waits for the nodes `data_deps`
    /// (ids this writer gave), lasting `duration_micros`, with `attrs`; returns its id.
    pub fn node(
        &mut self,
        node_type: NodeType,
        name: &str,
        data_deps: &[u64],
        duration_micros: u64,
        attrs: &[(&str, AttrValue)],
    ) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let m = &mut self.message;
        put_varint_field(m, 1, id);
        put_bytes(m, 2, name.as_bytes());
        put_varint_field(m, 3, node_number(node_type));
        if !data_deps.is_empty() {
            let mut packed = Vec::with_capacity(data_deps.len() * 2);
            for &d in data_deps {
                put_varint(&mut packed, d);
            }
            put_bytes(m, 5, &packed);
        }
        if duration_micros > 0 {
            put_varint_field(m, 7, duration_micros);
        }
        for (attr_name, value) in attrs {
            let mut a = Vec::new();
            put_bytes(&mut a, 1, attr_name.as_bytes());
            match value {
                // Negative int32 and int64 values are ten-byte varints, as protobuf writes them.
                AttrValue::Int32(v) => put_varint_field(&mut a, 7, i64::from(*v) as u64),
                AttrValue::Int64(v) => put_varint_field(&mut a, 9, *v as u64),
                AttrValue::Bool(v) => put_varint_field(&mut a, 27, u64::from(*v)),
                AttrValue::Str(s) => put_bytes(&mut a, 29, s.as_bytes()),
            }
            put_bytes(m, 10, &a);
        }
        self.frame();
        id
    }

    /// A collective node: `kind` of `comm_size` bytes (the rank's input, as PyTorch
    /// records it) on the process group `pg_name`, after `data_deps`.
    pub fn collective(
        &mut self,
        name: &str,
        kind: CollectiveKind,
        comm_size: u64,
        pg_name: &str,
        data_deps: &[u64],
    ) -> u64 {
        let attrs = [
            ("is_cpu_op", AttrValue::Bool(false)),
            ("comm_type", AttrValue::Int64(kind_number(kind))),
            ("comm_size", AttrValue::Int64(comm_size as i64)),
            ("pg_name", AttrValue::Str(pg_name.to_string())),
        ];
        self.node(NodeType::CommColl, name, data_deps, 0, &attrs)
    }

    /// The file's bytes.
    pub fn finish(self) -> Vec<u8> {
        self.out
    }

    /// Moves the message under construction to the output, preceded by its length.
    fn frame(&mut self) {
        put_varint(&mut self.out, self.message.len() as u64);
        self.out.extend_from_slice(&self.message);
        self.message.clear();
    }
}

/// `node_type`'s number in `et_def.proto`.
fn node_number(node_type: NodeType) -> u64 {
    match node_type {
        NodeType::Invalid => 0,
        NodeType::Metadata => 1,
        NodeType::MemLoad => 2,
        NodeType::MemStore => 3,
        NodeType::Comp => 4,
        NodeType::CommSend => 5,
        NodeType::CommRecv => 6,
        NodeType::CommColl => 7,
        NodeType::Other(n) => n,
    }
}

/// `kind`'s number in `et_def.proto` (its index in [`CollectiveKind::ALL`]).
fn kind_number(kind: CollectiveKind) -> i64 {
    CollectiveKind::ALL.iter().position(|&k| k == kind).expect("every kind is listed") as i64
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field (wire type 0).
fn put_varint_field(out: &mut Vec<u8>, field: u64, v: u64) {
    put_varint(out, field << 3);
    put_varint(out, v);
}

/// A length-delimited field (wire type 2).
fn put_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    put_varint(out, field << 3 | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chakra::read_rank;

    #[test]
    fn what_is_written_reads_back_node_for_node() {
        let mut w = ChakraWriter::new();
        let comp = w.node(NodeType::Comp, "fwd", &[], 1234, &[("is_cpu_op", AttrValue::Bool(false))]);
        let coll = w.collective("ar", CollectiveKind::ReduceScatter, 3 << 30, "7", &[comp]);
        let send = w.node(
            NodeType::CommSend,
            "send",
            &[comp, coll],
            0,
            &[
                ("comm_dst", AttrValue::Int32(3)),
                ("comm_size", AttrValue::Int64(4096)),
                ("comm_tag", AttrValue::Int32(5)),
            ],
        );
        let rank = read_rank(&w.finish(), "r.0.et", 0).unwrap();
        assert_eq!(rank.version, WRITTEN_VERSION);
        assert_eq!(rank.nodes.len(), 3);
        let (a, b, c) = (&rank.nodes[0], &rank.nodes[1], &rank.nodes[2]);
        assert_eq!(
            (a.id, a.node_type, a.duration_micros, a.is_cpu_op),
            (comp, NodeType::Comp, 1234, Some(false))
        );
        assert_eq!(
            (b.id, b.node_type, b.comm_size, b.data_deps.as_slice()),
            (coll, NodeType::CommColl, Some(3 << 30), &[comp][..])
        );
        assert_eq!(b.comm_type, Some(7));
        assert_eq!(b.pg_name.as_deref(), Some("7"));
        assert_eq!((c.id, c.comm_dst, c.comm_size, c.comm_tag), (send, Some(3), Some(4096), Some(5)));
        assert_eq!((a.name.as_str(), c.data_deps.as_slice()), ("fwd", &[comp, coll][..]));
    }

    #[test]
    fn the_groups_file_reads_back() {
        let groups = vec![
            ProcessGroup { name: "1".into(), ranks: vec![0, 1] },
            ProcessGroup { name: "a\"b".into(), ranks: vec![3, 2, 1] },
        ];
        let traces = ChakraTraces { ranks: Vec::new(), groups: groups.clone() };
        assert_eq!(crate::chakra::parse_comm_groups(&traces.groups_json(), "g.json").unwrap(), groups);
    }
}
