//! The error of the binary readers (Chakra traces, binary GOAL): the file, the rank, the
//! byte and what was wrong.

use std::fmt;

/// Why a binary file could not be read or converted: the file, the rank (when known), the
/// byte offset and what was wrong. Shown as `FILE: rank R: byte B: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteError {
    /// The file, as named to the reader.
    pub file: String,
    /// The rank whose data it is (`None` for a file of no rank, or before one is known).
    pub rank: Option<u32>,
    /// The byte offset in the file.
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ByteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if let Some(r) = self.rank {
            write!(f, "rank {r}: ")?;
        }
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ByteError {}
