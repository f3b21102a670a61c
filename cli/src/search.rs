//! Which load a sweep runs next, and what its points say about the saturation load.
//!
//! A plain sweep runs its loads in the order given; `--stop-at-saturation` stops after the
//! first saturated point; `--find-saturation` runs the loads in increasing order up to the
//! first saturated one (the coarse grid), adds the injection limit 1.0 when none of them
//! saturates, and then bisects between the highest load that did not saturate and the
//! lowest that did until the two are at most the tolerance apart. The next load depends only
//! on the loads and the points' `saturated` flags, which every MPI rank receives from rank
//! 0, so every rank takes the same steps and the same seed gives the same points.

/// The highest load a sweep can offer: one phit per cycle per endpoint, the injection
/// link's rate.
pub(crate) const MAX_LOAD: f64 = 1.0;

/// The narrowest and widest brackets a search for the saturation load accepts
/// (phits/cycle/endpoint): below 10^-4 a run's finite sampling cannot tell the loads apart,
/// and the bisection would go on until the loads stop changing in double precision.
pub(crate) const TOLERANCES: std::ops::RangeInclusive<f64> = 1e-4..=0.5;

/// Refuses a `tolerance` outside [`TOLERANCES`], naming it as `key`.
pub(crate) fn check_tolerance(key: &str, tolerance: f64) -> anyhow::Result<()> {
    if !TOLERANCES.contains(&tolerance) {
        anyhow::bail!(
            "{key}: {tolerance:?} is not allowed: give a width of at least {} and at most {} phits/cycle/endpoint",
            TOLERANCES.start(),
            TOLERANCES.end()
        );
    }
    Ok(())
}

/// How a sweep chooses its loads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Mode {
    /// Every load, in the order given.
    All,
    /// The loads in the order given, up to the first saturated one.
    StopAtSaturation,
    /// The coarse grid up to saturation, then bisection down to this width.
    Find {
        /// The widest bracket accepted around the saturation load (phits/cycle/endpoint).
        tolerance: f64,
    },
}

/// What a sweep's points say about its saturation load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bracket {
    /// The highest load run below the first saturated one that did not saturate (0 when
    /// none did: load 0 never saturates).
    pub(crate) low: f64,
    /// The lowest saturated load, if a point saturated.
    pub(crate) high: Option<f64>,
}

impl Bracket {
    /// The saturation load's estimate: the bracket's middle (`None` when nothing saturated).
    pub(crate) fn estimate(&self) -> Option<f64> {
        self.high.map(|h| (self.low + h) / 2.0)
    }

    /// The bracket in words, for the summary.
    pub(crate) fn describe(&self, mode: Mode) -> String {
        match (self.high, mode) {
            (Some(h), _) => {
                let middle = self.estimate().unwrap_or(h);
                let how = match mode {
                    // An interrupted search stops with a wider bracket than asked for.
                    Mode::Find { tolerance } if h - self.low <= tolerance * (1.0 + 1e-9) => {
                        format!("bisected to within {tolerance}")
                    }
                    Mode::Find { tolerance } => {
                        format!("the bisection stopped {:.4} wide, before reaching {tolerance}", h - self.low)
                    }
                    _ => "from the loads run; --find-saturation narrows it".to_string(),
                };
                format!(
                    "saturation load {:.4} (between {:.4}, not saturated, and {:.4}, saturated; {how})",
                    middle, self.low, h
                )
            }
            (None, Mode::Find { .. }) if self.low >= MAX_LOAD => format!(
                "not saturated at load {MAX_LOAD} (the injection links' rate): the network takes \
                 every load an endpoint can offer"
            ),
            (None, _) => format!(
                "no point saturated: the saturation load is above {:.4}, the highest load run",
                self.low
            ),
        }
    }
}

/// The loads of a sweep, one after the other: [`Search::current`] is the load to run now,
/// and [`Search::record`] is told whether it saturated and moves on.
#[derive(Clone, Debug)]
pub(crate) struct Search {
    mode: Mode,
    /// The loads to run first (sorted for `Find`).
    grid: Vec<f64>,
    /// Index in `grid` of the next grid load.
    next_grid: usize,
    /// Highest load that did not saturate below `high`; lowest saturated load.
    low: f64,
    high: Option<f64>,
    /// The load that `next` hands out now.
    current: Option<f64>,
    /// Points run so far.
    done: usize,
}

impl Search {
    /// A search over `loads` (non-empty, each within [0, 1]).
    pub(crate) fn new(loads: &[f64], mode: Mode) -> Search {
        let mut grid = loads.to_vec();
        if let Mode::Find { .. } = mode {
            grid.sort_by(f64::total_cmp);
            grid.dedup();
        }
        let current = grid.first().copied();
        Search { mode, next_grid: 1, grid, low: 0.0, high: None, current, done: 0 }
    }

    /// The load to run now, `None` when the sweep is over.
    pub(crate) fn current(&self) -> Option<f64> {
        self.current
    }

    /// Points run so far.
    pub(crate) fn done(&self) -> usize {
        self.done
    }

    /// Records that the current load did (`saturated`) or did not saturate and moves on.
    pub(crate) fn record(&mut self, saturated: bool) {
        let Some(load) = self.current.take() else { return };
        self.done += 1;
        if saturated {
            if self.high.is_none_or(|h| load < h) {
                self.high = Some(load);
            }
        } else if self.high.is_none_or(|h| load < h) && load > self.low {
            self.low = load;
        }
        self.current = self.choose(load, saturated);
    }

