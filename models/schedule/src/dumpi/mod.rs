//! Reading DUMPI traces: the MPI call traces of SST's DUMPI library (`sst-dumpi`), which
//! CODES and sst-macro replay. A trace is a `.meta` text file (the number of ranks, the
//! prefix of the per-rank files) and one binary file per rank, `PREFIX-RRRR.bin`.
//!
//! A rank's file (all integers big-endian): an 8-byte magic, the body (two `u32` time offsets
//! in seconds, then one record per MPI call, ended by function id 293), then the header
//! (version, start time, host), the footer (per function: calls made, calls made while
//! tracing was off), the table of datatype sizes, and at the end a 64-byte index of the
//! sections' offsets. A record is a `u16` function id, a `u8` mask of what follows (thread,
//! CPU times, wall times, performance counters, statuses), the times as `u16` seconds past
//! the offset and `u32` nanoseconds, then the call's arguments: counts, ranks, tags and
//! requests `i32`, communicators, datatypes and groups `u16`, operations `u8`, arrays with
//! a `u32` length. Records carry no length, so every function a file uses must be known.
//! Layouts follow sst-dumpi's `dumpi/common/` (commit a4c8bf5; its `docs/traceformat.dox`
//! describes statuses wrongly: they are 14-byte entries, one per status).
//!
//! This module parses: [`parse_meta`] a `.meta` file, [`parse_rank`] one rank's file into
//! its [`Call`]s with their wall-clock times and the datatype sizes. Errors name the file,
//! the rank and the byte offset ([`DumpiError`]). Turning calls into a schedule is the
//! converter's business.

mod calls;
mod cursor;

pub use calls::{CallKind, SendMode};

use cursor::Cursor;
use std::fmt;

/// Why a trace could not be read: the file, the rank (when known), the byte offset and
/// what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpiError {
    /// The file, as named to the reader.
    pub file: String,
    /// The rank whose file it is.
    pub rank: Option<u32>,
    /// The byte offset in the file (a rank's binary file).
    pub offset: u64,
    /// The line, for the `.meta` file's text (then `offset` is 0); `Some(0)` for what is
    /// missing from it.
    pub line: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DumpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if let Some(r) = self.rank {
            write!(f, "rank {r}: ")?;
        }
        match self.line {
            Some(0) => write!(f, "{}", self.message),
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => write!(f, "byte {}: {}", self.offset, self.message),
        }
    }
}

impl std::error::Error for DumpiError {}

/// A trace's `.meta` file: what it says of the ranks' files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Ranks (`numprocs`).
    pub ranks: u32,
    /// The prefix of the ranks' files (`fileprefix`), relative to the `.meta` file's folder.
    pub prefix: String,
}

impl Meta {
    /// The file name of `rank`'s trace: `PREFIX-RRRR.bin` (four digits at least).
    pub fn rank_file(&self, rank: u32) -> String {
        format!("{}-{rank:04}.bin", self.prefix)
    }
}

/// Reads a `.meta` file's text (`key=value` lines; other lines are ignored); `file` names
/// it in errors (whose offset is the line's).
pub fn parse_meta(text: &str, file: &str) -> Result<Meta, DumpiError> {
    let err = |line: u32, message: String| DumpiError {
        file: file.into(),
        rank: None,
        offset: 0,
        line: Some(line),
        message,
    };
    let (mut ranks, mut prefix) = (None, None);
    for (number, line) in (1u32..).zip(text.split_inclusive('\n')) {
        if let Some((key, value)) = line.trim_end().split_once('=') {
            match key.trim() {
                "numprocs" => {
                    let n = value.trim().parse::<u32>().ok().filter(|&n| n > 0);
                    ranks = Some(n.ok_or_else(|| {
                        err(
                            number,
                            format!("numprocs must be a number of ranks >= 1, got `{}`", value.trim()),
                        )
                    })?);
                }
                "fileprefix" => prefix = Some(value.trim().to_string()),
                _ => {}
            }
        }
    }
    match (ranks, prefix) {
        (Some(ranks), Some(prefix)) if !prefix.is_empty() => Ok(Meta { ranks, prefix }),
        (None, _) => Err(err(0, "no numprocs line: not a DUMPI .meta file".into())),
        _ => Err(err(0, "no fileprefix line: not a DUMPI .meta file".into())),
    }
}

/// One MPI call of a rank: where its record is, when it ran (wall clock, nanoseconds since
/// the trace's time offset) and what it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The byte offset of its record in the rank's file.
    pub offset: u64,
    /// When the call was entered.
    pub start: u64,
    /// When it returned.
    pub end: u64,
    /// The call and its arguments.
    pub kind: CallKind,
}

/// One rank's trace, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankTrace {
    /// The DUMPI version that wrote it.
    pub version: [u8; 3],
    /// Per datatype id, its size in bytes as the traced program's MPI gave it (`MPI_CHAR`
    /// is id 2, user types from 28).
    pub datatype_sizes: Vec<i32>,
    /// The calls, in order.
    pub calls: Vec<Call>,
}

