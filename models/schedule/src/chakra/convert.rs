//! Chakra ranks as a schedule: every rank's nodes in an order their dependencies allow,
//! each become one op (or, for a collective, the ops the caller's algorithm emits).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use rustc_hash::FxHashMap;

use super::{ChakraError, ChakraNode, ChakraRank, CollectiveKind, NodeType, ProcessGroup};
use crate::collectives::Kind;
use crate::graph::{OpId, Schedule, ScheduleBuilder, Source, TagMatch};
use crate::Comm;

/// A collective node as the algorithm that expands it needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChakraCollective {
    /// Its kind (`comm_type`).
    pub kind: CollectiveKind,
    /// Its `comm_size`, as the trace gives it (0 for a barrier without one). What it
    /// measures is the writer's: Chakra's PyTorch converter sums the bytes of the
    /// collective's input tensors (`pytorch_node.py`); ASTRA-sim's generators write the
    /// collective's size.
    pub bytes: u64,
    /// Its root, a comm rank: the node's `root` attribute, else 0 (no writer read records
    /// one).
    pub root: usize,
}

impl ChakraCollective {
    /// The collective as MPI's collectives take it on a communicator of `n` ranks: its kind
    /// and the buffer (all-reduce, broadcast, reduce), each rank's part (all-gather,
    /// gather, reduce-scatter, scatter) or each pair's block (all-to-all). `comm_size` is
    /// the collective's input on a rank, as PyTorch records it and ASTRA-sim's ring reads
    /// it: the part itself for all-gather and gather, the whole input for reduce-scatter,
    /// scatter and all-to-all (divided by `n`).
    pub fn mpi(&self, n: usize) -> (Kind, u64) {
        let n = n.max(1) as u64;
        match self.kind {
            CollectiveKind::AllReduce => (Kind::Allreduce, self.bytes),
            CollectiveKind::Reduce => (Kind::Reduce, self.bytes),
            CollectiveKind::Broadcast => (Kind::Bcast, self.bytes),
            CollectiveKind::AllGather => (Kind::Allgather, self.bytes),
            CollectiveKind::Gather => (Kind::Gather, self.bytes),
            CollectiveKind::Scatter => (Kind::Scatter, self.bytes / n),
            CollectiveKind::AllToAll => (Kind::Alltoall, self.bytes / n),
            CollectiveKind::ReduceScatter | CollectiveKind::ReduceScatterBlock => {
                (Kind::ReduceScatter, self.bytes / n)
            }
            CollectiveKind::Barrier => (Kind::Barrier, 0),
        }
    }
}

/// The algorithm that expands a collective: called with the builder (its current rank is
/// the collective's), the collective, its process group's communicator, the rank's comm
/// rank in it, the tag (the collective's number among the rank's collectives on that
/// communicator: every member gives the same collective the same tag) and the op every op
/// of the expansion must follow (`None`: it depends on nothing). Returns an op that ends
/// when the rank's part ends, or `None` if it has nothing to do (a communicator of one).
/// [`crate::emit`] and [`crate::nccl::emit_nccl`] fit, given a choice of algorithm.
pub type Expand<'a> =
    dyn FnMut(&mut ScheduleBuilder, &ChakraCollective, &Comm, usize, u32, Option<OpId>) -> Option<OpId> + 'a;

/// How [`schedule_of_chakra_with`] reads traces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChakraOptions {
    /// Process groups' members, over those the traces describe (ASTRA-sim's communicator
    /// group file: [`super::parse_comm_groups`]).
    pub groups: Vec<ProcessGroup>,
    /// Whether `ctrl_deps` order nodes as `data_deps` do (default: yes, as ASTRA-sim's
    /// feeder does). No: as Chakra's own `et_feeder`, which follows `data_deps` only; PyTorch
    /// traces of schema 1.0.1 give the calling operator in `ctrl_deps`, which may be the
    /// node itself or a node the file does not have.
    pub ctrl_deps: bool,
}

impl Default for ChakraOptions {
    fn default() -> ChakraOptions {
        ChakraOptions { groups: Vec::new(), ctrl_deps: true }
    }
}

