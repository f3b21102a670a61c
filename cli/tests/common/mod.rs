//! Helpers shared by the integration tests: running the binary and comparing HDF5 files
//! dataset by dataset (environment attributes aside).
#![allow(dead_code)]

use hdf5::types::{TypeDescriptor, VarLenAscii, VarLenUnicode};
use hdf5::{Attribute, Dataset, Datatype, File, Group, H5Type, Location};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod configs;
mod process;

// Not every test file uses every helper.
#[allow(unused_imports)]
pub use configs::*;
#[allow(unused_imports)]
pub use process::*;

pub const XNET: &str = env!("CARGO_BIN_EXE_xnet");

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli/ has a parent").to_path_buf()
}

pub fn describe(out: &Output) -> String {
    format!(
        "exit status {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `xnet args...` and asserts it exited with `code`.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Opens a result file for reading, without HDF5's file locking: the descriptor HDF5 opens
/// is not close-on-exec, so a lock taken here would travel into any process another test
/// thread spawns meanwhile and keep the file locked for as long as that process runs.
pub fn open(path: &Path) -> File {
    File::with_options()
        .with_fapl(|p| p.file_locking(false))
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()))
}

pub fn attr_str(loc: &Location, name: &str) -> String {
    let a = loc.attr(name).unwrap_or_else(|e| panic!("attribute {name} missing on {}: {e}", loc.name()));
    a.read_scalar::<VarLenUnicode>().unwrap_or_else(|e| panic!("attribute {name}: {e}")).as_str().to_string()
}

pub fn attr_f64(loc: &Location, name: &str) -> f64 {
    loc.attr(name)
        .and_then(|a| a.read_scalar::<f64>())
        .unwrap_or_else(|e| panic!("attribute {name} on {}: {e}", loc.name()))
}

pub fn attr_u64(loc: &Location, name: &str) -> u64 {
    loc.attr(name)
        .and_then(|a| a.read_scalar::<u64>())
        .unwrap_or_else(|e| panic!("attribute {name} on {}: {e}", loc.name()))
}

