//! Chakra's messages, decoded from the wire: the `GlobalMetadata` that opens a file and
//! the `Node`s that follow, with the attributes a replay needs read by name (field
//! numbers from `schema/protobuf/et_def.proto` of mlcommons/chakra).

use super::groups;
use super::wire::{fault, Key, Reader, Result, Wire};
use super::ProcessGroup;

/// A node's type (`NodeType` of `et_def.proto`, numbers in brackets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NodeType {
    /// `INVALID_NODE` (0): ASTRA-sim skips it.
    #[default]
    Invalid,
    /// `METADATA_NODE` (1): PyTorch's process-group description, among others.
    Metadata,
    /// `MEM_LOAD_NODE` (2): a load from remote memory.
    MemLoad,
    /// `MEM_STORE_NODE` (3): a store to remote memory.
    MemStore,
    /// `COMP_NODE` (4): computation.
    Comp,
    /// `COMM_SEND_NODE` (5): a point-to-point send.
    CommSend,
    /// `COMM_RECV_NODE` (6): a point-to-point receive.
    CommRecv,
    /// `COMM_COLL_NODE` (7): a collective.
    CommColl,
    /// A number the schema does not define.
    Other(u64),
}

impl NodeType {
    /// The type numbered `n` in `et_def.proto`.
    pub fn from_number(n: u64) -> NodeType {
        use NodeType::*;
        match n {
            0 => Invalid,
            1 => Metadata,
            2 => MemLoad,
            3 => MemStore,
            4 => Comp,
            5 => CommSend,
            6 => CommRecv,
            7 => CommColl,
            n => Other(n),
        }
    }

    /// Its name in `et_def.proto` (`"COMM_COLL_NODE"`), or `"node type N"`.
    pub fn name(self) -> String {
        use NodeType::*;
        match self {
            Invalid => "INVALID_NODE",
            Metadata => "METADATA_NODE",
            MemLoad => "MEM_LOAD_NODE",
            MemStore => "MEM_STORE_NODE",
            Comp => "COMP_NODE",
            CommSend => "COMM_SEND_NODE",
            CommRecv => "COMM_RECV_NODE",
            CommColl => "COMM_COLL_NODE",
            Other(n) => return format!("node type {n}"),
        }
        .to_string()
    }
}

/// A collective's kind (`CollectiveCommType` of `et_def.proto`, numbers in brackets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollectiveKind {
    /// `ALL_REDUCE` (0).
    AllReduce,
    /// `REDUCE` (1).
    Reduce,
    /// `ALL_GATHER` (2).
    AllGather,
    /// `GATHER` (3).
    Gather,
    /// `SCATTER` (4).
    Scatter,
    /// `BROADCAST` (5).
    Broadcast,
    /// `ALL_TO_ALL` (6).
    AllToAll,
    /// `REDUCE_SCATTER` (7).
    ReduceScatter,
    /// `REDUCE_SCATTER_BLOCK` (8).
    ReduceScatterBlock,
    /// `BARRIER` (9).
    Barrier,
}

impl CollectiveKind {
    /// Every kind, in the schema's order (its number is its index).
    pub const ALL: [CollectiveKind; 10] = [
        CollectiveKind::AllReduce,
        CollectiveKind::Reduce,
        CollectiveKind::AllGather,
        CollectiveKind::Gather,
        CollectiveKind::Scatter,
        CollectiveKind::Broadcast,
        CollectiveKind::AllToAll,
        CollectiveKind::ReduceScatter,
        CollectiveKind::ReduceScatterBlock,
        CollectiveKind::Barrier,
    ];

    /// The kind numbered `n` in `et_def.proto`, if any.
    pub fn from_number(n: i64) -> Option<CollectiveKind> {
        usize::try_from(n).ok().and_then(|i| Self::ALL.get(i)).copied()
    }