/// The communicator of the traces' point-to-point messages (0, with
/// [`NCCL_COMM`](crate::nccl::NCCL_COMM)); process groups get 1, 2, ... A trace's send
/// does not wait for its receive to be posted (ASTRA-sim sends at once; NCCL's receivers
/// post their buffers ahead): marked so, the executor sends it eagerly, whatever its size,
/// and a ring of sends before receives does not deadlock as it would under MPI's
/// rendezvous.
pub const POINT_TO_POINT_COMM: u32 = crate::nccl::NCCL_COMM;

/// [`schedule_of_chakra_with`] with the default options: both kinds of dependency, process
/// groups as the traces describe them.
pub fn schedule_of_chakra(ranks: &[ChakraRank], expand: &mut Expand<'_>) -> Result<Schedule, ChakraError> {
    schedule_of_chakra_with(ranks, &ChakraOptions::default(), expand)
}

/// The schedule of a job's traces, `ranks[r]` being rank `r`'s.
///
/// Each rank's nodes become ops in a topological order of their dependencies (the file's
/// order where they allow: of the nodes whose dependencies have been placed, the first in
/// the file goes next); a node's ops start after the ends of the ops of the nodes it
/// depends on (`ctrl_deps` and `data_deps`, or `data_deps` only: [`ChakraOptions`]).
///
/// - `COMP_NODE`: a `calc` of its `duration_micros` in nanoseconds (as ASTRA-sim replays
///   it; the schedule's `calc`s are in ns).
/// - `COMM_SEND_NODE`: a send of `comm_size` bytes to `comm_dst` with `comm_tag` (0 where
///   absent); `COMM_RECV_NODE`: a receive from `comm_src`. Peers are ranks of the whole job
///   (as ASTRA-sim takes them, whatever the node's process group), on communicator
///   [`POINT_TO_POINT_COMM`]. A send's `comm_src` and a receive's `comm_dst`, where given,
///   must be the node's own rank.
/// - `COMM_COLL_NODE`: `expand`'s ops for its [`ChakraCollective`] on its process group's
///   communicator (ids from 1, one per process group the collectives use: every rank first,
///   then groups by name, numeric names by value); a `calc 0` where `expand` returns `None`.
///   The collectives of a group must be the same on all its members, in order: kind, bytes
///   and root.
/// - Other nodes (metadata, memory, invalid): a `calc 0` that keeps their place in the order.
///
/// Errors name the rank's file and the node's byte offset: duplicate node ids, a
/// dependency on a node the file does not have, a dependency cycle, a collective's or
/// message's missing or impossible attribute, process groups that disagree.
///
/// # Panics
/// If `expand` returns an op the rank does not have.
pub fn schedule_of_chakra_with(
    ranks: &[ChakraRank],
    options: &ChakraOptions,
    expand: &mut Expand<'_>,
) -> Result<Schedule, ChakraError> {
    let n = ranks.len();
    if let Some((r, t)) = ranks.iter().enumerate().find(|(r, t)| t.rank as usize != *r) {
        return Err(error(
            t,
            0,
            format!("the traces must be given in rank order: rank {} is at position {r}", t.rank),
        ));
    }
    let plans: Vec<Plan> = ranks.iter().map(|t| Plan::new(t, options.ctrl_deps)).collect::<Result<_, _>>()?;
    let mut colls: Vec<Vec<Coll>> =
        ranks.iter().zip(&plans).map(|(t, p)| collectives(t, p)).collect::<Result<_, _>>()?;
    let table = described_groups(ranks, options)?;
    let (comms, places) = communicators(ranks, &colls, &table)?;
    for p in places {
        let c = &mut colls[p.rank as usize][p.index];
        (c.comm, c.me, c.tag) = (p.comm, p.me, p.tag);
    }

    let mut b = ScheduleBuilder::new();
    let mut end: Vec<OpId> = Vec::new();
    let mut deps: Vec<OpId> = Vec::new();
    for (r, (t, plan)) in ranks.iter().zip(&plans).enumerate() {
        b.add_rank();
        end.clear();
        end.resize(t.nodes.len(), 0);
        let mut next_coll = colls[r].iter();
        for &i in &plan.order {
            let node = &t.nodes[i as usize];
            deps.clear();
            deps.extend(plan.deps(i).iter().map(|&d| end[d as usize]));
            let op = match node.node_type {
                NodeType::Comp => b.calc(node.duration_ns()),
                NodeType::CommSend => {
                    let (peer, bytes) =
                        message(t, node, n, node.comm_dst, node.comm_src, "comm_dst", "comm_src")?;
                    b.send(peer, bytes, node.comm_tag.unwrap_or(0), POINT_TO_POINT_COMM)
                }
                NodeType::CommRecv => {
                    let (peer, bytes) =
                        message(t, node, n, node.comm_src, node.comm_dst, "comm_src", "comm_dst")?;
                    let tag = TagMatch::Tag(node.comm_tag.unwrap_or(0));
                    b.recv(Source::Rank(peer), bytes, tag, POINT_TO_POINT_COMM)
                }
                NodeType::CommColl => {
                    let c = next_coll.next().expect("one entry per collective node, in order");
                    let comm = &comms[c.comm];
                    let after = match deps[..] {
                        [] => None,
                        [d] => Some(d),
                        _ => {
                            let join = b.calc(0);
                            deps.iter().for_each(|&d| b.requires(join, d));
                            Some(join)
                        }
                    };
                    deps.clear();
                    let done = expand(&mut b, &c.collective, comm, c.me, c.tag, after);
                    match done {
                        Some(op) => {
                            assert!(
                                op < b.ops_in_rank(),
                                "expand returned op {op}, which rank {r} does not have"
                            );
                            op
                        }
                        None => {
                            deps.extend(after);
                            b.calc(0)
                        }
                    }
                }
                _ => b.calc(0),
            };
            deps.iter().for_each(|&d| b.requires(op, d));
            end[i as usize] = op;
        }
    }
    Ok(b.build())
}

