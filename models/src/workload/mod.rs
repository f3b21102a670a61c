//! Application workloads: jobs whose ranks run small programs on the endpoints, sending
//! messages that depend on the messages they received, until every rank has finished.
//!
//! A `[workload]` section lists jobs (`[[workload.jobs]]`), each with a kind (a built-in
//! program, [`WORKLOADS`]), its parameters, the iterations to run, the cycles to compute
//! after each iteration, and a mapping of its ranks to endpoints (linear, random with a
//! seed, or a file). Jobs take disjoint endpoints. Without a `[traffic]` section only the
//! jobs inject; with one, the endpoints that run no rank generate its pattern at its load
//! as background traffic, so that interference can be studied.
//!
//! Messages are split into packets of `router.packet_size` phits of `bytes_per_phit`
//! bytes. A packet carries its step in its id (see [`Workload::tag`]), so a receiver
//! counts packets that arrive early, for a step it has not reached, towards that step.
//! The router side (what a rank does when packets arrive and when its computation ends)
//! is `router/app.rs`.

mod programs;

pub use programs::{random_permutations, AllReduce, AllToAll, Order, Program};

use base::rng::{shuffle, stream, Purpose};
use base::settings::{names, unknown, EntryDoc, FileKey, Setting};
use base::settings::{typed, ConfigError};
use serde::Deserialize;
use std::sync::Arc;
use toml::{Table, Value};
use topology::EndpointId;

/// Every workload kind `workload.jobs[].kind` accepts, in the order `xnet list` shows
/// them. A test checks that each parses with exactly the keys listed.
pub const WORKLOADS: &[WorkloadEntry] = &[
    WorkloadEntry {
        name: "stencil2d",
        doc: "halo exchange on a 2D process grid: each rank sends halo_bytes to its 4 neighbours and receives from them, then computes (the DAVC seed's Stencil 2D)",
        settings: &[
            Setting { key: "grid", default: "required", doc: "process grid [x, y]; ranks = x * y, rank r at (r mod x, r div x)" },
            Setting { key: "halo_bytes", default: "required", doc: "bytes sent to each neighbour per iteration" },
            Setting { key: "periodic", default: "true", doc: "neighbours wrap around the grid's edges (a torus of processes)" },
        ],
    },
    WorkloadEntry {
        name: "stencil3d",
        doc: "halo exchange on a 3D process grid: 6 neighbours (the DAVC seed's Stencil 3D)",
        settings: &[
            Setting { key: "grid", default: "required", doc: "process grid [x, y, z]" },
            Setting { key: "halo_bytes", default: "required", doc: "bytes sent to each neighbour per iteration" },
            Setting { key: "periodic", default: "true", doc: "neighbours wrap around the grid's edges" },
        ],
    },
    WorkloadEntry {
        name: "butterfly",
        doc: "recursive doubling: log2(ranks) steps, in step k rank r exchanges message_bytes with r xor 2^k (the DAVC seed's Butterfly)",
        settings: &[
            Setting { key: "ranks", default: "required", doc: "ranks, a power of two" },
            Setting { key: "message_bytes", default: "required", doc: "bytes per message" },
        ],
    },
    WorkloadEntry {
        name: "waterfall",
        doc: "a pipelined wavefront of small messages (the DAVC seed's Waterfall): each iteration is a wave; a rank waits for the wave's message from its predecessor in every grid dimension, then sends to its successors",
        settings: &[
            Setting { key: "grid", default: "required", doc: "process grid, 1 to 3 dimensions, e.g. [73, 72]" },
            Setting { key: "message_bytes", default: "required", doc: "bytes per message" },
        ],
    },
    WorkloadEntry {
        name: "alltoall",
        doc: "all-to-all personalized exchange, pairwise (ranks - 1 steps: send to r + k, receive from r - k) or linear (one step: send to every other rank)",
        settings: &[
            Setting { key: "ranks", default: "required", doc: "ranks" },
            Setting { key: "message_bytes", default: "required", doc: "bytes from each rank to each other rank" },
            Setting { key: "algorithm", default: "pairwise", doc: "`pairwise` or `linear`" },
        ],
    },
    WorkloadEntry {
        name: "allreduce",
        doc: "all-reduce of a vector: ring (2 (ranks - 1) steps of bytes / ranks to the next rank) or recursive doubling (log2(ranks) steps of all the bytes with r xor 2^k)",
        settings: &[
            Setting { key: "ranks", default: "required", doc: "ranks (a power of two for recursive_doubling)" },
            Setting { key: "bytes", default: "required", doc: "bytes of the vector reduced" },
            Setting { key: "algorithm", default: "ring", doc: "`ring` or `recursive_doubling`" },
        ],
    },
    WorkloadEntry {
        name: "random_permutation",
        doc: "bursts: in each iteration every rank sends message_bytes to its image under a random permutation drawn for that iteration, and waits for the message addressed to it",
        settings: &[
            Setting { key: "ranks", default: "required", doc: "ranks" },
            Setting { key: "message_bytes", default: "required", doc: "bytes per message" },
        ],
    },
];

