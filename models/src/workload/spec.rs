//! The `[workload]` section as configured: its keys, its jobs (`[[workload.jobs]]`: the
//! keys every job takes, its kind's keys, its rank mapping), parsed and checked, with
//! errors that name the key (`workload.jobs[1].grid`). What can only be checked against
//! the network (free endpoints, the program's size) is checked when the workload is built.

use super::kind::KindSpec;
use super::placement::Mapping;
use super::{find, WORKLOADS};
use base::settings::{names, unknown, ConfigError, FileForm, FileKey, Setting};
use toml::{Table, Value};

/// The keys every job takes, whatever its kind.
pub const JOB_SETTINGS: &[Setting] = &[
    Setting { key: "kind", default: "required", doc: "the program: one of the workloads above" },
    Setting { key: "name", default: "KIND-INDEX", doc: "the job's name in the output and its address in `--set workload.jobs.NAME.KEY`: letters, digits, -, _ and +, unique" },
    Setting { key: "iterations", default: "1", doc: "times the program's steps run (waterfall: waves)" },
    Setting { key: "replicas", default: "1", doc: "copies of the job side by side, each with its own ranks (copy k's rank r is rank k x ranks + r): a trace of R ranks replayed as R x replicas; they share the job's mapping and results" },
    Setting { key: "compute", default: "0", doc: "cycles a rank computes after each iteration's communication" },
    Setting { key: "mapping", default: "linear", doc: "rank to endpoint: `linear` (the lowest free endpoints, rank order), `random` (a random sample of the free endpoints) or `file` (mapping_file)" },
    Setting { key: "first_endpoint", default: "the lowest free one", doc: "linear mapping: the endpoint of rank 0" },
    Setting { key: "mapping_seed", default: "simulation.seed", doc: "random mapping: its seed" },
    Setting { key: "mapping_file", default: "required with mapping = \"file\"", doc: "a text file with one endpoint id per rank, in rank order (blank lines and # comments ignored); relative to the working directory, read by the xnet command into mapping_contents" },
    Setting { key: "mapping_contents", default: "from mapping_file", doc: "the mapping's text: filled in from mapping_file by the xnet command (and so recorded with the results); give it instead of mapping_file to inline a mapping" },
];

/// The keys of a job that name a file: its rank mapping (`mapping = "file"`), which the
/// `xnet` command reads into `mapping_contents`.
pub const JOB_FILES: &[FileKey] = &[FileKey {
    path: "mapping_file",
    contents: "mapping_contents",
    what: "the rank mapping",
    form: FileForm::Text,
}];

/// The keys of `[workload]` itself.
pub const SECTION_SETTINGS: &[Setting] = &[
    Setting {
        key: "bytes_per_phit",
        default: "16",
        doc:
            "bytes one phit carries: a message of B bytes is ceil(B / ((packet_size - header_phits) x bytes_per_phit)) packets (at least one), the last one only as long as its data",
    },
    Setting {
        key: "ns_per_cycle",
        default: "0.64",
        doc: "nanoseconds one network cycle lasts: a schedule's compute times (ns) last ceil(ns / ns_per_cycle) cycles. The default, with 16 bytes per phit and one phit per cycle, is a 200 Gb/s link",
    },
    Setting {
        key: "eager_limit",
        default: "16384",
        doc: "bytes: messages up to this size are sent at once (eager); larger ones by rendezvous (a request, a clear-to-send, then the data; each control message one packet of one phit and the header)",
    },
    Setting {
        key: "background",
        default: "any",
        doc: "where the background traffic of [traffic] (sent by the endpoints that run no rank) may go: `any`, the pattern's destination wherever it is (ranks' endpoints included); `free`, only endpoints that run no rank (a packet whose destination runs a rank is not sent), as congestors that talk among themselves",
    },
    Setting {
        key: "record_sends",
        default: "false",
        doc: "true: every send's rank, peer, bytes, start and end go to workload/job_NNN/sends, its flow completion time (a send ends when its last packet has left, or at its last ACK under a transport); one row per send, so for schedules of thousands of messages, not millions",
    },
    Setting { key: "jobs", default: "required", doc: "the jobs, as [[workload.jobs]] tables" },
];

/// One `[[workload.jobs]]` table.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// Name in the output.
    pub name: String,
    /// Program and parameters.
    pub kind: KindSpec,
    /// Iterations.
    pub iterations: u32,
    /// Compute cycles after each iteration.
    pub compute: u64,
    /// Copies side by side.
    pub replicas: u32,
    /// Rank placement.
    pub mapping: Mapping,
}