fn error(t: &ChakraRank, offset: u64, message: String) -> ChakraError {
    ChakraError { file: t.file.clone(), rank: Some(t.rank), offset, message }
}

fn at(t: &ChakraRank, node: &ChakraNode, message: String) -> ChakraError {
    error(t, node.offset, message)
}

/// A send's or receive's peer and bytes, checked.
fn message(
    t: &ChakraRank,
    node: &ChakraNode,
    n: usize,
    peer: Option<u32>,
    own: Option<u32>,
    peer_attr: &str,
    own_attr: &str,
) -> Result<(u32, u64), ChakraError> {
    let Some(peer) = peer else { return Err(at(t, node, format!("{} has no {peer_attr}", node.describe()))) };
    if peer as usize >= n || peer == t.rank {
        let why =
            if peer == t.rank { "its own rank".to_string() } else { format!("but the job has {n} ranks") };
        return Err(at(t, node, format!("{} has {peer_attr} {peer}: {why}", node.describe())));
    }
    if let Some(own) = own.filter(|&o| o != t.rank) {
        return Err(at(t, node, format!("{} of rank {} has {own_attr} {own}", node.describe(), t.rank)));
    }
    let Some(bytes) = node.comm_size else {
        return Err(at(t, node, format!("{} has no comm_size", node.describe())));
    };
    Ok((peer, bytes))
}

/// A rank's nodes in order, and their dependencies as node indices.
struct Plan {
    order: Vec<u32>,
    starts: Vec<u32>,
    deps: Vec<u32>,
}

