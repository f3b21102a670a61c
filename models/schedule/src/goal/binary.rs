//! Binary GOAL: the file LogGOPSim's `txt2bin` writes from a GOAL text (its
//! `Parser.hpp`, `Graph::serialize_mmap`, read at commit 76451de of spcl/LogGOPSim), in
//! which ATLAHS publishes its traces. All integers are little-endian, records packed:
//!
//! - at byte 0, the magic cookie 4223 (`u64`); then, at byte 8, the file's *base*: the
//!   number of ranks (`u32`), the largest cpu and nic (`u8`, `u8`), and per rank the start
//!   and end of its data (`u64`, `u64`, offsets from the base);
//! - per rank: its number of ops (`u32`) and of ops that depend on nothing (`u32`), their
//!   indices (`u32` each), then one 39-byte record per op in the text's order: the number
//!   of ops it depends on (`u32`), its type (`u8`: 1 send, 2 receive, 3 calc), peer
//!   (`u32`, `0xffffffff` any source), size or time (`u64`), tag (`u32`, `0xffffffff` any
//!   tag), cpu and nic (`u8`, `u8`), the number of ops that wait for its end and the index
//!   of the first of them in the rank's appendix (`u32`, `u32`), the same for the ops that
//!   wait for its start (`u32`, `u32`); then the appendix, op indices (`u32` each).
//!
//! Every count and index is checked against the file before it is used, so that a damaged
//! file is refused, naming the rank and the byte, and never read past its end. Binary
//! GOAL has no labels and no communicators: the ops are numbered as in the text, and
//! every message is on communicator 0.

use crate::graph::{Op, OpId, Schedule, ScheduleBuilder, Source, TagMatch};

/// The cookie at the start of a binary GOAL file (`MAGIC_COOKIE`).
pub const MAGIC_COOKIE: u64 = 4223;

/// The bytes of an op's record.
const RECORD: usize = 4 + 1 + 4 + 8 + 4 + 1 + 1 + 4 * 4;

/// LogGOPSim's "any source" and "any tag".
const ANY: u32 = u32::MAX;

/// Why a binary GOAL file could not be read: the file, the rank (when known), the byte and
/// what was wrong.
pub type BinaryGoalError = crate::ByteError;

/// Whether `bytes` start as a binary GOAL file does.
pub fn is_binary_goal(bytes: &[u8]) -> bool {
    bytes.get(..8).is_some_and(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) == MAGIC_COOKIE)
}

/// Reads the little-endian integers of a file, every read checked against its end.
struct Bytes<'a> {
    data: &'a [u8],
    file: &'a str,
    rank: Option<u32>,
}

impl Bytes<'_> {
    fn fail(&self, offset: usize, message: impl Into<String>) -> BinaryGoalError {
        BinaryGoalError {
            file: self.file.to_string(),
            rank: self.rank,
            offset: offset as u64,
            message: message.into(),
        }
    }

    fn take<const N: usize>(&self, at: usize, what: &str) -> Result<[u8; N], BinaryGoalError> {
        at.checked_add(N)
            .and_then(|end| self.data.get(at..end))
            .map(|b| b.try_into().expect("N bytes"))
            .ok_or_else(|| self.fail(at, format!("the file ends before {what} ({} bytes)", self.data.len())))
    }

    fn u8(&self, at: usize, what: &str) -> Result<u8, BinaryGoalError> {
        Ok(self.take::<1>(at, what)?[0])
    }

    fn u32(&self, at: usize, what: &str) -> Result<u32, BinaryGoalError> {
        Ok(u32::from_le_bytes(self.take(at, what)?))
    }

    fn u64(&self, at: usize, what: &str) -> Result<u64, BinaryGoalError> {
        Ok(u64::from_le_bytes(self.take(at, what)?))
    }
}

