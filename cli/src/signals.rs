//! Signals: SIGINT, SIGTERM and SIGHUP end the process at once while nothing has been
//! written, and stop it cleanly (through [`models::cancel`]) from a run's preparation on.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the process is in a part that stops cleanly on a signal: the run's
/// preparation, build and simulation, which check [`models::cancel`] (see
/// [`stop_cleanly_on_signals`]). Before it, a signal ends the process at once.
static STOPS_CLEANLY: AtomicBool = AtomicBool::new(false);

/// Catches SIGINT, SIGTERM and SIGHUP (called once, first thing). Before
/// [`stop_cleanly_on_signals`], nothing has been written and nothing checks the stop
/// flag: the process says so and exits with 130. After it, the signal goes to
/// [`models::cancel`]: a simulation stops at the end of its current window (with a last
/// sample there), routing builds, trace readers and the verifier between units of work
/// (they then fail with "interrupted while ...", and the process exits with 130).
pub(crate) fn stop_on_signals() {
    let _ = ctrlc::set_handler(|| {
        models::cancel::request();
        if !STOPS_CLEANLY.load(Ordering::SeqCst) {
            eprintln!("\ninterrupted by a signal before anything was written");
            std::process::exit(130);
        }
    });
}

/// From here on a signal stops the process cleanly (see [`stop_on_signals`]).
pub(crate) fn stop_cleanly_on_signals() {
    STOPS_CLEANLY.store(true, Ordering::SeqCst);
}