/// A subset of the columns of `/points/NNN/timeseries` (HDF5 matches members by name).
pub fn rows<T: H5Type>(file: &File, path: &str) -> Vec<T> {
    file.dataset(path)
        .unwrap_or_else(|e| panic!("dataset {path}: {e}"))
        .read_raw::<T>()
        .unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

// Raw reads: hdf5-metno can only read into a compile-time `H5Type`, so reading every
// dataset of a file whatever its type goes through `H5Dread` itself, into a packed copy of
// the dataset's own type (HDF5 drops the padding of the C-layout file type, whose bytes
// are not meaningful). hid_t is 64 bits since HDF5 1.10; H5S_ALL and H5P_DEFAULT are 0.
// The symbol comes from the libhdf5 that the `hdf5` crate links.
extern "C" {
    fn H5Dread(
        dset_id: i64,
        mem_type_id: i64,
        mem_space_id: i64,
        file_space_id: i64,
        plist_id: i64,
        buf: *mut std::ffi::c_void,
    ) -> std::ffi::c_int;
}

pub fn has_varlen(t: &TypeDescriptor) -> bool {
    match t {
        TypeDescriptor::VarLenArray(_) | TypeDescriptor::VarLenAscii | TypeDescriptor::VarLenUnicode => true,
        TypeDescriptor::Compound(c) => c.fields.iter().any(|f| has_varlen(&f.ty)),
        TypeDescriptor::FixedArray(t, _) => has_varlen(t),
        _ => false,
    }
}

/// The dataset's type and shape as text, and its elements as packed bytes.
pub fn dataset_bytes(ds: &Dataset) -> (String, Vec<u8>) {
    let name = ds.name();
    let desc = ds.dtype().and_then(|t| t.to_descriptor()).unwrap_or_else(|e| panic!("type of {name}: {e}"));
    assert!(!has_varlen(&desc), "{name}: variable-length data cannot be compared as bytes");
    let packed = desc.to_packed_repr();
    let mem = Datatype::from_descriptor(&packed).unwrap_or_else(|e| panic!("{name}: {e}"));
    let n = ds.size();
    let mut buf = vec![0u8; n * mem.size()];
    if n > 0 {
        let rc = hdf5::sync::sync(|| unsafe { H5Dread(ds.id(), mem.id(), 0, 0, 0, buf.as_mut_ptr().cast()) });
        assert!(rc >= 0, "H5Dread of {name} failed ({rc})");
    }
    (format!("{packed:?} shape {:?}", ds.shape()), buf)
}

/// An attribute's type, shape and value as text (floats by their bits, so NaN == NaN).
pub fn attr_text(a: &Attribute) -> String {
    let desc = a.dtype().and_then(|t| t.to_descriptor()).expect("attribute type");
    let values = match &desc {
        TypeDescriptor::VarLenUnicode => {
            format!(
                "{:?}",
                a.read_raw::<VarLenUnicode>().unwrap().iter().map(|v| v.as_str()).collect::<Vec<_>>()
            )
        }
        TypeDescriptor::VarLenAscii => {
            format!(
                "{:?}",
                a.read_raw::<VarLenAscii>().unwrap().iter().map(|v| v.as_str()).collect::<Vec<_>>()
            )
        }
        TypeDescriptor::Float(_) => {
            let v = a.read_raw::<f64>().unwrap();
            format!("{v:?} bits {:x?}", v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
        }
        TypeDescriptor::Unsigned(_) => format!("{:?}", a.read_raw::<u64>().unwrap()),
        TypeDescriptor::Integer(_) => format!("{:?}", a.read_raw::<i64>().unwrap()),
        TypeDescriptor::Boolean => format!("{:?}", a.read_raw::<bool>().unwrap()),
        other => panic!("attribute {}: unexpected type {other}", a.name()),
    };
    format!("{desc} shape {:?} = {values}", a.shape())
}

/// Every dataset (path -> type and bytes) and attribute (path@name -> text) of a file.
#[derive(Default)]
pub struct Dump {
    pub datasets: BTreeMap<String, (String, Vec<u8>)>,
    pub attrs: BTreeMap<String, String>,
}

pub fn dump_attrs(loc: &Location, dump: &mut Dump) {
    for name in loc.attr_names().expect("attribute names") {
        let a = loc.attr(&name).expect("attribute");
        dump.attrs.insert(format!("{}@{name}", loc.name()), attr_text(&a));
    }
}

pub fn dump_group(g: &Group, dump: &mut Dump) {
    dump_attrs(g, dump);
    for ds in g.datasets().expect("datasets") {
        dump_attrs(&ds, dump);
        dump.datasets.insert(ds.name(), dataset_bytes(&ds));
    }
    for sub in g.groups().expect("groups") {
        dump_group(&sub, dump);
    }
}

pub fn dump(path: &Path) -> Dump {
    let mut d = Dump::default();
    dump_group(&open(path), &mut d);
    d
}

/// Attributes that record the run's environment or wall-clock time, allowed to differ
/// between thread counts (docs/output-format.md lists them): besides those named in the
/// brief, `peak_rss_bytes` and `memory_estimate_bytes` (memory, per rank), `packet_hops_per_second` (a wall-clock rate), and
/// the MPI layout: `ranks` and the per-rank `rank_*` figures.
pub fn environment_attr(key: &str) -> bool {
    let name = key.rsplit('@').next().unwrap();
    matches!(
        name,
        "threads"
            | "partitions"
            | "lookahead"
            | "wall_seconds"
            | "windows"
            | "command"
            | "routing_build_seconds"
            | "peak_rss_bytes"
            | "memory_estimate_bytes"
            | "packet_hops_per_second"
            | "ranks"
    ) || name.starts_with("partition_")
        || name.starts_with("rank_")
}

/// Differences between two dumps (empty: identical up to environment attributes).
pub fn differences(a: &Dump, b: &Dump) -> Vec<String> {
    let mut diffs = Vec::new();
    let keys = |m: &BTreeMap<String, (String, Vec<u8>)>| m.keys().cloned().collect::<Vec<_>>();
    if keys(&a.datasets) != keys(&b.datasets) {
        diffs.push(format!("dataset sets differ: {:?} vs {:?}", keys(&a.datasets), keys(&b.datasets)));
    }
    for (path, (ta, ba)) in &a.datasets {
        let Some((tb, bb)) = b.datasets.get(path) else { continue };
        if ta != tb {
            diffs.push(format!("{path}: type/shape {ta} vs {tb}"));
        } else if ba != bb {
            let at = ba.iter().zip(bb).position(|(x, y)| x != y).unwrap_or(ba.len().min(bb.len()));
            diffs.push(format!("{path}: bytes differ from offset {at} ({} bytes)", ba.len()));
        }
    }
    let names = a.attrs.keys().chain(b.attrs.keys()).filter(|k| !environment_attr(k));
    for key in names.collect::<std::collections::BTreeSet<_>>() {
        let (va, vb) = (a.attrs.get(key), b.attrs.get(key));
        if va != vb {
            diffs.push(format!("attribute {key}: {va:?} vs {vb:?}"));
        }
    }
    diffs
}

/// A Python with the given modules: $XNET_PYTHON, then `.venv/bin/python3` of the
/// workspace, then `python3` on the PATH.
pub fn python_with(modules: &str) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("XNET_PYTHON").map(PathBuf::from).into_iter().collect();
    candidates.push(workspace().join(".venv/bin/python3"));
    candidates.push(PathBuf::from("python3"));
    candidates.into_iter().find(|py| {
        Command::new(py)
            .args(["-c", &format!("import {modules}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The modules the Python package `xnet_study` imports.
pub const XNET_STUDY_NEEDS: &str = "h5py, pandas, matplotlib";

/// `python -m xnet_study ARGS` with this workspace's package (`python/`) first on the path,
/// whatever package the interpreter has installed.
pub fn xnet_study(python: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(python);
    c.env("PYTHONPATH", workspace().join("python")).args(["-m", "xnet_study"]).args(args);
    c
}

/// A subset of the columns of `/points/NNN/timeseries`.
#[derive(H5Type, Clone, Copy, Debug)]
#[repr(C)]
pub struct TimeRow {
    pub time: u64,
    pub generated_packets: u64,
    pub delivered_packets: u64,
    pub in_flight: u64,
    pub accepted_load: f64,
}

/// A subset of the columns of `/summary`.
#[derive(H5Type, Clone, Copy, Debug)]
#[repr(C)]
pub struct SummaryRow {
    pub point: u32,
    pub completed: u8,
    pub saturated: u8,
    pub load: f64,
    pub offered_load: f64,
    pub accepted_load: f64,
    pub measured_delivered: u64,
    pub backlog_growth: f64,
}

/// A subset of the columns of `/points/NNN/blocked_channels`.
#[derive(H5Type, Clone, Copy, Debug)]
#[repr(C)]
pub struct BlockedRow {
    pub switch: u32,
    pub packets: u32,
}

/// A rank's row of `workload/job_NNN/ranks` (docs/output-format.md).
#[derive(hdf5::H5Type, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct RankRow {
    pub rank: u64,
    pub endpoint: u32,
    pub switch: u32,
    pub finish: u64,
    pub computing: u64,
    pub sending: u64,
    pub waiting: u64,
    pub finished: u64,
}