impl Plan {
    fn new(t: &ChakraRank, ctrl: bool) -> Result<Plan, ChakraError> {
        let nodes = &t.nodes;
        let mut index: FxHashMap<u64, u32> = FxHashMap::default();
        for (i, node) in nodes.iter().enumerate() {
            if let Some(&j) = index.get(&node.id) {
                let other = nodes[j as usize].offset;
                return Err(at(
                    t,
                    node,
                    format!("{} has the id of the node at byte {other}", node.describe()),
                ));
            }
            index.insert(node.id, i as u32);
        }
        let (mut starts, mut deps) = (vec![0u32], Vec::new());
        let mut seen = vec![u32::MAX; nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            let ctrl_deps = if ctrl { &node.ctrl_deps[..] } else { &[] };
            for &d in ctrl_deps.iter().chain(&node.data_deps) {
                let Some(&j) = index.get(&d) else {
                    let m = format!(
                        "{} depends on node {d}, which rank {}'s trace does not have",
                        node.describe(),
                        t.rank
                    );
                    return Err(at(t, node, m));
                };
                if seen[j as usize] != i as u32 {
                    seen[j as usize] = i as u32;
                    deps.push(j);
                }
            }
            starts.push(deps.len() as u32);
        }
        let mut plan = Plan { order: Vec::with_capacity(nodes.len()), starts, deps };
        // Kahn's algorithm, the earliest ready node in the file first.
        let mut unmet: Vec<u32> = (0..nodes.len() as u32).map(|i| plan.deps(i).len() as u32).collect();
        let mut after = vec![0u32; nodes.len() + 1];
        for &d in &plan.deps {
            after[d as usize + 1] += 1;
        }
        for i in 0..nodes.len() {
            after[i + 1] += after[i];
        }
        let mut fill = after.clone();
        let mut dependents = vec![0u32; plan.deps.len()];
        for i in 0..nodes.len() as u32 {
            for &d in plan.deps(i) {
                dependents[fill[d as usize] as usize] = i;
                fill[d as usize] += 1;
            }
        }
        let mut ready: BinaryHeap<Reverse<u32>> =
            (0..nodes.len() as u32).filter(|&i| unmet[i as usize] == 0).map(Reverse).collect();
        while let Some(Reverse(i)) = ready.pop() {
            plan.order.push(i);
            for &j in &dependents[after[i as usize] as usize..after[i as usize + 1] as usize] {
                unmet[j as usize] -= 1;
                if unmet[j as usize] == 0 {
                    ready.push(Reverse(j));
                }
            }
        }
        if plan.order.len() < nodes.len() {
            return Err(plan.cycle(t, &unmet));
        }
        Ok(plan)
    }

    fn deps(&self, i: u32) -> &[u32] {
        &self.deps[self.starts[i as usize] as usize..self.starts[i as usize + 1] as usize]
    }

    /// The error naming a cycle among the nodes left unplaced (`unmet` > 0): each of them
    /// waits for another of them.
    fn cycle(&self, t: &ChakraRank, unmet: &[u32]) -> ChakraError {
        let mut on_path = vec![u32::MAX; unmet.len()];
        let mut path: Vec<u32> = Vec::new();
        let mut i = (0..unmet.len() as u32).find(|&i| unmet[i as usize] > 0).expect("a node is left");
        while on_path[i as usize] == u32::MAX {
            on_path[i as usize] = path.len() as u32;
            path.push(i);
            i = *self
                .deps(i)
                .iter()
                .find(|&&d| unmet[d as usize] > 0)
                .expect("an unplaced node waits for one");
        }
        let cycle = &path[on_path[i as usize] as usize..];
        let node = |i: u32| &t.nodes[i as usize];
        let ids: Vec<String> = cycle.iter().chain(&cycle[..1]).map(|&i| node(i).id.to_string()).collect();
        let first = node(cycle[0]);
        at(
            t,
            first,
            format!(
                "{} is on a dependency cycle: node {} (each depends on the next)",
                first.describe(),
                ids.join(" -> ")
            ),
        )
    }
}

/// A process group's key, in communicator order: every rank first, then names, numeric
/// ones by value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct GroupKey(u8, u64, String);

impl GroupKey {
    fn of(pg_name: Option<&str>) -> GroupKey {
        match pg_name {
            None | Some("" | "0") => GroupKey(0, 0, String::new()),
            Some(name) => match name.parse::<u64>() {
                Ok(v) => GroupKey(1, v, name.into()),
                Err(_) => GroupKey(2, 0, name.into()),
            },
        }
    }

    fn describe(&self) -> String {
        if self.0 == 0 {
            "the default process group (every rank)".into()
        } else {
            format!("process group \"{}\"", self.2)
        }
    }
}

/// A rank's collective: its node, what it is, its group and (once the groups are known)
/// its communicator (an index of the communicators), comm rank and tag.
struct Coll {
    node: u32,
    collective: ChakraCollective,
    root: Option<u32>,
    group: GroupKey,
    comm: usize,
    me: usize,
    tag: u32,
}