/// The keys every job takes, whatever its kind.
pub const JOB_SETTINGS: &[Setting] = &[
    Setting { key: "kind", default: "required", doc: "the program: one of the workloads above" },
    Setting { key: "name", default: "KIND-INDEX", doc: "the job's name in the output" },
    Setting { key: "iterations", default: "1", doc: "times the program's steps run (waterfall: waves)" },
    Setting { key: "compute", default: "0", doc: "cycles a rank computes after each iteration's communication" },
    Setting { key: "mapping", default: "linear", doc: "rank to endpoint: `linear` (the lowest free endpoints, rank order), `random` (a random sample of the free endpoints) or `file` (mapping_file)" },
    Setting { key: "first_endpoint", default: "the lowest free one", doc: "linear mapping: the endpoint of rank 0" },
    Setting { key: "mapping_seed", default: "simulation.seed", doc: "random mapping: its seed" },
    Setting { key: "mapping_file", default: "required with mapping = \"file\"", doc: "a text file with one endpoint id per rank, in rank order (blank lines and # comments ignored); relative to the working directory, read by the xnet command into mapping_contents" },
    Setting { key: "mapping_contents", default: "from mapping_file", doc: "the mapping's text: filled in from mapping_file by the xnet command (and so recorded with the results); give it instead of mapping_file to inline a mapping" },
];

/// The keys of a job that name a file: its rank mapping (`mapping = "file"`), which the
/// `xnet` command reads into `mapping_contents`.
pub const JOB_FILES: &[FileKey] =
    &[FileKey { path: "mapping_file", contents: "mapping_contents", what: "the rank mapping" }];

/// The keys of `[workload]` itself.
pub const SECTION_SETTINGS: &[Setting] = &[
    Setting {
        key: "bytes_per_phit",
        default: "16",
        doc:
            "bytes one phit carries: a message of B bytes is ceil(B / (packet_size x bytes_per_phit)) packets",
    },
    Setting { key: "jobs", default: "required", doc: "the jobs, as [[workload.jobs]] tables" },
];

/// One workload kind in the registry.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadEntry {
    /// Name in `workload.jobs[].kind`.
    pub name: &'static str,
    /// What it does.
    pub doc: &'static str,
    /// Its keys in the job's table, documented.
    pub settings: &'static [Setting],
}

impl WorkloadEntry {
    /// As users see it.
    pub fn doc(&self) -> EntryDoc {
        EntryDoc { name: self.name, doc: self.doc, details: Vec::new(), settings: self.settings }
    }
}

/// A job's program and parameters, as configured.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum KindSpec {
    /// See [`WORKLOADS`].
    Stencil2d {
        /// Process grid.
        grid: [u32; 2],
        /// Bytes per face.
        halo_bytes: u64,
        /// Wrap around.
        #[serde(default = "yes")]
        periodic: bool,
    },
    /// See [`WORKLOADS`].
    Stencil3d {
        /// Process grid.
        grid: [u32; 3],
        /// Bytes per face.
        halo_bytes: u64,
        /// Wrap around.
        #[serde(default = "yes")]
        periodic: bool,
    },
    /// See [`WORKLOADS`].
    Butterfly {
        /// Ranks (a power of two).
        ranks: u32,
        /// Bytes per message.
        message_bytes: u64,
    },
    /// See [`WORKLOADS`].
    Waterfall {
        /// Process grid.
        grid: Vec<u32>,
        /// Bytes per message.
        message_bytes: u64,
    },
    /// See [`WORKLOADS`].
    Alltoall {
        /// Ranks.
        ranks: u32,
        /// Bytes per message.
        message_bytes: u64,
        /// `pairwise` or `linear`.
        #[serde(default = "pairwise")]
        algorithm: String,
    },
    /// See [`WORKLOADS`].
    Allreduce {
        /// Ranks.
        ranks: u32,
        /// Bytes reduced.
        bytes: u64,
        /// `ring` or `recursive_doubling`.
        #[serde(default = "ring")]
        algorithm: String,
    },
    /// See [`WORKLOADS`].
    RandomPermutation {
        /// Ranks.
        ranks: u32,
        /// Bytes per message.
        message_bytes: u64,
    },
}