    /// Its name in `et_def.proto` (`"ALL_REDUCE"`).
    pub fn name(self) -> &'static str {
        use CollectiveKind::*;
        match self {
            AllReduce => "ALL_REDUCE",
            Reduce => "REDUCE",
            AllGather => "ALL_GATHER",
            Gather => "GATHER",
            Scatter => "SCATTER",
            Broadcast => "BROADCAST",
            AllToAll => "ALL_TO_ALL",
            ReduceScatter => "REDUCE_SCATTER",
            ReduceScatterBlock => "REDUCE_SCATTER_BLOCK",
            Barrier => "BARRIER",
        }
    }
}

/// One node of a rank's trace: its fields and the attributes a replay reads (`None`: the
/// node has no such attribute).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ChakraNode {
    /// The byte offset of its message (its length prefix) in the file, after gunzipping.
    pub offset: u64,
    /// Its id (unique within the rank's file).
    pub id: u64,
    /// Its name.
    pub name: String,
    /// Its type.
    pub node_type: NodeType,
    /// The nodes it follows in control (`ctrl_deps`).
    pub ctrl_deps: Vec<u64>,
    /// The nodes whose data it uses (`data_deps`).
    pub data_deps: Vec<u64>,
    /// `start_time_micros`: when it started in the traced run, µs (0 where not traced).
    pub start_time_micros: u64,
    /// `duration_micros`: how long it ran, µs.
    pub duration_micros: u64,
    /// `is_cpu_op` (a `bool`, or an integer: STAGE writes `int32` 0).
    pub is_cpu_op: Option<bool>,
    /// `num_ops`: a computation's operations (STAGE, for ASTRA-sim's roofline model).
    pub num_ops: Option<u64>,
    /// `tensor_size`: bytes a computation or memory node touches.
    pub tensor_size: Option<u64>,
    /// `comm_type`: the number of a `CollectiveCommType` (see [`CollectiveKind`]), as
    /// written; some writers put one on sends and receives too, where it means nothing.
    pub comm_type: Option<i64>,
    /// `comm_size`: a message's or collective's bytes.
    pub comm_size: Option<u64>,
    /// `comm_src`: a receive's sender (a rank of the whole job).
    pub comm_src: Option<u32>,
    /// `comm_dst`: a send's receiver (a rank of the whole job).
    pub comm_dst: Option<u32>,
    /// `comm_tag`: a send's or receive's tag.
    pub comm_tag: Option<u32>,
    /// `pg_name`: the process group of a collective (STAGE's older `comm_group` integer
    /// attribute is read as its decimal name).
    pub pg_name: Option<String>,
    /// `root`: a rooted collective's root, a rank of its process group. No writer read for
    /// this module records one.
    pub root: Option<u32>,
    /// Process groups a `METADATA_NODE` describes (PyTorch's `process_group:init` node);
    /// empty for other nodes.
    pub process_groups: Vec<ProcessGroup>,
}

impl ChakraNode {
    /// `duration_micros` in nanoseconds (saturating), the unit of the schedule's `calc`s.
    pub fn duration_ns(&self) -> u64 {
        self.duration_micros.saturating_mul(1000)
    }

    /// `node ID (NAME)`, the name cut to 60 characters, for messages.
    pub fn describe(&self) -> String {
        let mut name: String = self.name.chars().take(60).collect();
        if name.len() < self.name.len() {
            name.push('…');
        }
        format!("{} {} ({name})", self.node_type.name(), self.id)
    }
}