/// A rank's collectives in its plan's order, checked, their tags not yet set.
fn collectives(t: &ChakraRank, plan: &Plan) -> Result<Vec<Coll>, ChakraError> {
    let mut out = Vec::new();
    for &i in &plan.order {
        let node = &t.nodes[i as usize];
        if node.node_type != NodeType::CommColl {
            continue;
        }
        let Some(number) = node.comm_type else {
            return Err(at(t, node, format!("{} has no comm_type", node.describe())));
        };
        let Some(kind) = CollectiveKind::from_number(number) else {
            let m = format!(
                "{} has comm_type {number}, which is not a CollectiveCommType of et_def.proto (0 to 9)",
                node.describe()
            );
            return Err(at(t, node, m));
        };
        let bytes = match (node.comm_size, kind) {
            (Some(b), _) => b,
            (None, CollectiveKind::Barrier) => 0,
            (None, _) => return Err(at(t, node, format!("{} has no comm_size", node.describe()))),
        };
        let collective = ChakraCollective { kind, bytes, root: node.root.unwrap_or(0) as usize };
        out.push(Coll {
            node: i,
            collective,
            root: node.root,
            group: GroupKey::of(node.pg_name.as_deref()),
            comm: 0,
            me: 0,
            tag: 0,
        });
    }
    Ok(out)
}

/// Process groups' members as described: the options' over the traces' (which must agree
/// between ranks; within a rank, a later description replaces an earlier one).
fn described_groups(
    ranks: &[ChakraRank],
    options: &ChakraOptions,
) -> Result<BTreeMap<String, Vec<u32>>, ChakraError> {
    let mut table: BTreeMap<String, (Vec<u32>, u32)> = BTreeMap::new();
    for t in ranks {
        let mut own: BTreeMap<&str, (&[u32], &ChakraNode)> = BTreeMap::new();
        for node in &t.nodes {
            for g in &node.process_groups {
                own.insert(&g.name, (&g.ranks, node));
            }
        }
        for (name, (members, node)) in own {
            match table.get(name) {
                Some((m, r)) if m[..] != *members => {
                    let msg = format!(
                        "{} describes process group \"{name}\" as ranks {}, rank {r}'s trace as ranks {}",
                        node.describe(),
                        list(members),
                        list(m)
                    );
                    return Err(at(t, node, msg));
                }
                Some(_) => {}
                None => {
                    table.insert(name.into(), (members.to_vec(), t.rank));
                }
            }
        }
    }
    let mut out: BTreeMap<String, Vec<u32>> = table.into_iter().map(|(k, v)| (k, v.0)).collect();
    for g in &options.groups {
        out.insert(g.name.clone(), g.ranks.clone());
    }
    Ok(out)
}

/// `[0, 1, 2]`, cut after 16 ranks.
fn list(ranks: &[u32]) -> String {
    let shown: Vec<String> = ranks.iter().take(16).map(u32::to_string).collect();
    let more = if ranks.len() > 16 { format!(", … ({} ranks)", ranks.len()) } else { String::new() };
    if ranks.is_empty() {
        "[] (every rank)".into()
    } else {
        format!("[{}{more}]", shown.join(", "))
    }
}

/// Where a rank's collective (its index among the rank's) goes: its communicator (an index
/// of the communicators), its comm rank in it and its tag.
struct Place {
    rank: u32,
    index: usize,
    comm: usize,
    me: usize,
    tag: u32,
}