fn yes() -> bool {
    true
}
fn pairwise() -> String {
    "pairwise".into()
}
fn ring() -> String {
    "ring".into()
}

/// Where a job's ranks run.
#[derive(Clone, Debug, PartialEq)]
pub enum Mapping {
    /// Consecutive endpoints from `first` (default: the lowest free endpoints).
    Linear {
        /// Endpoint of rank 0.
        first: Option<EndpointId>,
    },
    /// A random sample of the free endpoints, in random order.
    Random {
        /// Seed (default: the run's).
        seed: Option<u64>,
    },
    /// Listed in a file (`mapping_file`), whose text the `xnet` command puts in
    /// `mapping_contents` ([`JOB_FILES`]).
    File {
        /// The file's path as given (`None`: the mapping is given inline).
        path: Option<String>,
        /// The endpoints of `mapping_contents` (`None`: the file was not read).
        endpoints: Option<Vec<EndpointId>>,
    },
}

/// One `[[workload.jobs]]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    /// Name in the output.
    pub name: String,
    /// Program and parameters.
    pub kind: KindSpec,
    /// Iterations.
    pub iterations: u32,
    /// Compute cycles after each iteration.
    pub compute: u64,
    /// Rank placement.
    pub mapping: Mapping,
}

/// `[workload]`.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSection {
    /// Bytes per phit.
    pub bytes_per_phit: u64,
    /// The jobs.
    pub jobs: Vec<JobSpec>,
}

impl WorkloadSection {
    /// Parses `[workload]`; errors name the key (`workload.jobs[1].grid`).
    pub fn parse(table: &Table) -> Result<Self, ConfigError> {
        let mut t = table.clone();
        let bytes_per_phit = match t.remove("bytes_per_phit") {
            None => 16,
            Some(Value::Integer(n)) if n >= 1 => n as u64,
            Some(other) => {
                return Err(ConfigError::new(
                    "workload.bytes_per_phit",
                    format!("must be a whole number of bytes >= 1, got {other}"),
                ))
            }
        };
        let jobs = match t.remove("jobs") {
            Some(Value::Array(jobs)) if !jobs.is_empty() => jobs,
            Some(Value::Array(_)) | None => {
                return Err(ConfigError::new(
                    "workload.jobs",
                    "missing; give at least one [[workload.jobs]] table with a kind",
                ))
            }
            Some(other) => {
                return Err(ConfigError::new(
                    "workload.jobs",
                    format!("must be an array of tables ([[workload.jobs]]), got {}", other.type_str()),
                ))
            }
        };
        if let Some(extra) = t.keys().next() {
            return Err(ConfigError::new(
                format!("workload.{extra}"),
                "unknown key; allowed: bytes_per_phit, jobs",
            ));
        }
        let jobs = jobs
            .iter()
            .enumerate()
            .map(|(i, job)| match job {
                Value::Table(job) => JobSpec::parse(i, job),
                other => Err(ConfigError::new(
                    format!("workload.jobs[{i}]"),
                    format!("must be a table, got {}", other.type_str()),
                )),
            })
            .collect::<Result<_, _>>()?;
        Ok(WorkloadSection { bytes_per_phit, jobs })
    }
}

