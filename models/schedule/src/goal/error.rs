//! The error of reading a GOAL file.

use std::io;

/// Why a GOAL file could not be read: an I/O error, or a syntax error naming the file, the
/// line, the rank (inside a rank's block) and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum GoalError {
    /// Reading the file failed.
    #[error("{file}: {source}")]
    Io {
        /// The file's name as given to the reader.
        file: String,
        /// The error.
        source: io::Error,
    },
    /// The text is not GOAL.
    #[error("{file}:{line}: {}{message}", in_rank(.rank))]
    Syntax {
        /// The file's name as given to the reader.
        file: String,
        /// The line, from 1.
        line: u64,
        /// The rank whose block the line is in.
        rank: Option<u32>,
        /// What is wrong, e.g. "expected 'to' after the size, got 'from'".
        message: String,
    },
}

/// `"rank 3: "`, or nothing outside a rank.
fn in_rank(rank: &Option<u32>) -> String {
    rank.map(|r| format!("rank {r}: ")).unwrap_or_default()
}
