//! # xnet-base: what every model layer shares
//!
//! The bottom of the model's crates (`xnet-topology`, `xnet-routing`, `xnet-models` build
//! on it): the description of configurable entries and the errors that name a
//! configuration key ([`settings`]), one deterministic random stream per
//! `(seed, purpose, id)` ([`rng`]), the process-wide stop flag that long computations
//! check ([`cancel`]), and a cache hint ([`cache::prefetch`]). It knows no topology,
//! routing or router.
#![warn(missing_docs, unreachable_pub)]

pub mod cache;
pub mod cancel;
pub mod rng;
pub mod settings;

#[doc(hidden)]
pub use serde as __serde;