impl JobSpec {
    fn parse(index: usize, table: &Table) -> Result<Self, ConfigError> {
        let at = |key: &str| format!("workload.jobs[{index}].{key}");
        let mut t = table.clone();
        let kind_name = match t.get("kind") {
            Some(Value::String(k)) if WORKLOADS.iter().any(|w| w.name == k) => k.clone(),
            Some(Value::String(k)) => return Err(unknown(&at("kind"), k, WORKLOADS.iter().map(|w| w.name))),
            Some(other) => {
                return Err(ConfigError::new(
                    at("kind"),
                    format!("must be a string, got {}", other.type_str()),
                ))
            }
            None => {
                return Err(ConfigError::new(
                    at("kind"),
                    format!("missing; known: {}", names(WORKLOADS.iter().map(|w| w.name))),
                ))
            }
        };
        let whole = |t: &mut Table, key: &str, default: u64, min: u64| -> Result<u64, ConfigError> {
            match t.remove(key) {
                None => Ok(default),
                Some(Value::Integer(n)) if n >= min as i64 => Ok(n as u64),
                Some(other) => {
                    Err(ConfigError::new(at(key), format!("must be a whole number >= {min}, got {other}")))
                }
            }
        };
        let iterations = whole(&mut t, "iterations", 1, 1)?;
        if iterations > u32::MAX as u64 {
            return Err(ConfigError::new(
                at("iterations"),
                format!("must be at most 2^32 - 1, got {iterations}"),
            ));
        }
        let compute = whole(&mut t, "compute", 0, 0)?;
        let name = match t.remove("name") {
            None => format!("{kind_name}-{index}"),
            Some(Value::String(s)) if !s.is_empty() => s,
            Some(other) => {
                return Err(ConfigError::new(at("name"), format!("must be a non-empty string, got {other}")))
            }
        };
        let first = t.remove("first_endpoint");
        let seed = t.remove("mapping_seed");
        let file = t.remove("mapping_file");
        let contents = t.remove("mapping_contents");
        let mapping_name = match t.remove("mapping") {
            None => "linear".to_string(),
            Some(Value::String(s)) => s,
            Some(other) => {
                return Err(ConfigError::new(
                    at("mapping"),
                    format!("must be a string, got {}", other.type_str()),
                ))
            }
        };
        let stray = |key: &str, given: &Option<Value>, wanted: &str| -> Result<(), ConfigError> {
            match given {
                Some(_) if mapping_name != wanted => Err(ConfigError::new(
                    at(key),
                    format!("only applies to mapping = \"{wanted}\"; this job's mapping is `{mapping_name}`"),
                )),
                _ => Ok(()),
            }
        };
        stray("first_endpoint", &first, "linear")?;
        stray("mapping_seed", &seed, "random")?;
        stray("mapping_file", &file, "file")?;
        stray("mapping_contents", &contents, "file")?;
        let mapping = match mapping_name.as_str() {
            "linear" => Mapping::Linear {
                first: match first {
                    None => None,
                    Some(Value::Integer(n)) if (0..=u32::MAX as i64).contains(&n) => Some(n as EndpointId),
                    Some(other) => {
                        return Err(ConfigError::new(
                            at("first_endpoint"),
                            format!("must be an endpoint id, got {other}"),
                        ))
                    }
                },
            },
            "random" => Mapping::Random {
                seed: match seed {
                    None => None,
                    Some(Value::Integer(n)) if n >= 0 => Some(n as u64),
                    Some(other) => {
                        return Err(ConfigError::new(
                            at("mapping_seed"),
                            format!("must be a whole number >= 0, got {other}"),
                        ))
                    }
                },
            },
            "file" => {
                let path = match file {
                    Some(Value::String(path)) => Some(path),
                    Some(other) => {
                        return Err(ConfigError::new(
                            at("mapping_file"),
                            format!("must be a path (string), got {other}"),
                        ))
                    }
                    None if contents.is_none() => return Err(ConfigError::new(
                        at("mapping_file"),
                        "missing; mapping = \"file\" needs it (or the mapping inline, in mapping_contents)",
                    )),
                    None => None,
                };
                let endpoints = match contents {
                    None => None,
                    Some(Value::String(text)) => Some(mapping_endpoints(&text, path.as_deref(), &at)?),
                    Some(other) => {
                        return Err(ConfigError::new(
                            at("mapping_contents"),
                            format!("must be the mapping's text (a string), got {}", other.type_str()),
                        ))
                    }
                };
                Mapping::File { path, endpoints }
            }
            other => return Err(unknown(&at("mapping"), other, ["linear", "random", "file"].into_iter())),
        };
        let kind: KindSpec = typed(&format!("workload.jobs[{index}]"), &t)?;
        Ok(JobSpec { name, kind, iterations: iterations as u32, compute, mapping })
    }
}

