//! Binds the OTF2 C library: finds it with pkg-config and generates the bindings of the
//! reader API from its headers.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let library = match pkg_config::Config::new().atleast_version("2.0").probe("otf2") {
        Ok(library) => library,
        Err(e) => {
            eprintln!(
                "error: the OTF2 library was not found ({e}).\n\
                 Install it with `scripts/bootstrap.sh` (Debian/Ubuntu: apt-get install \
                 libopen-trace-format2-dev), or build xnet without OTF2 traces: \
                 `cargo build --no-default-features --features mpi`."
            );
            std::process::exit(1);
        }
    };
    let mut builder = bindgen::Builder::default()
        .header_contents("xnet_otf2.h", "#include <stdio.h>\n#include <stdarg.h>\n#include <otf2/otf2.h>\n")
        .allowlist_function("OTF2_(Reader|GlobalDefReaderCallbacks|EvtReaderCallbacks|Error)_.*")
        .allowlist_function("vsnprintf")
        .allowlist_type("OTF2_.*")
        .allowlist_var("OTF2_.*")
        // `OTF2_PARADIGM_MPI` rather than `OTF2_Paradigm_enum_OTF2_PARADIGM_MPI`.
        .prepend_enum_name(false)
        .layout_tests(false);
    for path in &library.include_paths {
        builder = builder.clang_arg(format!("-I{}", path.display()));
    }
    let bindings = builder.generate().expect("bindgen reads the OTF2 headers");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    bindings.write_to_file(out.join("otf2.rs")).expect("the bindings are written to OUT_DIR");
}