/// `[workload]`.
#[derive(Clone, Debug)]
pub struct WorkloadSection {
    /// Bytes per phit.
    pub bytes_per_phit: u64,
    /// Picoseconds per cycle (`ns_per_cycle` x 1000).
    pub ps_per_cycle: u64,
    /// Largest message sent eagerly, in bytes.
    pub eager_limit: u64,
    /// Background traffic reaches only endpoints that run no rank.
    pub background_free_only: bool,
    /// Every send's start and end are recorded (`record_sends`).
    pub record_sends: bool,
    /// The jobs.
    pub jobs: Vec<JobSpec>,
    /// GPUs per node when the network has GPU nodes (`topology.nodes.gpus`; 1 otherwise):
    /// NCCL builds its rings across nodes from it. Set by the configuration, not a key.
    pub node_gpus: u32,
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
        let ps_per_cycle = match t.remove("ns_per_cycle") {
            None => 640,
            Some(v) => {
                let ns = match v {
                    Value::Float(f) => f,
                    Value::Integer(n) => n as f64,
                    ref other => {
                        return Err(ConfigError::new(
                            "workload.ns_per_cycle",
                            format!("must be a number of nanoseconds, got {other}"),
                        ))
                    }
                };
                let ps = (ns * 1000.0).round();
                if !(1.0..=1e12).contains(&ps) || (ps - ns * 1000.0).abs() > 1e-6 * ps.max(1.0) {
                    return Err(ConfigError::new(
                        "workload.ns_per_cycle",
                        format!("must be a whole number of picoseconds between 0.001 and 10^9 ns, got {v}"),
                    ));
                }
                ps as u64
            }
        };
        let eager_limit = match t.remove("eager_limit") {
            None => 16384,
            Some(Value::Integer(n)) if n >= 0 => n as u64,
            Some(other) => {
                return Err(ConfigError::new(
                    "workload.eager_limit",
                    format!("must be a whole number of bytes >= 0, got {other}"),
                ))
            }
        };
        let background_free_only = match t.remove("background") {
            None => false,
            Some(Value::String(v)) if v == "any" => false,
            Some(Value::String(v)) if v == "free" => true,
            Some(other) => {
                return Err(ConfigError::new(
                    "workload.background",
                    format!("must be \"any\" or \"free\", got {other}"),
                ))
            }
        };
        let record_sends = match t.remove("record_sends") {
            None => false,
            Some(Value::Boolean(b)) => b,
            Some(other) => {
                return Err(ConfigError::new(
                    "workload.record_sends",
                    format!("must be true or false, got {other}"),
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
                "unknown key; allowed: bytes_per_phit, ns_per_cycle, eager_limit, background, record_sends, jobs",
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
            .collect::<Result<Vec<JobSpec>, _>>()?;
        // A name addresses its job (`--set workload.jobs.NAME.KEY`) and its exported file.
        for (i, job) in jobs.iter().enumerate() {
            if let Some(first) = jobs[..i].iter().position(|other| other.name == job.name) {
                return Err(ConfigError::new(
                    format!("workload.jobs[{i}].name"),
                    format!(
                        "`{}` is already the name of workload.jobs[{first}]; names must differ",
                        job.name
                    ),
                ));
            }
        }
        Ok(WorkloadSection {
            bytes_per_phit,
            ps_per_cycle,
            eager_limit,
            background_free_only,
            record_sends,
            jobs,
            node_gpus: 1,
        })
    }
}

impl JobSpec {
    fn parse(index: usize, table: &Table) -> Result<Self, ConfigError> {
        let at = |key: &str| format!("workload.jobs[{index}].{key}");
        let mut t = table.clone();
        let entry = match t.remove("kind") {
            Some(Value::String(k)) => match find(&k) {
                Some(entry) => entry,
                None => return Err(unknown(&at("kind"), &k, WORKLOADS.iter().map(|w| w.name))),
            },
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
        let replicas = whole(&mut t, "replicas", 1, 1)?;
        if replicas > u32::MAX as u64 {
            return Err(ConfigError::new(
                at("replicas"),
                format!("must be at most 2^32 - 1, got {replicas}"),
            ));
        }
        let name = match t.remove("name") {
            None => format!("{}-{index}", entry.name),
            Some(Value::String(s)) if s.contains(',') => {
                return Err(ConfigError::new(
                    at("name"),
                    format!(
                        "must not contain a comma, got \"{s}\": the result file lists the jobs' \
                         names separated by commas (job_names)"
                    ),
                ))
            }
            Some(Value::String(s))
                if !s.is_empty()
                    && s.chars().all(|c| c.is_alphanumeric() || "-_+".contains(c))
                    && !s.chars().all(|c| c.is_ascii_digit()) =>
            {
                s
            }
            Some(other) => {
                return Err(ConfigError::new(
                    at("name"),
                    format!(
                    "must be letters, digits, -, _ and + (not digits alone, which would read as an index; \
                         it addresses the job in --set workload.jobs.NAME.KEY and names its exported file), \
                         got {other}"
                ),
                ))
            }
        };
        let mapping = Mapping::parse(&mut t, &at)?;
        let kind = KindSpec::parse(entry, &format!("workload.jobs[{index}]"), &t)?;
        Ok(JobSpec { name, kind, iterations: iterations as u32, compute, replicas: replicas as u32, mapping })
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
}
