//! The OTF2 C API, as bindgen generates it from the installed headers (build.rs).
#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::all
)]

include!(concat!(env!("OUT_DIR"), "/otf2.rs"));
