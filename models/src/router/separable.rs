//! The separable allocator's matching of crossbar requests (`separable_allocation`, a free
//! function unit-tested on its own), its scratch space, reused by every router of a
//! partition ([`Scratch`], in `PartitionState`), and the arbiters' priorities (round-robin
//! pointers or random draws).

use super::buffers::PortState;
use super::Allocator;
use routing::Candidate;
use topology::PortId;

/// The allocator's scratch space, reused by every router of a partition: each pass
/// leaves it as it found it.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) candidates: Vec<Candidate>,
    /// `(output, input, vc)` requests of the current pass.
    pub(super) requests: Vec<(PortId, PortId, u8)>,
    /// Per input port: the best `(rank, output, vc)` proposal (input-first) or grant
    /// (output-first) of the current iteration.
    pub(super) proposal: Vec<(u32, PortId, u8)>,
    /// Per output port: the best `(rank, input, vc)` of the current iteration; once the
    /// output is matched, its match until the grants take effect.
    pub(super) grant_choice: Vec<(u32, PortId, u8)>,
    /// Per port: whether an earlier iteration of the current pass matched it as an input
    /// and as an output.
    pub(super) in_matched: Vec<bool>,
    pub(super) out_matched: Vec<bool>,
    /// Input ports with a proposal (or a grant) in the current iteration.
    pub(super) touched: Vec<PortId>,
    /// Output ports granting in the current iteration (output-first).
    pub(super) offers: Vec<PortId>,
    /// Output ports matched in the current pass.
    pub(super) granted: Vec<PortId>,
    /// With the per-VC crossbar: `(output port * vcs + output VC, round-robin rank, input,
    /// input VC)` of the current pass's requests.
    pub(super) vc_requests: Vec<(u32, u32, PortId, u8)>,
}

impl Scratch {
    /// Makes the per-port arrays at least `ports` long.
    #[inline]
    pub(super) fn fit(&mut self, ports: usize) {
        if self.proposal.len() < ports {
            self.proposal.resize(ports, (u32::MAX, 0, 0));
            self.grant_choice.resize(ports, (u32::MAX, 0, 0));
            self.in_matched.resize(ports, false);
            self.out_matched.resize(ports, false);
        }
    }
}

/// One arbiter's offer: port `who`'s slot in `slots` keeps the lowest-ranked `(port, vc)`
/// offered to it, and `who` joins `listed` at its first offer of the iteration.
#[inline]
pub(super) fn keep_best(
    slots: &mut [(u32, PortId, u8)],
    listed: &mut Vec<PortId>,
    who: PortId,
    rank: u32,
    (port, vc): (PortId, u8),
) {
    let slot = &mut slots[who as usize];
    if slot.0 == u32::MAX {
        listed.push(who);
    }
    if rank < slot.0 {
        *slot = (rank, port, vc);
    }
}

/// The priorities of a separable allocator's arbiters: the smaller rank wins.
pub(super) trait Priorities {
    /// Of VC `vc` at input port `input`, among that input's requests.
    fn input_rank(&mut self, input: PortId, vc: u8) -> u32;
    /// Of input port `input`'s VC `vc` at output port `output`, among that output's
    /// requests.
    fn output_rank(&mut self, output: PortId, input: PortId, vc: u8) -> u32;
}

/// A router's arbiters: round-robin from the ports' pointers (an input's over its VCs, an
/// output's over the input ports, then their VCs), or uniformly random draws.
pub(super) struct Arbiters<'a> {
    pub(super) ports: &'a [PortState],
    pub(super) rng: &'a mut base::rng::Rng,
    pub(super) vcs: usize,
    pub(super) random: bool,
}

impl Arbiters<'_> {
    /// Distance of VC `vc` from input `input`'s pointer.
    fn vc_distance(&self, input: PortId, vc: u8) -> usize {
        (vc as usize + self.vcs - self.ports[input as usize].in_vc_rr as usize) % self.vcs
    }
}

impl Priorities for Arbiters<'_> {
    fn input_rank(&mut self, input: PortId, vc: u8) -> u32 {
        if self.random {
            base::rng::below(self.rng, 1 << 15) as u32
        } else {
            self.vc_distance(input, vc) as u32
        }
    }
    fn output_rank(&mut self, output: PortId, input: PortId, vc: u8) -> u32 {
        if self.random {
            base::rng::below(self.rng, 1 << 15) as u32
        } else {
            let ports = self.ports.len();
            let from = self.ports[output as usize].grant_rr as usize;
            (((input as usize + ports - from) % ports) * self.vcs + self.vc_distance(input, vc)) as u32
        }
    }
}

