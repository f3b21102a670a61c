//! The reader's error.

use std::fmt;

/// Why an archive cannot be replayed: the archive, the rank and event where known, and what
/// is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Otf2Error {
    /// The archive's anchor file, as given.
    pub file: String,
    /// The MPI rank whose events are wrong, if one is.
    pub rank: Option<u32>,
    /// The event's position among its location's events (0 is the first).
    pub event: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Otf2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(r) = self.rank {
            write!(f, ": rank {r}")?;
        }
        if let Some(e) = self.event {
            write!(f, ": event {e}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for Otf2Error {}
