//! Stop requests for long computations: routing-table builds and the route verifier can
//! take minutes, so a signal handler sets this process-wide flag and their loops check it
//! between units of work (a destination, a layer, a cycle to break), returning an error
//! instead of finishing. A simulation given [`flag`] stops at its next sample.

use crate::topology::TopologyError;
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks the running computations to stop (called from a signal handler's thread).
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The flag itself, for a simulation's `interrupt` argument.
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}

/// `Err` naming `what` was interrupted, once a stop was asked for.
pub fn check(what: &str) -> Result<(), TopologyError> {
    if requested() {
        Err(TopologyError::new("routing", format!("interrupted while {what}")))
    } else {
        Ok(())
    }
}
