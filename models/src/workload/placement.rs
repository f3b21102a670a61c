//! Where a job's ranks run: the mappings of ranks to endpoints (linear, random, or the
//! list in `mapping_contents`, which the `xnet` command fills from `mapping_file`).

use super::NO_RANK;
use base::rng::{shuffle, stream, Purpose};
use base::settings::{unknown, ConfigError};
use toml::{Table, Value};
use topology::EndpointId;

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
    /// `mapping_contents` ([`JOB_FILES`](super::JOB_FILES)).
    File {
        /// The file's path as given (`None`: the mapping is given inline).
        path: Option<String>,
        /// The endpoints of `mapping_contents` (`None`: the file was not read).
        endpoints: Option<Vec<EndpointId>>,
    },
}

impl Mapping {
    /// Reads a job's mapping keys (`mapping`, `first_endpoint`, `mapping_seed`,
    /// `mapping_file`, `mapping_contents`), taking them out of `job`; errors name the key
    /// (`at(key)`), and a key that belongs to another mapping than the job's is one.
    pub(super) fn parse(job: &mut Table, at: &dyn Fn(&str) -> String) -> Result<Self, ConfigError> {
        let first = job.remove("first_endpoint");
        let seed = job.remove("mapping_seed");
        let file = job.remove("mapping_file");
        let contents = job.remove("mapping_contents");
        let mapping_name = match job.remove("mapping") {
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
        match mapping_name.as_str() {
            "linear" => Self::linear(first, at),
            "random" => Self::random(seed, at),
            "file" => Self::file(file, contents, at),
            other => Err(unknown(&at("mapping"), other, ["linear", "random", "file"].into_iter())),
        }
    }

    /// `mapping = "linear"` with its `first_endpoint`, if given.
    fn linear(first: Option<Value>, at: &dyn Fn(&str) -> String) -> Result<Self, ConfigError> {
        let first = match first {
            None => None,
            Some(Value::Integer(n)) if (0..=u32::MAX as i64).contains(&n) => Some(n as EndpointId),
            Some(other) => {
                return Err(ConfigError::new(
                    at("first_endpoint"),
                    format!("must be an endpoint id, got {other}"),
                ))
            }
        };
        Ok(Mapping::Linear { first })
    }

    /// `mapping = "random"` with its `mapping_seed`, if given.
    fn random(seed: Option<Value>, at: &dyn Fn(&str) -> String) -> Result<Self, ConfigError> {
        let seed = match seed {
            None => None,
            Some(value) => {
                Some(base::settings::seed_of(&value).map_err(|e| ConfigError::new(at("mapping_seed"), e))?)
            }
        };
        Ok(Mapping::Random { seed })
    }

    /// `mapping = "file"` with its `mapping_file` and `mapping_contents` (one of them at
    /// least: the contents alone are a mapping given inline).
    fn file(
        file: Option<Value>,
        contents: Option<Value>,
        at: &dyn Fn(&str) -> String,
    ) -> Result<Self, ConfigError> {
        let path = match file {
            Some(Value::String(path)) => Some(path),
            Some(other) => {
                return Err(ConfigError::new(
                    at("mapping_file"),
                    format!("must be a path (string), got {other}"),
                ))
            }
            None if contents.is_none() => {
                return Err(ConfigError::new(
                    at("mapping_file"),
                    "missing; mapping = \"file\" needs it (or the mapping inline, in mapping_contents)",
                ))
            }
            None => None,
        };
        let endpoints = match contents {
            None => None,
            Some(Value::String(text)) => Some(mapping_endpoints(&text, path.as_deref(), at)?),
            Some(other) => {
                return Err(ConfigError::new(
                    at("mapping_contents"),
                    format!("must be the mapping's text (a string), got {}", other.type_str()),
                ))
            }
        };
        Ok(Mapping::File { path, endpoints })
    }

    /// The key that errors about where the ranks are placed name: `mapping_file` (or
    /// `mapping_contents` for a mapping given inline) or `mapping`.
    fn key(&self, at: &dyn Fn(&str) -> String) -> String {
        match self {
            Mapping::File { path: Some(_), .. } => at("mapping_file"),
            Mapping::File { path: None, .. } => at("mapping_contents"),
            _ => at("mapping"),
        }
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

/// Which job and rank each endpoint runs, as the jobs are placed one after the other.
pub(super) struct Occupancy {
    /// Per endpoint: its job, or [`NO_RANK`] when it runs none.
    job_of: Vec<u32>,
    /// Per endpoint: its rank in its job.
    rank_of: Vec<u32>,
    /// The names of the jobs placed so far.
    names: Vec<String>,
}

impl Occupancy {
    /// A network of `endpoints` endpoints, all free.
    pub(super) fn new(endpoints: usize) -> Self {
        Occupancy { job_of: vec![NO_RANK; endpoints], rank_of: vec![NO_RANK; endpoints], names: Vec::new() }
    }

    /// Per endpoint, its job and its rank ([`NO_RANK`] for both where it runs none).
    pub(super) fn into_maps(self) -> (Vec<u32>, Vec<u32>) {
        (self.job_of, self.rank_of)
    }

    /// Places the `ranks` ranks of job `j`, named `name`, on free endpoints by `mapping`
    /// (a random mapping without a seed of its own draws from `seed`, the run's): the
    /// endpoint of every rank. Errors name the job, or the mapping's key.
    pub(super) fn place(
        &mut self,
        j: usize,
        name: &str,
        mapping: &Mapping,
        ranks: usize,
        seed: u64,
    ) -> Result<Vec<EndpointId>, ConfigError> {
        let at = |key: &str| format!("workload.jobs[{j}].{key}");
        let endpoints = self.job_of.len();
        let free = self.job_of.iter().filter(|&&x| x == NO_RANK).count();
        if ranks > free {
            return Err(ConfigError::new(
                format!("workload.jobs[{j}]"),
                format!(
                    "job `{name}` has {ranks} ranks but only {free} of the network's {endpoints} endpoints are free{}",
                    if free < endpoints { " (earlier jobs take the others)" } else { "" }
                ),
            ));
        }
        let placed = self.endpoints(j, name, mapping, ranks, seed, &at)?;
        self.claim(j, &placed, &mapping.key(&at))?;
        self.names.push(name.to_string());
        Ok(placed)
    }

    /// The endpoints `mapping` gives the `ranks` ranks of job `j`, in rank order, not yet
    /// checked against the network or the other jobs (but for linear and random mappings,
    /// which take free endpoints).
    fn endpoints(
        &self,
        j: usize,
        name: &str,
        mapping: &Mapping,
        ranks: usize,
        seed: u64,
        at: &dyn Fn(&str) -> String,
    ) -> Result<Vec<EndpointId>, ConfigError> {
        let endpoints = self.job_of.len();
        let free = || (0..endpoints).filter(|&e| self.job_of[e] == NO_RANK).map(|e| e as EndpointId);
        Ok(match mapping {
            Mapping::Linear { first: None } => free().take(ranks).collect(),
            Mapping::Linear { first: Some(f) } => {
                let f = *f as usize;
                if f + ranks > endpoints {
                    return Err(ConfigError::new(
                        at("first_endpoint"),
                        format!("{ranks} ranks from endpoint {f} pass the last endpoint ({})", endpoints - 1),
                    ));
                }
                (f..f + ranks).map(|e| e as EndpointId).collect()
            }
            Mapping::Random { seed: s } => {
                let mut pool: Vec<EndpointId> = free().collect();
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
                        mapping.key(at),
                        format!("{source} lists {} endpoints; job `{name}` has {ranks} ranks", list.len()),
                    ));
                }
                list
            }
        })
    }