/// `GlobalMetadata`: its `version` field and its `schema` attribute.
pub(super) fn metadata(mut r: Reader<'_>) -> Result<(String, Option<String>)> {
    let (mut version, mut schema) = (String::new(), None);
    while !r.is_empty() {
        let key = r.key()?;
        match key.field {
            1 => {
                if key.wire == Wire::Varint {
                    return Err(fault(
                        key.at,
                        "the first message is not a GlobalMetadata (its field 1 is a number, not the \
                         version string): a trace of Chakra's 0.0.x schema, whose files start with a \
                         node and number its fields otherwise, which this reader does not read",
                    ));
                }
                key.expect(Wire::Len, "GlobalMetadata.version")?;
                version = r.string()?;
                if version.chars().any(char::is_control) {
                    return Err(fault(
                        key.at,
                        "GlobalMetadata's field 1 is not a version string but holds binary data: the \
                         metadata of Chakra's 2023 schema (before its commit a2b45c1 added the version \
                         field), whose nodes number their fields otherwise, which this reader does not read",
                    ));
                }
            }
            2 => {
                key.expect(Wire::Len, "GlobalMetadata.attr")?;
                let attr = Attr::read(r.delimited()?)?;
                if attr.name == "schema" {
                    if let Value::Str(s) = attr.value {
                        schema = Some(String::from_utf8_lossy(s).into_owned());
                    }
                }
            }
            _ => r.skip(key.wire)?,
        }
    }
    Ok((version, schema))
}

/// The `Node` message `r`, whose length prefix is at `at`.
pub(super) fn node(mut r: Reader<'_>, at: usize) -> Result<ChakraNode> {
    let mut n = ChakraNode { offset: at as u64, ..ChakraNode::default() };
    let mut inputs: Option<(usize, &[u8])> = None;
    let mut comm_group = None;
    while !r.is_empty() {
        let key = r.key()?;
        if matches!(key.field, 6 | 7) && key.wire == Wire::Len {
            let m = format!(
                "field {} of a node is a string: a node of Chakra's 2023 schema (input shapes and \
                 types in fields 6 and 7), which this reader does not read",
                key.field
            );
            return Err(fault(key.at, m));
        }
        match key.field {
            1 => n.id = varint(&mut r, key, "Node.id")?,
            2 => {
                key.expect(Wire::Len, "Node.name")?;
                n.name = r.string()?;
            }
            3 => n.node_type = NodeType::from_number(varint(&mut r, key, "Node.type")?),
            4 => r.uint64s(key, "Node.ctrl_deps", &mut n.ctrl_deps)?,
            5 => r.uint64s(key, "Node.data_deps", &mut n.data_deps)?,
            6 => n.start_time_micros = varint(&mut r, key, "Node.start_time_micros")?,
            7 => n.duration_micros = varint(&mut r, key, "Node.duration_micros")?,
            8 => {
                key.expect(Wire::Len, "Node.inputs")?;
                inputs = io_values(r.delimited()?)?.or(inputs);
            }
            10 => {
                key.expect(Wire::Len, "Node.attr")?;
                let a = Attr::read(r.delimited()?)?;
                // The first attribute of a name counts, as ASTRA-sim's feeder finds it.
                match a.name.as_str() {
                    "is_cpu_op" if n.is_cpu_op.is_none() => n.is_cpu_op = Some(a.boolean()?),
                    "num_ops" if n.num_ops.is_none() => n.num_ops = Some(a.unsigned(u64::MAX)?),
                    "tensor_size" if n.tensor_size.is_none() => n.tensor_size = Some(a.unsigned(u64::MAX)?),
                    "comm_type" if n.comm_type.is_none() => n.comm_type = Some(a.integer()?),
                    "comm_size" if n.comm_size.is_none() => n.comm_size = Some(a.unsigned(u64::MAX)?),
                    "comm_src" if n.comm_src.is_none() => n.comm_src = Some(a.u32()?),
                    "comm_dst" if n.comm_dst.is_none() => n.comm_dst = Some(a.u32()?),
                    "comm_tag" if n.comm_tag.is_none() => n.comm_tag = Some(a.u32()?),
                    "root" if n.root.is_none() => n.root = Some(a.u32()?),
                    "pg_name" if n.pg_name.is_none() => n.pg_name = Some(a.text()?),
                    "comm_group" if comm_group.is_none() => comm_group = Some(a.integer()?.to_string()),
                    _ => {}
                }
            }
            _ => r.skip(key.wire)?,
        }
    }
    if n.pg_name.is_none() {
        n.pg_name = comm_group;
    }
    if n.node_type == NodeType::Metadata {
        if let Some((at, values)) = inputs {
            let text = String::from_utf8_lossy(values);
            if n.name.contains("process_group") || text.contains("pg_name") {
                n.process_groups = groups::pytorch(&text).map_err(|(pos, why)| {
                    let what = "inputs.values is not PyTorch's process-group description";
                    fault(at, format!("{}: {what}: at its byte {pos}: {why}", n.describe()))
                })?;
            }
        }
    }
    Ok(n)
}

