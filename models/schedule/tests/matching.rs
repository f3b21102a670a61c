//! MPI matching (`Matcher`): the order rules one by one, then random sequences of posts and
//! arrivals against a linear-scan reference.

use proptest::prelude::*;
use xnet_schedule::{Envelope, Matcher, Pattern, Source, TagMatch};

fn env(comm: u32, src: u32, tag: u32) -> Envelope {
    Envelope { comm, src, tag }
}

fn pat(comm: u32, src: Option<u32>, tag: Option<u32>) -> Pattern {
    Pattern {
        comm,
        src: src.map_or(Source::Any, Source::Rank),
        tag: tag.map_or(TagMatch::Any, TagMatch::Tag),
    }
}

#[test]
fn messages_of_one_sender_are_received_in_order() {
    let mut m: Matcher<u32, u32> = Matcher::new(2);
    for i in 0..3 {
        assert!(m.arrive(1, env(0, 0, 7), i).is_none());
    }
    assert_eq!(m.unexpected(), 3);
    for i in 0..3 {
        assert_eq!(m.post(1, pat(0, Some(0), Some(7)), 10).map(|x| x.1), Some(i));
    }
    assert_eq!(m.unexpected(), 0);
}

#[test]
fn an_arriving_message_takes_the_earliest_posted_receive() {
    let mut m: Matcher<u32, u32> = Matcher::new(2);
    assert!(m.post(0, pat(0, Some(1), Some(3)), 1).is_none());
    assert!(m.post(0, pat(0, None, Some(3)), 2).is_none());
    assert!(m.post(0, pat(0, Some(1), Some(3)), 3).is_none());
    assert!(m.post(0, pat(0, None, None), 4).is_none());
    // Exact receive 1 was posted first; then the any-source 2; then 3; then 4.
    let got: Vec<u32> = (0..4).map(|_| m.arrive(0, env(0, 1, 3), 0).unwrap().1).collect();
    assert_eq!(got, [1, 2, 3, 4]);
}

#[test]
fn a_wildcard_posted_first_wins_over_a_later_exact_receive() {
    let mut m: Matcher<u32, u32> = Matcher::new(1);
    assert!(m.post(0, pat(0, None, None), 1).is_none());
    assert!(m.post(0, pat(0, Some(0), Some(5)), 2).is_none());
    assert_eq!(m.arrive(0, env(0, 0, 5), 0).unwrap().1, 1);
    assert_eq!(m.arrive(0, env(0, 0, 5), 0).unwrap().1, 2);
}

#[test]
fn a_wildcard_receive_takes_the_earliest_arrived_match() {
    let mut m: Matcher<u32, u32> = Matcher::new(4);
    m.arrive(0, env(0, 3, 1), 10);
    m.arrive(0, env(1, 2, 1), 11); // another communicator: never matched by comm 0
    m.arrive(0, env(0, 2, 9), 12);
    m.arrive(0, env(0, 1, 1), 13);
    assert_eq!(m.post(0, pat(0, None, Some(1)), 0).unwrap(), (env(0, 3, 1), 10));
    assert_eq!(m.post(0, pat(0, Some(2), None), 0).unwrap(), (env(0, 2, 9), 12));
    assert_eq!(m.post(0, pat(0, None, None), 0).unwrap(), (env(0, 1, 1), 13));
    assert!(m.post(0, pat(0, None, None), 0).is_none());
    assert_eq!(m.post(0, pat(1, None, None), 0).unwrap().1, 11);
}

#[test]
fn communicators_and_ranks_are_separate() {
    let mut m: Matcher<u32, u32> = Matcher::new(3);
    m.arrive(1, env(0, 0, 0), 1);
    assert!(m.post(2, pat(0, Some(0), Some(0)), 0).is_none());
    assert!(m.post(1, pat(1, Some(0), Some(0)), 0).is_none());
    assert_eq!(m.post(1, pat(0, Some(0), Some(0)), 0).unwrap().1, 1);
    assert_eq!(m.posted(), 2);
}

/// One step of a random sequence: a receive posted at, or a message arriving at, a rank.
#[derive(Clone, Debug)]
enum Step {
    Post(u32, Pattern),
    Arrive(u32, Envelope),
}

fn step() -> impl Strategy<Value = Step> {
    let small = 0u32..3;
    let opt = prop::option::of(0u32..3);
    prop_oneof![
        (0u32..2, 0u32..2, opt.clone(), opt).prop_map(|(r, c, s, t)| Step::Post(r, pat(c, s, t))),
        (0u32..2, 0u32..2, small.clone(), small).prop_map(|(r, c, s, t)| Step::Arrive(r, env(c, s, t))),
    ]
}

/// The reference: per rank, the posted receives and unexpected messages in order, scanned.
#[derive(Default)]
struct Naive {
    posted: Vec<(u32, Pattern, usize)>,
    unexpected: Vec<(u32, Envelope, usize)>,
}

impl Naive {
    fn step(&mut self, i: usize, s: &Step) -> Option<usize> {
        match *s {
            Step::Post(r, p) => {
                match self.unexpected.iter().position(|&(rr, e, _)| rr == r && p.matches(&e)) {
                    Some(k) => Some(self.unexpected.remove(k).2),
                    None => {
                        self.posted.push((r, p, i));
                        None
                    }
                }
            }
            Step::Arrive(r, e) => match self.posted.iter().position(|&(rr, p, _)| rr == r && p.matches(&e)) {
                Some(k) => Some(self.posted.remove(k).2),
                None => {
                    self.unexpected.push((r, e, i));
                    None
                }
            },
        }
    }
}

proptest! {
    #[test]
    fn matches_the_linear_scan_reference(steps in prop::collection::vec(step(), 0..200)) {
        let mut m: Matcher<usize, usize> = Matcher::new(2);
        let mut naive = Naive::default();
        for (i, s) in steps.iter().enumerate() {
            let got = match *s {
                Step::Post(r, p) => m.post(r, p, i).map(|x| x.1),
                Step::Arrive(r, e) => m.arrive(r, e, i).map(|x| x.1),
            };
            prop_assert_eq!(got, naive.step(i, s), "step {}: {:?}", i, s);
            prop_assert_eq!(m.posted(), naive.posted.len());
            prop_assert_eq!(m.unexpected(), naive.unexpected.len());
        }
    }
}