/// The schedule of the binary GOAL file `data` (named `file` in errors).
pub fn read_goal_binary(data: &[u8], file: &str) -> Result<Schedule, BinaryGoalError> {
    let mut r = Bytes { data, file, rank: None };
    let cookie = r.u64(0, "the magic cookie")?;
    if cookie != MAGIC_COOKIE {
        return Err(r.fail(0, format!("not a binary GOAL file: it starts with {cookie}, not {MAGIC_COOKIE}")));
    }
    const BASE: usize = 8;
    let ranks = r.u32(BASE, "the number of ranks")?;
    let table = BASE + 6;
    // The jump table must fit before anything is allocated for the ranks.
    if (ranks as usize).saturating_mul(16) > data.len().saturating_sub(table) {
        return Err(
            r.fail(BASE, format!("{ranks} ranks' jump table does not fit the file's {} bytes", data.len()))
        );
    }
    let mut b = ScheduleBuilder::new();
    for rank in 0..ranks {
        r.rank = Some(rank);
        b.add_rank();
        let entry = table + 16 * rank as usize;
        let start = r.u64(entry, "the rank's start")?;
        let end = r.u64(entry + 8, "the rank's end")?;
        let (start, end) = (BASE as u64 + start, BASE as u64 + end);
        if start > end || end > data.len() as u64 {
            return Err(r.fail(
                entry,
                format!("the rank's data {start}..{end} is not within the file's {} bytes", data.len()),
            ));
        }
        read_rank(&r, &mut b, ranks, start as usize, end as usize)?;
    }
    Ok(b.build())
}

/// Rank `r.rank`'s data at `start..end` into the builder's current rank.
fn read_rank(
    r: &Bytes<'_>,
    b: &mut ScheduleBuilder,
    ranks: u32,
    start: usize,
    end: usize,
) -> Result<(), BinaryGoalError> {
    let ops = r.u32(start, "the number of ops")? as usize;
    let roots = r.u32(start + 4, "the number of independent ops")? as usize;
    let records = start + 8 + 4 * roots;
    let appendix = ops
        .checked_mul(RECORD)
        .and_then(|n| n.checked_add(records))
        .filter(|&a| a <= end)
        .ok_or_else(|| {
            r.fail(
                start,
                format!("{ops} ops and {roots} independent ops do not fit the rank's {} bytes", end - start),
            )
        })?;
    let appendix_len = (end - appendix) / 4;
    let mut waits = vec![0u32; ops];
    let mut edges: Vec<(OpId, OpId, bool)> = Vec::new();
    for k in 0..ops {
        let at = records + k * RECORD;
        let kind = r.u8(at + 4, "an op's type")?;
        let peer = r.u32(at + 5, "an op's peer")?;
        let size = r.u64(at + 9, "an op's size")?;
        let tag = r.u32(at + 17, "an op's tag")?;
        let (cpu, nic) = (r.u8(at + 21, "an op's cpu")?, r.u8(at + 22, "an op's nic")?);
        let rank_ok = |p: u32| p < ranks;
        let op = match kind {
            1 if rank_ok(peer) => Op::Send { to: peer, bytes: size, tag, comm: 0 },
            2 if peer == ANY || rank_ok(peer) => Op::Recv {
                from: if peer == ANY { Source::Any } else { Source::Rank(peer) },
                bytes: size,
                tag: if tag == ANY { TagMatch::Any } else { TagMatch::Tag(tag) },
                comm: 0,
            },
            3 => Op::Calc { time: size },
            1 | 2 => return Err(r.fail(at + 5, format!("op {k}'s peer {peer} is not a rank of the {ranks}"))),
            other => {
                return Err(
                    r.fail(at + 4, format!("op {k} has type {other}, not 1 (send), 2 (recv) or 3 (calc)"))
                )
            }
        };
        let id = b.op(op);
        b.place(id, cpu, nic);
        for (field, start_dep) in [(at + 23, false), (at + 31, true)] {
            let count = r.u32(field, "an op's dependents")? as usize;
            let first = r.u32(field + 4, "an op's dependents")? as usize;
            if count == 0 {
                continue;
            }
            if first.checked_add(count).is_none_or(|e| e > appendix_len) {
                return Err(r.fail(
                    field,
                    format!(
                        "op {k}'s {count} dependents from {first} overrun the appendix of {appendix_len}"
                    ),
                ));
            }
            for i in first..first + count {
                let at = appendix + 4 * i;
                let next = r.u32(at, "a dependent")? as usize;
                if next >= ops {
                    return Err(
                        r.fail(at, format!("op {k} has dependent {next}, beyond the rank's {ops} ops"))
                    );
                }
                waits[next] += 1;
                edges.push((next as OpId, k as OpId, start_dep));
            }
        }
    }
    // The counts each record keeps of what it waits for must agree with the edges.
    for (k, &n) in waits.iter().enumerate() {
        let at = records + k * RECORD;
        let count = r.u32(at, "an op's dependency count")?;
        if count != n {
            return Err(r.fail(at, format!("op {k} says it waits for {count} ops, but {n} name it")));
        }
    }
    for (next, before, start_dep) in edges {
        if start_dep {
            b.irequires(next, before);
        } else {
            b.requires(next, before);
        }
    }
    Ok(())
}