/// The endpoints a mapping's text lists, one per line (blank lines and `#` comments
/// ignored); errors name `mapping_file` and the file (`mapping_contents` for a mapping
/// given inline) and the line.
fn mapping_endpoints(
    text: &str,
    path: Option<&str>,
    at: &dyn Fn(&str) -> String,
) -> Result<Vec<EndpointId>, ConfigError> {
    let (key, source) = match path {
        Some(path) => (at("mapping_file"), format!("`{path}`")),
        None => (at("mapping_contents"), "the mapping".to_string()),
    };
    let mut list = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let e = line.parse::<EndpointId>().map_err(|_| {
            ConfigError::new(
                &key,
                format!("{source} line {}: `{line}` is not an endpoint id (a whole number)", n + 1),
            )
        })?;
        list.push(e);
    }
    Ok(list)
}

/// The key errors about where a job's ranks are placed name: `mapping_file` (or
/// `mapping_contents` for a mapping given inline) or `mapping`.
fn mapping_key(mapping: &Mapping, at: &dyn Fn(&str) -> String) -> String {
    match mapping {
        Mapping::File { path: Some(_), .. } => at("mapping_file"),
        Mapping::File { path: None, .. } => at("mapping_contents"),
        _ => at("mapping"),
    }
}

/// A job, built: its program and where its ranks run.
#[derive(Clone, Debug)]
pub struct Job {
    /// Name.
    pub name: String,
    /// Kind, as configured.
    pub kind: &'static str,
    /// Who sends what to whom.
    pub program: Program,
    /// Iterations.
    pub iterations: u32,
    /// Compute cycles after each iteration.
    pub compute: u64,
    /// Endpoint of every rank.
    pub endpoints: Vec<EndpointId>,
    /// Bits of a packet's tag that number the packet within its step; the step is above.
    pub packet_bits: u32,
}

impl Job {
    /// Steps in the whole run.
    pub fn total_steps(&self) -> u64 {
        self.iterations as u64 * self.program.steps_per_iteration() as u64
    }

    /// `(iteration, step within it)` of global step `s`.
    pub fn split_step(&self, s: u32) -> (u32, u32) {
        let per = self.program.steps_per_iteration().max(1);
        (s / per, s % per)
    }
}

/// No rank at this endpoint.
pub const NO_RANK: u32 = u32::MAX;

/// The workload, built: every job, and which rank each endpoint runs.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The jobs.
    pub jobs: Vec<Job>,
    /// Bytes a packet carries.
    pub packet_bytes: u64,
    /// Per endpoint: its job, or [`NO_RANK`] as u32 when it runs none.
    job_of: Vec<u32>,
    /// Per endpoint: its rank in its job.
    rank_of: Vec<u32>,
}

/// The flag that marks a workload packet's id (bit 63; endpoint ids stay below 2^31).
pub const WORKLOAD_PACKET: u64 = 1 << 63;