/// The separable allocator of the port crossbar: matches `scratch.requests` (`(output,
/// input, input VC)`) so that each input port and each output port takes part in at most
/// one match, in up to `iterations` iterations of `allocator`'s two arbitrations; later
/// iterations consider only the ports earlier ones left unmatched. Leaves the matched
/// outputs in `scratch.granted`, each one's `(rank, input, VC)` in `scratch.grant_choice`
/// and the matched ports marked in `in_matched`/`out_matched` (the caller clears both
/// as it applies the grants); returns the number of matches.
pub(super) fn separable_allocation(
    scratch: &mut Scratch,
    allocator: Allocator,
    iterations: u8,
    arbiters: &mut impl Priorities,
) -> usize {
    scratch.granted.clear();
    for _ in 0..iterations {
        let before = scratch.granted.len();
        match allocator {
            Allocator::InputFirst => {
                // Each free input proposes its best request to a free output...
                scratch.touched.clear();
                for &(o, i, v) in scratch.requests.iter() {
                    if scratch.in_matched[i as usize] || scratch.out_matched[o as usize] {
                        continue;
                    }
                    let rank = arbiters.input_rank(i, v);
                    keep_best(&mut scratch.proposal, &mut scratch.touched, i, rank, (o, v));
                }
                // ...and each output grants its best proposal.
                for &i in &scratch.touched {
                    let (_, o, v) = std::mem::replace(&mut scratch.proposal[i as usize], (u32::MAX, 0, 0));
                    let rank = arbiters.output_rank(o, i, v);
                    keep_best(&mut scratch.grant_choice, &mut scratch.granted, o, rank, (i, v));
                }
            }
            Allocator::OutputFirst => {
                // Each free output grants its best request from a free input...
                scratch.offers.clear();
                for &(o, i, v) in scratch.requests.iter() {
                    if scratch.in_matched[i as usize] || scratch.out_matched[o as usize] {
                        continue;
                    }
                    let rank = arbiters.output_rank(o, i, v);
                    keep_best(&mut scratch.grant_choice, &mut scratch.offers, o, rank, (i, v));
                }
                // ...each input accepts its best grant...
                scratch.touched.clear();
                for &o in &scratch.offers {
                    let (_, i, v) = scratch.grant_choice[o as usize];
                    let rank = arbiters.input_rank(i, v);
                    keep_best(&mut scratch.proposal, &mut scratch.touched, i, rank, (o, v));
                }
                for &i in &scratch.touched {
                    let (_, o, _) = std::mem::replace(&mut scratch.proposal[i as usize], (u32::MAX, 0, 0));
                    scratch.out_matched[o as usize] = true;
                    scratch.granted.push(o);
                }
                // ...and the grants not accepted are withdrawn.
                for &o in &scratch.offers {
                    if !scratch.out_matched[o as usize] {
                        scratch.grant_choice[o as usize] = (u32::MAX, 0, 0);
                    }
                }
            }
        }
        for g in before..scratch.granted.len() {
            let o = scratch.granted[g] as usize;
            scratch.out_matched[o] = true;
            scratch.in_matched[scratch.grant_choice[o].1 as usize] = true;
        }
        if scratch.granted.len() == before || scratch.granted.len() == scratch.requests.len() {
            break;
        }
    }
    scratch.granted.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round-robin arbiters whose pointers all stand at 0, with `VCS` VCs per port.
    struct AtZero;
    const VCS: u32 = 4;
    impl Priorities for AtZero {
        fn input_rank(&mut self, _input: PortId, vc: u8) -> u32 {
            vc as u32
        }
        fn output_rank(&mut self, _output: PortId, input: PortId, vc: u8) -> u32 {
            input as u32 * VCS + vc as u32
        }
    }

    /// The `(output, input, vc)` matches of `requests` among `ports` ports.
    fn matches(
        requests: &[(PortId, PortId, u8)],
        allocator: Allocator,
        iterations: u8,
    ) -> Vec<(PortId, PortId, u8)> {
        let mut scratch = Scratch::default();
        scratch.fit(8);
        scratch.requests = requests.to_vec();
        let n = separable_allocation(&mut scratch, allocator, iterations, &mut AtZero);
        let mut out: Vec<_> = scratch
            .granted
            .iter()
            .map(|&o| {
                let (_, i, v) = scratch.grant_choice[o as usize];
                (o, i, v)
            })
            .collect();
        assert_eq!(out.len(), n);
        out.sort_unstable();
        // A matching of requests: every port at most once on each side.
        for (k, m) in out.iter().enumerate() {
            assert!(requests.contains(m), "{m:?} was not requested");
            assert!(out[k + 1..].iter().all(|x| x.0 != m.0 && x.1 != m.1), "{out:?} is not a matching");
            assert!(scratch.out_matched[m.0 as usize] && scratch.in_matched[m.1 as usize]);
        }
        out
    }

    #[test]
    fn iterations_and_output_first_match_what_one_input_first_pass_leaves() {
        // Inputs 0 and 1 both want output 5 on VC 0; input 1 also wants output 6 on VC 1.
        let requests = [(5, 0, 0), (5, 1, 0), (6, 1, 1)];
        // One input-first pass: both inputs propose VC 0 to output 5, which takes input 0;
        // input 1's request for output 6 waits for the next pass.
        assert_eq!(matches(&requests, Allocator::InputFirst, 1), vec![(5, 0, 0)]);
        // A second iteration matches it.
        assert_eq!(matches(&requests, Allocator::InputFirst, 2), vec![(5, 0, 0), (6, 1, 1)]);
        // Output-first: output 5 grants input 0, output 6 grants input 1; both accept.
        assert_eq!(matches(&requests, Allocator::OutputFirst, 1), vec![(5, 0, 0), (6, 1, 1)]);
    }

    #[test]
    fn enough_iterations_leave_no_request_with_both_ends_free() {
        // Every input requests every output on some VC: a complete 4x4 bipartite graph,
        // where a matching with no request left between two free ports has 4 matches.
        let mut requests = Vec::new();
        for i in 0..4u16 {
            for o in 4..8u16 {
                requests.push((o, i, ((i + o) % VCS as u16) as u8));
            }
        }
        for allocator in [Allocator::InputFirst, Allocator::OutputFirst] {
            let m = matches(&requests, allocator, 8);
            assert_eq!(m.len(), 4, "{allocator:?}: {m:?}");
            // One iteration matches at least one pair.
            assert!(!matches(&requests, allocator, 1).is_empty());
        }
    }
}