impl RankTrace {
    /// Bytes of `count` elements of datatype `datatype` (0 for a datatype the table does not
    /// size).
    pub fn bytes(&self, count: i32, datatype: u16) -> u64 {
        let size = self.datatype_sizes.get(datatype as usize).copied().unwrap_or(0);
        (count.max(0) as u64) * (size.max(0) as u64)
    }
}

const MAGIC: u64 = 0xFFAA_DD44_554D_5049;
const FOOTER_MAGIC: u64 = 0xF007_FEE7;
const END_OF_STREAM: u16 = 293;

/// Reads rank `rank`'s trace file `bytes` (named `file` in errors).
pub fn parse_rank(bytes: &[u8], file: &str, rank: u32) -> Result<RankTrace, DumpiError> {
    let mut c = Cursor::new(bytes, file, rank);
    if bytes.len() < 8 + 64 || c.u64()? != MAGIC {
        return Err(c.error_at(0, "not a DUMPI trace: no magic number at its start, or too short"));
    }
    let index = Index::read(&mut c)?;
    let version = read_version(&mut c, index.header)?;
    if version[0] == 0 {
        return Err(c.error_at(
            index.header,
            format!(
                "DUMPI version {}.{}.{} is older than 1.0, which this reader needs",
                version[0], version[1], version[2]
            ),
        ));
    }
    let datatype_sizes = if index.sizes == 0 {
        Vec::new()
    } else {
        c.seek(index.sizes)?;
        let n = c.u32()?;
        (0..n).map(|_| c.i32()).collect::<Result<_, _>>()?
    };
    c.seek(index.body)?;
    c.u32()?; // the CPU clock's offset: CPU times are not used
    let wall_offset = u64::from(c.u32()?);
    let mut calls = Vec::new();
    loop {
        let at = c.offset();
        let id = c.u16()?;
        if id == END_OF_STREAM {
            break;
        }
        let mask = c.u8()?;
        if mask & 0x40 != 0 {
            c.u16()?; // the thread
        }
        if mask & 0x04 != 0 {
            c.skip(12)?; // CPU times
        }
        let (start, end) = if mask & 0x08 != 0 {
            let mut time = || -> Result<u64, DumpiError> {
                let sec = u64::from(c.u16()?) + wall_offset;
                Ok(sec * 1_000_000_000 + u64::from(c.u32()?))
            };
            (time()?, time()?)
        } else {
            (0, 0)
        };
        if mask & 0x80 != 0 {
            let k = c.u8()?;
            c.skip(16 * u64::from(k))?;
        }
        let statuses = mask & 0x03 != 0;
        let Some(kind) = calls::read(&mut c, id, statuses, version)? else {
            let what = match calls::name(id) {
                Some(n) => format!("{n} (DUMPI function {id})"),
                None => format!("DUMPI function {id}"),
            };
            return Err(c.error_at(
                at,
                format!("unsupported call {what}: its arguments cannot be read, so neither can the calls after it"),
            ));
        };
        calls.push(Call { offset: at, start, end, kind });
    }
    Ok(RankTrace { version, datatype_sizes, calls })
}

/// The offsets of a file's sections, from the index at its end (0: absent).
struct Index {
    sizes: u64,
    header: u64,
    body: u64,
}

impl Index {
    fn read(c: &mut Cursor<'_>) -> Result<Index, DumpiError> {
        let end = c.len() - 64;
        c.seek(end)?;
        // Since DUMPI 0.6.6 the index is: magic, sizes, addresses, counters, header, body,
        // footer, key-values; older files have fewer slots before the magic.
        let mut sizes = 0;
        let mut seen_magic = false;
        for slot in 0..3 {
            if c.u64()? == MAGIC {
                seen_magic = true;
                let value = c.u64()?;
                if slot == 0 {
                    sizes = value;
                }
                // The address and counter tables are not used.
                for _ in slot + 1..3 {
                    c.u64()?;
                }
                break;
            }
        }
        if !seen_magic && c.u64()? != MAGIC {
            return Err(c.error_at(
                end,
                "the index at the end of the file has no magic number: truncated or not DUMPI",
            ));
        }
        let header = c.u64()?;
        let body = c.u64()?;
        let footer = c.u64()?;
        let len = c.len();
        for (what, at) in [("sizes", sizes), ("header", header), ("body", body), ("footer", footer)] {
            if at >= len {
                return Err(c.error_at(
                    end,
                    format!("the index puts the {what} at byte {at}, past the end ({len} bytes)"),
                ));
            }
        }
        c.seek(footer)?;
        if c.u64()? != FOOTER_MAGIC {
            return Err(c.error_at(footer, "no footer where the index says"));
        }
        Ok(Index { sizes, header, body })
    }
}

/// The version in the header at `at`.
fn read_version(c: &mut Cursor<'_>, at: u64) -> Result<[u8; 3], DumpiError> {
    c.seek(at)?;
    Ok([c.u8()?, c.u8()?, c.u8()?])
}