impl Workload {
    /// Builds `section` for a network of `endpoints` endpoints with packets of
    /// `packet_size` phits; `seed` is the run's.
    pub fn build(
        section: &WorkloadSection,
        endpoints: usize,
        packet_size: u16,
        seed: u64,
    ) -> Result<Arc<Workload>, ConfigError> {
        let packet_bytes = section.bytes_per_phit * packet_size as u64;
        let mut job_of = vec![NO_RANK; endpoints];
        let mut rank_of = vec![NO_RANK; endpoints];
        let mut jobs = Vec::with_capacity(section.jobs.len());
        for (j, spec) in section.jobs.iter().enumerate() {
            let at = |key: &str| format!("workload.jobs[{j}].{key}");
            let (program, kind) =
                Self::program(j, spec, seed).map_err(|(key, m)| ConfigError::new(at(key), m))?;
            let ranks = program.ranks() as usize;
            let free = job_of.iter().filter(|&&x| x == NO_RANK).count();
            if ranks > free {
                return Err(ConfigError::new(
                    format!("workload.jobs[{j}]"),
                    format!(
                        "job `{}` has {ranks} ranks but only {free} of the network's {endpoints} endpoints are free{}",
                        spec.name,
                        if free < endpoints { " (earlier jobs take the others)" } else { "" }
                    ),
                ));
            }
            let placed: Vec<EndpointId> = match &spec.mapping {
                Mapping::Linear { first: None } => (0..endpoints)
                    .filter(|&e| job_of[e] == NO_RANK)
                    .take(ranks)
                    .map(|e| e as EndpointId)
                    .collect(),
                Mapping::Linear { first: Some(f) } => {
                    let f = *f as usize;
                    if f + ranks > endpoints {
                        return Err(ConfigError::new(
                            at("first_endpoint"),
                            format!(
                                "{ranks} ranks from endpoint {f} pass the last endpoint ({})",
                                endpoints - 1
                            ),
                        ));
                    }
                    (f..f + ranks).map(|e| e as EndpointId).collect()
                }
                Mapping::Random { seed: s } => {
                    let mut pool: Vec<EndpointId> =
                        (0..endpoints).filter(|&e| job_of[e] == NO_RANK).map(|e| e as EndpointId).collect();
                    let mut rng = stream(s.unwrap_or(seed), Purpose::Workload, u64::MAX - j as u64);
                    shuffle(&mut rng, &mut pool);
                    pool.truncate(ranks);
                    pool
                }
                Mapping::File { path, endpoints: list } => {
                    let source = path.as_ref().map_or("the mapping".to_string(), |p| format!("`{p}`"));
                    let list = list.clone().ok_or_else(|| {
                        ConfigError::new(
                            at("mapping_file"),
                            format!("{source} was not read (only the xnet command reads files)"),
                        )
                    })?;
                    if list.len() != ranks {
                        return Err(ConfigError::new(
                            mapping_key(&spec.mapping, &at),
                            format!(
                                "{source} lists {} endpoints; job `{}` has {ranks} ranks",
                                list.len(),
                                spec.name
                            ),
                        ));
                    }
                    list
                }
            };
            for (r, &e) in placed.iter().enumerate() {
                let key = mapping_key(&spec.mapping, &at);
                if e as usize >= endpoints {
                    return Err(ConfigError::new(
                        key,
                        format!(
                            "rank {r} is placed on endpoint {e}; the network has {endpoints} (0..={})",
                            endpoints - 1
                        ),
                    ));
                }
                if job_of[e as usize] != NO_RANK {
                    let other = job_of[e as usize] as usize;
                    let whose = if other == j {
                        format!("rank {} of this job", rank_of[e as usize])
                    } else {
                        format!("job `{}`", jobs.get(other).map_or("?", |o: &Job| o.name.as_str()))
                    };
                    return Err(ConfigError::new(
                        key,
                        format!("rank {r} is placed on endpoint {e}, which {whose} already runs on"),
                    ));
                }
                job_of[e as usize] = j as u32;
                rank_of[e as usize] = r as u32;
            }
            // A packet's 32-bit tag holds its step and its number within the step.
            let packets =
                program.max_messages_per_step() * program.max_message_bytes().div_ceil(packet_bytes).max(1);
            let packet_bits = 64 - packets.saturating_sub(1).leading_zeros();
            let steps = spec.iterations as u64 * program.steps_per_iteration() as u64;
            if steps > 0 && (64 - (steps - 1).leading_zeros()) + packet_bits > 32 {
                return Err(ConfigError::new(
                    format!("workload.jobs[{j}]"),
                    format!(
                        "job `{}` has {steps} steps of up to {packets} packets per rank; steps x packets per step must stay below 2^32 (fewer iterations or larger packets)",
                        spec.name
                    ),
                ));
            }
            jobs.push(Job {
                name: spec.name.clone(),
                kind,
                program,
                iterations: spec.iterations,
                compute: spec.compute,
                endpoints: placed,
                packet_bits,
            });
        }
        Ok(Arc::new(Workload { jobs, packet_bytes, job_of, rank_of }))
    }

