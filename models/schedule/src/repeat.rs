//! A graph of iterations: one iteration's schedule (or a cycle of several) repeated,
//! without storing the repeats. An application's steps repeated for a thousand iterations
//! on a million ranks would be billions of stored ops; repeated, they are the ops of one
//! iteration.
//!
//! Iteration `i` of rank `r` runs template `i mod t`; its op `k` is op `i * n + k` of the
//! graph, `n` being the rank's ops per iteration (the same in every template). The last op
//! of each rank's template is the iteration's end: every other op of the template must lead
//! to it through `requires` (checked), and the ops that start a template (no dependency)
//! require the end of the previous iteration.

use crate::graph::{Graph, Op, OpId, Schedule};

/// Templates repeated for a number of iterations (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repeated {
    templates: Vec<Schedule>,
    iterations: u32,
}

impl Repeated {
    /// Iteration `i` runs `templates[i % templates.len()]`, for `iterations` iterations.
    ///
    /// Errors: no template; templates of different numbers of ranks, or of different
    /// numbers of ops for some rank; a rank whose template has an op that does not lead to
    /// its last op through `requires`; more than `u32::MAX` ops in a rank.
    pub fn new(templates: Vec<Schedule>, iterations: u32) -> Result<Repeated, String> {
        let Some(first) = templates.first() else { return Err("no template to repeat".into()) };
        let ranks = first.num_ranks();
        for (t, s) in templates.iter().enumerate() {
            if s.num_ranks() != ranks {
                return Err(format!("template {t} has {} ranks, template 0 {ranks}", s.num_ranks()));
            }
            for r in 0..ranks {
                let n = s.ops_in_rank(r);
                if n != first.ops_in_rank(r) {
                    return Err(format!(
                        "rank {r} has {n} ops in template {t}, {} in template 0",
                        first.ops_in_rank(r)
                    ));
                }
                if u64::from(n) * u64::from(iterations) > u64::from(u32::MAX) {
                    return Err(format!(
                        "rank {r} would have {} ops, more than 2^32 - 1",
                        u64::from(n) * u64::from(iterations)
                    ));
                }
                if let Some(op) = not_leading_to_last(s, r) {
                    return Err(format!(
                        "in template {t}, op {op} of rank {r} does not lead to the rank's last op"
                    ));
                }
            }
        }
        Ok(Repeated { templates, iterations })
    }

    /// Iteration `i`'s template and the op `k` within it of op `op` of `rank`.
    fn locate(&self, rank: u32, op: OpId) -> (u32, &Schedule, OpId) {
        let n = self.templates[0].ops_in_rank(rank);
        let (i, k) = (op / n, op % n);
        (i, &self.templates[i as usize % self.templates.len()], k)
    }
}

/// An op of `rank` in `s` from which no path of `requires` reaches the rank's last op.
fn not_leading_to_last(s: &Schedule, rank: u32) -> Option<OpId> {
    let n = s.ops_in_rank(rank);
    if n == 0 {
        return None;
    }
    // Walk the requires edges backwards from the last op.
    let mut required_by: Vec<Vec<OpId>> = vec![Vec::new(); n as usize];
    for a in 0..n {
        for &b in s.after_end(rank, a) {
            required_by[b as usize].push(a);
        }
    }
    let mut reached = vec![false; n as usize];
    let mut stack = vec![n - 1];
    reached[n as usize - 1] = true;
    while let Some(b) = stack.pop() {
        for &a in &required_by[b as usize] {
            if !reached[a as usize] {
                reached[a as usize] = true;
                stack.push(a);
            }
        }
    }
    reached.iter().position(|&r| !r).map(|k| k as OpId)
}

impl Graph for Repeated {
    fn num_ranks(&self) -> u32 {
        self.templates[0].num_ranks()
    }

    fn ops_in_rank(&self, rank: u32) -> u32 {
        self.templates[0].ops_in_rank(rank) * self.iterations
    }

    fn op(&self, rank: u32, op: OpId) -> Op {
        let (_, s, k) = self.locate(rank, op);
        s.op(rank, k)
    }

    fn unmet(&self, rank: u32, op: OpId) -> u32 {
        let (i, s, k) = self.locate(rank, op);
        let own = s.unmet(rank, k);
        // A template's first ops wait for the end of the previous iteration.
        own + u32::from(i > 0 && own == 0)
    }

    fn each_after_start(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId)) {
        let (i, s, k) = self.locate(rank, op);
        let base = i * s.ops_in_rank(rank);
        s.after_start(rank, k).iter().for_each(|&d| each(base + d));
    }

    fn each_after_end(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId)) {
        let (i, s, k) = self.locate(rank, op);
        let n = s.ops_in_rank(rank);
        s.after_end(rank, k).iter().for_each(|&d| each(i * n + d));
        if k + 1 == n && i + 1 < self.iterations {
            let next = &self.templates[(i + 1) as usize % self.templates.len()];
            next.ready(rank).for_each(|d| each((i + 1) * n + d));
        }
    }

    fn iterations(&self) -> u32 {
        self.iterations
    }

    fn ops_per_iteration(&self, rank: u32) -> u32 {
        self.templates[0].ops_in_rank(rank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::ScheduleBuilder;

    #[test]
    fn templates_must_agree_and_end_in_their_last_op() {
        assert!(Repeated::new(Vec::new(), 3).is_err());
        let one = |ops: &[u32]| {
            let mut b = ScheduleBuilder::new();
            for &n in ops {
                b.add_rank();
                let mut last = None;
                for _ in 0..n {
                    let c = b.calc(1);
                    if let Some(l) = last {
                        b.requires(c, l);
                    }
                    last = Some(c);
                }
            }
            b.build()
        };
        let e = Repeated::new(vec![one(&[1, 3]), one(&[1, 2])], 2).unwrap_err();
        assert!(e.contains("rank 1 has 2 ops in template 1, 3 in template 0"), "{e}");
        let e = Repeated::new(vec![one(&[1, 3]), one(&[1])], 2).unwrap_err();
        assert!(e.contains("template 1 has 1 ranks"), "{e}");
        assert!(Repeated::new(vec![one(&[1, 3]), one(&[1, 3])], 2).is_ok());
        // A calc that nothing waits for: the iteration could end before it.
        let mut b = ScheduleBuilder::new();
        b.add_rank();
        b.calc(4);
        b.calc(1);
        let e = Repeated::new(vec![b.build()], 2).unwrap_err();
        assert!(e.contains("op 0 of rank 0 does not lead"), "{e}");
        let e = Repeated::new(vec![one(&[70_000])], 70_000).unwrap_err();
        assert!(e.contains("more than 2^32 - 1"), "{e}");
    }
}