    fn choose(&mut self, load: f64, saturated: bool) -> Option<f64> {
        let from_grid = |s: &mut Search| {
            let next = s.grid.get(s.next_grid).copied();
            s.next_grid += 1;
            next
        };
        match self.mode {
            Mode::All => from_grid(self),
            Mode::StopAtSaturation => (!saturated).then(|| from_grid(self)).flatten(),
            Mode::Find { tolerance } => match self.high {
                None => from_grid(self).or((load < MAX_LOAD).then_some(MAX_LOAD)),
                Some(h) if h - self.low > tolerance => Some((self.low + h) / 2.0),
                Some(_) => None,
            },
        }
    }

    /// The loads of the grid that were not run (after `--stop-at-saturation` stopped).
    pub(crate) fn skipped(&self) -> &[f64] {
        self.grid.get(self.next_grid..).unwrap_or(&[])
    }

    /// What the points run so far say about the saturation load.
    pub(crate) fn bracket(&self) -> Bracket {
        Bracket { low: self.low, high: self.high }
    }

    /// The most points the sweep can run in all (for "point i of n"): the grid, the
    /// injection limit and the bisection steps from the widest gap of the grid.
    pub(crate) fn most_points(&self) -> usize {
        match self.mode {
            Mode::All | Mode::StopAtSaturation => self.grid.len(),
            Mode::Find { tolerance } => {
                let mut edges = vec![0.0];
                edges.extend(self.grid.iter().copied());
                edges.push(MAX_LOAD);
                let widest = edges.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
                let steps = if widest > tolerance { (widest / tolerance).log2().ceil() as usize } else { 0 };
                self.grid.len() + 1 + steps
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a network that saturates above `knee`; returns the loads run.
    fn run(loads: &[f64], mode: Mode, knee: f64) -> (Vec<f64>, Search) {
        let mut s = Search::new(loads, mode);
        let mut ran = Vec::new();
        while let Some(load) = s.current() {
            ran.push(load);
            s.record(load > knee);
        }
        (ran, s)
    }

    #[test]
    fn a_plain_sweep_runs_every_load_in_order() {
        let (ran, s) = run(&[0.3, 0.9, 0.1], Mode::All, 0.5);
        assert_eq!(ran, [0.3, 0.9, 0.1]);
        assert_eq!(s.bracket(), Bracket { low: 0.3, high: Some(0.9) });
        let (ran, s) = run(&[0.3, 0.9, 0.1], Mode::StopAtSaturation, 0.5);
        assert_eq!((ran, s.skipped()), (vec![0.3, 0.9], &[0.1][..]));
    }

    #[test]
    fn bisection_brackets_the_knee_within_the_tolerance() {
        let (ran, s) = run(&[0.8, 0.2, 0.4, 0.6], Mode::Find { tolerance: 0.01 }, 0.537);
        assert_eq!(ran[..4], [0.2, 0.4, 0.6, 0.5]);
        let b = s.bracket();
        let h = b.high.unwrap();
        assert!(b.low <= 0.537 && h > 0.537 && h - b.low <= 0.01, "{b:?}");
        assert!(ran.len() <= s.most_points(), "{ran:?} vs {}", s.most_points());
        assert!((b.estimate().unwrap() - 0.537).abs() <= 0.005);
        // Deterministic: the same answers give the same loads.
        assert_eq!(run(&[0.8, 0.2, 0.4, 0.6], Mode::Find { tolerance: 0.01 }, 0.537).0, ran);
        let find = Mode::Find { tolerance: 0.01 };
        assert!(b.describe(find).ends_with("bisected to within 0.01)"), "{}", b.describe(find));
        // Interrupted after the grid: the bracket is what was reached, and it says so.
        let stopped = Bracket { low: 0.4, high: Some(0.6) };
        assert!(
            stopped.describe(find).ends_with("the bisection stopped 0.2000 wide, before reaching 0.01)"),
            "{}",
            stopped.describe(find)
        );
    }

    #[test]
    fn a_grid_below_the_knee_tries_the_injection_limit() {
        let (ran, s) = run(&[0.2, 0.8], Mode::Find { tolerance: 0.05 }, 0.93);
        assert_eq!(ran[..3], [0.2, 0.8, 1.0]);
        assert_eq!((ran.len(), s.bracket()), (5, Bracket { low: 0.9, high: Some(0.95) }), "{ran:?}");
        // Never saturated: the search ends at 1.0 and says so.
        let (ran, s) = run(&[0.2, 0.8], Mode::Find { tolerance: 0.05 }, 2.0);
        assert_eq!(ran, [0.2, 0.8, 1.0]);
        assert_eq!(s.bracket(), Bracket { low: 1.0, high: None });
        assert!(s.bracket().describe(Mode::Find { tolerance: 0.05 }).contains("not saturated at load 1"));
        let plain = run(&[0.2, 0.8], Mode::StopAtSaturation, 2.0).1.bracket();
        assert!(plain.describe(Mode::StopAtSaturation).contains("above 0.8000"), "{plain:?}");
    }

    #[test]
    fn a_saturated_first_load_is_bisected_from_zero() {
        let (ran, s) = run(&[0.5], Mode::Find { tolerance: 0.1 }, 0.05);
        assert_eq!(ran, [0.5, 0.25, 0.125, 0.0625]);
        assert_eq!(s.bracket(), Bracket { low: 0.0, high: Some(0.0625) });
    }
}