fn varint(r: &mut Reader<'_>, key: Key, what: &str) -> Result<u64> {
    key.expect(Wire::Varint, what)?;
    r.varint()
}

/// `IOInfo.values` (field 1), where its bytes start.
fn io_values<'a>(mut r: Reader<'a>) -> Result<Option<(usize, &'a [u8])>> {
    let mut values = None;
    while !r.is_empty() {
        let key = r.key()?;
        if key.field == 1 {
            key.expect(Wire::Len, "IOInfo.values")?;
            let v = r.delimited()?;
            values = Some((v.offset(), v.rest()));
        } else {
            r.skip(key.wire)?;
        }
    }
    Ok(values)
}

/// An attribute's value, of whichever member of `AttributeProto`'s `value` oneof is set.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Value<'a> {
    None,
    /// Every integer member (`int32` to `sfixed64`), as protobuf decodes it.
    Int(i128),
    Bool(bool),
    Float(f64),
    Str(&'a [u8]),
    /// `bytes_val`, or a list member (its field number).
    Other(u64),
}

/// An `AttributeProto`: its name, its value and where the value's key is.
struct Attr<'a> {
    name: String,
    value: Value<'a>,
    at: usize,
}

impl<'a> Attr<'a> {
    fn read(mut r: Reader<'a>) -> Result<Attr<'a>> {
        let mut a = Attr { name: String::new(), value: Value::None, at: r.offset() };
        while !r.is_empty() {
            let key = r.key()?;
            let wire = match key.field {
                1 | 2 | 29 | 31 => Wire::Len,
                3 | 21 | 25 => Wire::I64,
                5 | 19 | 23 => Wire::I32,
                7 | 9 | 11 | 13 | 15 | 17 | 27 => Wire::Varint,
                4..=32 => Wire::Len,
                _ => {
                    r.skip(key.wire)?;
                    continue;
                }
            };
            key.expect(wire, &attr_field(key.field))?;
            let value = match key.field {
                1 => {
                    a.name = r.string()?;
                    continue;
                }
                2 => {
                    r.skip(wire)?;
                    continue;
                }
                3 => Value::Float(f64::from_bits(r.fixed64()?)),
                5 => Value::Float(f64::from(f32::from_bits(r.fixed32()?))),
                7 => Value::Int(i128::from(r.varint()? as u32 as i32)),
                9 => Value::Int(i128::from(r.varint()? as i64)),
                11 => Value::Int(i128::from(r.varint()? as u32)),
                13 => Value::Int(i128::from(r.varint()?)),
                15 => Value::Int(i128::from(unzigzag(r.varint()? as u32 as u64) as i32)),
                17 => Value::Int(i128::from(unzigzag(r.varint()?))),
                19 => Value::Int(i128::from(r.fixed32()?)),
                21 => Value::Int(i128::from(r.fixed64()?)),
                23 => Value::Int(i128::from(r.fixed32()? as i32)),
                25 => Value::Int(i128::from(r.fixed64()? as i64)),
                27 => Value::Bool(r.varint()? != 0),
                29 => Value::Str(r.delimited()?.rest()),
                f => {
                    r.skip(wire)?;
                    Value::Other(f)
                }
            };
            a.value = value;
            a.at = key.at;
        }
        Ok(a)
    }

    fn kind(&self) -> String {
        match self.value {
            Value::None => "no value".into(),
            Value::Int(_) => "an integer".into(),
            Value::Bool(_) => "a bool".into(),
            Value::Float(_) => "a floating-point value".into(),
            Value::Str(_) => "a string".into(),
            Value::Other(f) => format!("a {}", attr_field(f)),
        }
    }

    fn wrong(&self, want: &str) -> super::wire::Fault {
        fault(self.at, format!("attribute {} has {}, where {want} is expected", self.name, self.kind()))
    }

    /// Any integer member, as an `i64`.
    fn integer(&self) -> Result<i64> {
        match self.value {
            Value::Int(v) => i64::try_from(v).map_err(|_| {
                fault(self.at, format!("attribute {} is {v}, beyond 64-bit integers", self.name))
            }),
            _ => Err(self.wrong("an integer")),
        }
    }

    /// Any integer member from 0 to `max`.
    fn unsigned(&self, max: u64) -> Result<u64> {
        match self.value {
            Value::Int(v) if (0..=i128::from(max)).contains(&v) => Ok(v as u64),
            Value::Int(v) => Err(fault(self.at, format!("attribute {} is {v}, not in 0..={max}", self.name))),
            _ => Err(self.wrong("an integer")),
        }
    }

    fn u32(&self) -> Result<u32> {
        Ok(self.unsigned(u32::MAX.into())? as u32)
    }

    /// `bool_val`, or an integer (0 is false).
    fn boolean(&self) -> Result<bool> {
        match self.value {
            Value::Bool(b) => Ok(b),
            Value::Int(v) => Ok(v != 0),
            _ => Err(self.wrong("a bool")),
        }
    }

    /// `string_val`, or an integer written in decimal.
    fn text(&self) -> Result<String> {
        match self.value {
            Value::Str(s) => Ok(String::from_utf8_lossy(s).into_owned()),
            Value::Int(v) => Ok(v.to_string()),
            _ => Err(self.wrong("a string")),
        }
    }
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// `AttributeProto`'s field `f`, for messages.
fn attr_field(f: u64) -> String {
    const NAMES: [&str; 30] = [
        "double_val",
        "double_list",
        "float_val",
        "float_list",
        "int32_val",
        "int32_list",
        "int64_val",
        "int64_list",
        "uint32_val",
        "uint32_list",
        "uint64_val",
        "uint64_list",
        "sint32_val",
        "sint32_list",
        "sint64_val",
        "sint64_list",
        "fixed32_val",
        "fixed32_list",
        "fixed64_val",
        "fixed64_list",
        "sfixed32_val",
        "sfixed32_list",
        "sfixed64_val",
        "sfixed64_list",
        "bool_val",
        "bool_list",
        "string_val",
        "string_list",
        "bytes_val",
        "bytes_list",
    ];
    match f {
        1 => "AttributeProto.name".into(),
        2 => "AttributeProto.doc_string".into(),
        3..=32 => format!("AttributeProto.{}", NAMES[f as usize - 3]),
        f => format!("AttributeProto field {f}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_maps_back_to_signed() {
        assert_eq!(unzigzag(0), 0);
        assert_eq!(unzigzag(1), -1);
        assert_eq!(unzigzag(2), 1);
        assert_eq!(unzigzag(u64::MAX), i64::MIN);
    }

    #[test]
    fn kinds_and_types_follow_the_schema_s_numbers() {
        assert_eq!(CollectiveKind::from_number(0), Some(CollectiveKind::AllReduce));
        assert_eq!(CollectiveKind::from_number(7), Some(CollectiveKind::ReduceScatter));
        assert_eq!(CollectiveKind::from_number(9), Some(CollectiveKind::Barrier));
        assert_eq!(CollectiveKind::from_number(10), None);
        assert_eq!(CollectiveKind::from_number(-1), None);
        assert_eq!(NodeType::from_number(7), NodeType::CommColl);
        assert_eq!(NodeType::from_number(4).name(), "COMP_NODE");
        assert_eq!(attr_field(9), "AttributeProto.int64_val");
        assert_eq!(attr_field(32), "AttributeProto.bytes_list");
    }
}