    /// Gives endpoint `placed[r]` to rank `r` of job `j`; an endpoint outside the network
    /// or already taken is an error naming `key`, the mapping's.
    fn claim(&mut self, j: usize, placed: &[EndpointId], key: &str) -> Result<(), ConfigError> {
        let endpoints = self.job_of.len();
        for (r, &e) in placed.iter().enumerate() {
            if e as usize >= endpoints {
                return Err(ConfigError::new(
                    key,
                    format!(
                        "rank {r} is placed on endpoint {e}; the network has {endpoints} (0..={})",
                        endpoints - 1
                    ),
                ));
            }
            if self.job_of[e as usize] != NO_RANK {
                let other = self.job_of[e as usize] as usize;
                let whose = if other == j {
                    format!("rank {} of this job", self.rank_of[e as usize])
                } else {
                    format!("job `{}`", self.names.get(other).map_or("?", String::as_str))
                };
                return Err(ConfigError::new(
                    key,
                    format!("rank {r} is placed on endpoint {e}, which {whose} already runs on"),
                ));
            }
            self.job_of[e as usize] = j as u32;
            self.rank_of[e as usize] = r as u32;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Workload, WorkloadSection};
    use base::settings::ConfigError;
    use toml::Table;

    fn section(text: &str) -> Result<WorkloadSection, ConfigError> {
        let t: Table = toml::from_str(text).unwrap();
        WorkloadSection::parse(t["workload"].as_table().unwrap())
    }

    #[test]
    fn mappings_place_ranks_on_distinct_free_endpoints() {
        let w = section(
            "[workload]\n[[workload.jobs]]\nkind = \"butterfly\"\nranks = 4\nmessage_bytes = 8\nmapping = \"linear\"\nfirst_endpoint = 2\n\
             [[workload.jobs]]\nkind = \"butterfly\"\nranks = 8\nmessage_bytes = 8\nmapping = \"random\"\n",
        )
        .unwrap();
        let built = Workload::build(&w, 12, 4.into(), None, 1).unwrap();
        assert_eq!(built.jobs[0].endpoints, vec![2, 3, 4, 5]);
        let mut second = built.jobs[1].endpoints.clone();
        second.sort_unstable();
        assert_eq!(second, vec![0, 1, 6, 7, 8, 9, 10, 11]);
        assert_eq!(built.rank_at(4), Some((0, 2)));
        // Too many ranks for the free endpoints; overlapping explicit placement.
        let e = Workload::build(&w, 11, 4.into(), None, 1).unwrap_err().to_string();
        assert!(e.contains("workload.jobs[1]") && e.contains("only 7"), "{e}");
        let over = section(
            "[workload]\n[[workload.jobs]]\nkind = \"butterfly\"\nranks = 2\nmessage_bytes = 8\n\
             [[workload.jobs]]\nkind = \"butterfly\"\nranks = 2\nmessage_bytes = 8\nfirst_endpoint = 1\n",
        )
        .unwrap();
        let e = Workload::build(&over, 8, 4.into(), None, 1).unwrap_err().to_string();
        assert!(e.contains("workload.jobs[1].mapping") && e.contains("endpoint 1"), "{e}");
    }
}
