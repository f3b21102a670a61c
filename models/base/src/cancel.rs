//! Stop requests for long computations: routing-table builds and the route verifier can
//! take minutes, so a signal handler sets this process-wide flag and their loops check it
//! between units of work (a destination, a layer, a cycle to break), returning an error
//! instead of finishing. A simulation given [`flag`] stops at the end of its current synchronisation window.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// The stop was asked for because the process cannot go on (not by a signal).
static FAILED: AtomicBool = AtomicBool::new(false);

/// Asks the running computations to stop (called from a signal handler's thread).
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Stops the computations because the process cannot go on (e.g. its output file cannot
/// grow): they stop as for a signal, but [`interrupted`] stays false, so that the process
/// reports a failure rather than an interruption.
pub fn request_after_failure() {
    FAILED.store(true, Ordering::Relaxed);
    request();
}

/// Whether a signal asked to stop (not a failure: [`request_after_failure`]).
pub fn interrupted() -> bool {
    requested() && !FAILED.load(Ordering::Relaxed)
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The flag itself, for a simulation's `interrupt` argument.
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}

/// A computation stopped because a stop was asked for; the message says what it was doing
/// ("interrupted while building the Nue layers"). The error types of the layers above
/// convert it, so that `check(..)?` works in any of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("interrupted while {0}")]
pub struct Interrupted(pub String);

impl From<Interrupted> for crate::settings::ConfigError {
    /// Reported under `routing`: the computations that check the flag build routes.
    fn from(e: Interrupted) -> Self {
        crate::settings::ConfigError::new("routing", e.to_string())
    }
}

/// `Err` naming `what` was interrupted, once a stop was asked for.
pub fn check(what: &str) -> Result<(), Interrupted> {
    if requested() {
        Err(Interrupted(what.to_string()))
    } else {
        Ok(())
    }
}