    fn program(
        j: usize,
        spec: &JobSpec,
        seed: u64,
    ) -> Result<(Program, &'static str), (&'static str, String)> {
        let nonzero = |key: &'static str, v: u64| {
            if v == 0 {
                Err((key, "must be at least 1".to_string()))
            } else {
                Ok(v)
            }
        };
        let grid_ok = |g: &[u32]| -> Result<Vec<u32>, (&'static str, String)> {
            if g.is_empty() || g.len() > 3 || g.contains(&0) {
                return Err(("grid", format!("must have 1 to 3 sides, each at least 1, got {g:?}")));
            }
            if g.iter().map(|&s| s as u64).product::<u64>() > u32::MAX as u64 {
                return Err(("grid", format!("{g:?} has more than 2^32 ranks")));
            }
            Ok(g.to_vec())
        };
        let ranks_ok =
            |p: u32| if p < 2 { Err(("ranks", format!("must be at least 2, got {p}"))) } else { Ok(p) };
        let pow2 = |p: u32, what: &str| {
            if p.is_power_of_two() {
                Ok(p)
            } else {
                Err(("ranks", format!("{what} needs a power-of-two number of ranks, got {p}")))
            }
        };
        Ok(match &spec.kind {
            KindSpec::Stencil2d { grid, halo_bytes, periodic } => (
                Program::Stencil {
                    grid: grid_ok(grid)?,
                    halo_bytes: nonzero("halo_bytes", *halo_bytes)?,
                    periodic: *periodic,
                },
                "stencil2d",
            ),
            KindSpec::Stencil3d { grid, halo_bytes, periodic } => (
                Program::Stencil {
                    grid: grid_ok(grid)?,
                    halo_bytes: nonzero("halo_bytes", *halo_bytes)?,
                    periodic: *periodic,
                },
                "stencil3d",
            ),
            KindSpec::Butterfly { ranks, message_bytes } => (
                Program::Butterfly {
                    ranks: pow2(ranks_ok(*ranks)?, "butterfly")?,
                    message_bytes: nonzero("message_bytes", *message_bytes)?,
                },
                "butterfly",
            ),
            KindSpec::Waterfall { grid, message_bytes } => (
                Program::Waterfall {
                    grid: grid_ok(grid)?,
                    message_bytes: nonzero("message_bytes", *message_bytes)?,
                },
                "waterfall",
            ),
            KindSpec::Alltoall { ranks, message_bytes, algorithm } => (
                Program::AllToAll {
                    ranks: ranks_ok(*ranks)?,
                    message_bytes: nonzero("message_bytes", *message_bytes)?,
                    algorithm: match algorithm.as_str() {
                        "pairwise" => AllToAll::Pairwise,
                        "linear" => AllToAll::Linear,
                        other => {
                            return Err(("algorithm", format!("unknown `{other}`; known: pairwise, linear")))
                        }
                    },
                },
                "alltoall",
            ),
            KindSpec::Allreduce { ranks, bytes, algorithm } => {
                let bytes = nonzero("bytes", *bytes)?;
                let ranks = ranks_ok(*ranks)?;
                match algorithm.as_str() {
                    "ring" => (Program::RingAllReduce { ranks, bytes }, "allreduce"),
                    "recursive_doubling" => (
                        Program::Butterfly {
                            ranks: pow2(ranks, "recursive_doubling")?,
                            message_bytes: bytes,
                        },
                        "allreduce",
                    ),
                    other => {
                        return Err((
                            "algorithm",
                            format!("unknown `{other}`; known: ring, recursive_doubling"),
                        ))
                    }
                }
            }
            KindSpec::RandomPermutation { ranks, message_bytes } => {
                let ranks = ranks_ok(*ranks)?;
                let perms = random_permutations(seed, j as u32, ranks, spec.iterations);
                (
                    Program::RandomPermutation {
                        ranks,
                        message_bytes: nonzero("message_bytes", *message_bytes)?,
                        perms: Arc::new(perms),
                    },
                    "random_permutation",
                )
            }
        })
    }

    /// `(job, rank)` of the rank running at endpoint `e`, if any.
    #[inline]
    pub fn rank_at(&self, e: EndpointId) -> Option<(u32, u32)> {
        let j = *self.job_of.get(e as usize)?;
        (j != NO_RANK).then(|| (j, self.rank_of[e as usize]))
    }

    /// Ranks in all jobs.
    pub fn total_ranks(&self) -> u64 {
        self.jobs.iter().map(|j| j.endpoints.len() as u64).sum()
    }

    /// Packets a message of `bytes` bytes is split into.
    #[inline]
    pub fn packets(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.packet_bytes).max(1) as u32
    }

    /// The low 32 bits of a workload packet's id: its step and its number within the step.
    #[inline]
    pub fn tag(job: &Job, step: u32, index: u32) -> u32 {
        (((step as u64) << job.packet_bits) | index as u64) as u32
    }

    /// The step of a workload packet's tag.
    #[inline]
    pub fn step_of_tag(job: &Job, tag: u32) -> u32 {
        ((tag as u64) >> job.packet_bits) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(text: &str) -> Result<WorkloadSection, ConfigError> {
        let t: Table = toml::from_str(text).unwrap();
        WorkloadSection::parse(t["workload"].as_table().unwrap())
    }

    #[test]
    fn jobs_parse_with_their_keys_and_errors_name_them() {
        let w = section(
            "[workload]\n[[workload.jobs]]\nkind = \"stencil3d\"\ngrid = [2, 2, 2]\nhalo_bytes = 512\niterations = 3\n\
             [[workload.jobs]]\nkind = \"alltoall\"\nranks = 4\nmessage_bytes = 8\nalgorithm = \"linear\"\nmapping = \"random\"\n",
        )
        .unwrap();
        assert_eq!(w.jobs.len(), 2);
        assert_eq!(w.jobs[0].iterations, 3);
        assert_eq!(w.jobs[1].mapping, Mapping::Random { seed: None });
        let err = |text: &str| section(text).unwrap_err().to_string();
        assert!(
            err("[workload]\n[[workload.jobs]]\nkind = \"stencil9d\"\n").contains("workload.jobs[0].kind")
        );
        let e = err(
            "[workload]\n[[workload.jobs]]\nkind = \"butterfly\"\nranks = 4\nmessage_bytes = 1\nhalo = 3\n",
        );
        assert!(e.contains("workload.jobs[0]") && e.contains("halo"), "{e}");
        let e = err("[workload]\n[[workload.jobs]]\nkind = \"butterfly\"\nranks = 4\nmessage_bytes = 1\nmapping_seed = 3\n");
        assert!(e.contains("workload.jobs[0].mapping_seed") && e.contains("random"), "{e}");
        assert!(err("[workload]\njobs = []\n").contains("workload.jobs"));
    }

    #[test]
    fn mappings_place_ranks_on_distinct_free_endpoints() {
        let w = section(
            "[workload]\n[[workload.jobs]]\nkind = \"butterfly\"\nranks = 4\nmessage_bytes = 8\nmapping = \"linear\"\nfirst_endpoint = 2\n\
             [[workload.jobs]]\nkind = \"butterfly\"\nranks = 8\nmessage_bytes = 8\nmapping = \"random\"\n",
        )
        .unwrap();
        let built = Workload::build(&w, 12, 4, 1).unwrap();
        assert_eq!(built.jobs[0].endpoints, vec![2, 3, 4, 5]);
        let mut second = built.jobs[1].endpoints.clone();
        second.sort_unstable();
        assert_eq!(second, vec![0, 1, 6, 7, 8, 9, 10, 11]);
        assert_eq!(built.rank_at(4), Some((0, 2)));
        // Too many ranks for the free endpoints; overlapping explicit placement.
        let e = Workload::build(&w, 11, 4, 1).unwrap_err().to_string();
        assert!(e.contains("workload.jobs[1]") && e.contains("only 7"), "{e}");
        let over = section(
            "[workload]\n[[workload.jobs]]\nkind = \"butterfly\"\nranks = 2\nmessage_bytes = 8\n\
             [[workload.jobs]]\nkind = \"butterfly\"\nranks = 2\nmessage_bytes = 8\nfirst_endpoint = 1\n",
        )
        .unwrap();
        let e = Workload::build(&over, 8, 4, 1).unwrap_err().to_string();
        assert!(e.contains("workload.jobs[1].mapping") && e.contains("endpoint 1"), "{e}");
    }

    #[test]
    fn tags_hold_step_and_packet() {
        let w = section("[workload]\n[[workload.jobs]]\nkind = \"stencil2d\"\ngrid = [4, 4]\nhalo_bytes = 1000\niterations = 7\n")
            .unwrap();
        let built = Workload::build(&w, 16, 4, 1).unwrap();
        let job = &built.jobs[0];
        // 1000 bytes in 64-byte packets: 16 packets per message, 4 messages: 64 per step.
        assert_eq!(built.packets(1000), 16);
        assert_eq!(job.packet_bits, 6);
        let tag = Workload::tag(job, 6, 63);
        assert_eq!(Workload::step_of_tag(job, tag), 6);
    }
}