/// The communicators of the process groups the collectives use, checked: members, the
/// same collectives in the same order on every member, roots within the group; and the
/// collectives' places in them.
fn communicators(
    ranks: &[ChakraRank],
    colls: &[Vec<Coll>],
    table: &BTreeMap<String, Vec<u32>>,
) -> Result<(Vec<Comm>, Vec<Place>), ChakraError> {
    let n = ranks.len() as u32;
    // Per group, its users in rank order: (rank, index of the collective).
    let mut users: BTreeMap<GroupKey, Vec<(u32, usize)>> = BTreeMap::new();
    for (r, cs) in colls.iter().enumerate() {
        for (k, c) in cs.iter().enumerate() {
            users.entry(c.group.clone()).or_default().push((r as u32, k));
        }
    }
    let node_of = |(r, k): (u32, usize)| {
        (&ranks[r as usize], &ranks[r as usize].nodes[colls[r as usize][k].node as usize])
    };
    let mut comms = Vec::new();
    let mut places = Vec::new();
    for (id, (key, used)) in (1u32..).zip(&users) {
        let (t0, first) = node_of(used[0]);
        let members: Vec<u32> = match (key.0, table.get(&key.2)) {
            (0, _) => (0..n).collect(),
            (_, Some(m)) if m.is_empty() => (0..n).collect(),
            (_, Some(m)) => {
                let mut sorted = m.clone();
                sorted.sort_unstable();
                if let Some(&bad) = m.iter().find(|&&x| x >= n) {
                    let msg = format!("{} names rank {bad}, but the job has {n} ranks", key.describe());
                    return Err(at(t0, first, format!("{}: {msg}", first.describe())));
                }
                if sorted.windows(2).any(|w| w[0] == w[1]) {
                    let msg = format!("{} lists a rank twice: {}", key.describe(), list(m));
                    return Err(at(t0, first, format!("{}: {msg}", first.describe())));
                }
                m.clone()
            }
            (_, None) => {
                let mut m: Vec<u32> = used.iter().map(|u| u.0).collect();
                m.dedup();
                m
            }
        };
        let mut comm_rank: FxHashMap<u32, usize> = FxHashMap::default();
        comm_rank.extend(members.iter().enumerate().map(|(i, &m)| (m, i)));
        if let Some(&u) = used.iter().find(|u| !comm_rank.contains_key(&u.0)) {
            let (t, node) = node_of(u);
            let msg = format!(
                "{} is on {}, whose members {} do not include rank {}",
                node.describe(),
                key.describe(),
                list(&members),
                t.rank
            );
            return Err(at(t, node, msg));
        }
        // Every member's collectives on the group, in order (`used` is in rank order).
        let mut by_rank: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
        used.iter().for_each(|&(r, k)| by_rank.entry(r).or_default().push(k));
        let seq = |r: u32| by_rank.get(&r).map_or(&[][..], |v| &v[..]);
        let reference = seq(members[0]);
        for &m in &members {
            let mine = seq(m);
            for j in 0..reference.len().max(mine.len()) {
                let (a, b) = (reference.get(j), mine.get(j));
                if let (Some(&a), Some(&b)) = (a, b) {
                    let (ca, cb) = (&colls[members[0] as usize][a], &colls[m as usize][b]);
                    if ca.collective != cb.collective {
                        let (ta, na) = node_of((members[0], a));
                        let (tb, nb) = node_of((m, b));
                        let msg = format!(
                            "collective {j} on {} is {} at rank {} ({}) but {} at rank {} ({})",
                            key.describe(),
                            show(&ca.collective),
                            ta.rank,
                            na.describe(),
                            show(&cb.collective),
                            tb.rank,
                            nb.describe()
                        );
                        return Err(at(tb, nb, msg));
                    }
                } else {
                    let (long, short, k) = if let Some(&a) = a {
                        (members[0], m, a)
                    } else {
                        (m, members[0], *b.expect("one has it"))
                    };
                    let (t, node) = node_of((long, k));
                    let msg = format!(
                        "{} ({}) is collective {j} of rank {long} on {}, but rank {short} has {} there",
                        node.describe(),
                        show(&colls[long as usize][k].collective),
                        key.describe(),
                        match j {
                            0 => "no collective".to_string(),
                            1 => "only 1 collective".to_string(),
                            j => format!("only {j} collectives"),
                        }
                    );
                    return Err(at(t, node, msg));
                }
            }
            let (comm, me) = (comms.len(), comm_rank[&m]);
            places.extend(mine.iter().zip(0..).map(|(&index, tag)| Place { rank: m, index, comm, me, tag }));
        }
        if let Some(&u) =
            used.iter().find(|u| colls[u.0 as usize][u.1].root.is_some_and(|x| x as usize >= members.len()))
        {
            let (t, node) = node_of(u);
            let root = colls[u.0 as usize][u.1].collective.root;
            let msg = format!(
                "{} has root {root}, but {} has {} members",
                node.describe(),
                key.describe(),
                members.len()
            );
            return Err(at(t, node, msg));
        }
        comms.push(Comm { id, ranks: members });
    }
    Ok((comms, places))
}

fn show(c: &ChakraCollective) -> String {
    format!("{} of {} bytes, root {}", c.kind.name(), c.bytes, c.root)
}
