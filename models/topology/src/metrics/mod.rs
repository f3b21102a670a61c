//! Distances, diameter and average distance.
//!
//! All computations run breadth-first searches over switch-to-switch links (terminal and
//! unconnected ports are ignored), in parallel with rayon over source switches. Reductions
//! use integer sums, so results do not depend on the number of threads.
//!
//! `adjacency`: the switch adjacency lists; `multi_bfs`: the multi-source bit-parallel BFS
//! and `all_pairs`, which runs it from every source; `distances`: single-source [`bfs`]
//! and the byte [`DistanceTable`]; `summary`: [`summarize`].

mod adjacency;
mod distances;
mod multi_bfs;
mod summary;

pub use adjacency::{uniform_stride, Adjacency};
pub use distances::{bfs, DistanceTable};
pub use multi_bfs::{
    all_pairs, check_too_long, count, note_too_long, ones, try_all_pairs, Bits, BATCH, LANES,
};
pub use summary::{summarize, TopologySummary};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{dragonfly, fattree, hyperx, link_classes, rrg, terminal_port, torus, Port, Shape};
    use crate::{Network, PortTarget, SwitchId};

    fn small_networks() -> Vec<Network> {
        vec![
            hyperx::build(&hyperx::HyperXParams {
                sides: vec![3, 4],
                endpoints_per_switch: 2,
                terminal_latency: 1,
                link_latency: 1,
            })
            .unwrap(),
            torus::build(&torus::TorusParams {
                sides: vec![5, 3],
                wrap: Some(vec![true, false]),
                endpoints_per_switch: 3,
                terminal_latency: 1,
                link_latency: 1,
            })
            .unwrap(),
            dragonfly::build(&dragonfly::DragonflyParams {
                p: 2,
                a: 4,
                h: 2,
                groups: Some(6),
                arrangement: crate::shape::Arrangement::Palmtree,
                terminal_latency: 1,
                local_latency: 1,
                global_latency: 1,
            })
            .unwrap(),
            fattree::build(&fattree::FatTreeParams { k: 3, n: 3, terminal_latency: 1, link_latency: 1 })
                .unwrap(),
            rrg::build(
                &rrg::RrgParams {
                    switches: 30,
                    degree: 3,
                    endpoints_per_switch: 2,
                    seed: None,
                    terminal_latency: 1,
                    link_latency: 1,
                },
                7,
            )
            .unwrap(),
        ]
    }

    /// Two switches with one endpoint each and no link between them.
    fn disconnected() -> Network {
        let lists = vec![
            vec![terminal_port(), Port { target: PortTarget::Unconnected, class: 1 }],
            vec![terminal_port()],
        ];
        Network::from_port_lists(
            "two islands".into(),
            lists,
            link_classes(&[("terminal", 1), ("network", 1)]),
            Shape::RandomRegular(crate::shape::RrgShape {
                switches: 2,
                degree: 0,
                endpoints_per_switch: 1,
                seed_used: 0,
            }),
        )
    }

    #[test]
    fn summary_agrees_with_distance_table() {
        for net in small_networks() {
            let table = DistanceTable::compute(&net).unwrap();
            let n = net.num_switches();
            assert_eq!(table.num_switches(), n);
            assert_eq!(table.bytes(), n * n);
            let (mut sum, mut max) = (0u64, 0u8);
            let (mut ep_sum, mut ep_pairs) = (0u64, 0u64);
            for a in 0..n as u32 {
                assert_eq!(table.get(a, a), 0);
                let row = bfs(&net, a);
                for b in 0..n as u32 {
                    let d = table.get(a, b);
                    assert_eq!(d as u32, row[b as usize]);
                    assert_eq!(d, table.get(b, a), "{}: not symmetric", net.name);
                    sum += d as u64;
                    max = max.max(d);
                }
            }
            for &(sa, _) in &net.endpoint_location {
                for &(sb, _) in &net.endpoint_location {
                    ep_sum += table.get(sa, sb) as u64;
                    ep_pairs += 1;
                }
            }
            let e = net.num_endpoints() as u64;
            ep_pairs -= e; // self pairs (distance 0) are excluded
            let s = summarize(&net);
            assert!(s.connected, "{}", net.name);
            assert_eq!(s.diameter, max as u32, "{}", net.name);
            let avg = sum as f64 / (n * (n - 1)) as f64;
            assert!((s.average_distance - avg).abs() < 1e-12, "{}", net.name);
            let ep_avg = ep_sum as f64 / ep_pairs as f64;
            assert!((s.endpoint_average_distance - ep_avg).abs() < 1e-12, "{}", net.name);
            assert_eq!(s.endpoints, net.num_endpoints());
            assert_eq!(s.network_links * 2, net.num_network_links());
        }
    }

    #[test]
    fn summary_is_independent_of_thread_count() {
        let net = &small_networks()[4];
        let run = |threads| {
            rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| summarize(net))
        };
        let (a, b) = (run(1), run(3));
        assert_eq!(a.average_distance.to_bits(), b.average_distance.to_bits());
        assert_eq!(a.endpoint_average_distance.to_bits(), b.endpoint_average_distance.to_bits());
        assert_eq!(a.diameter, b.diameter);
    }

    /// Networks of more than one BFS batch, with faults and long distances.
    fn larger_networks() -> Vec<Network> {
        let mut rrg = rrg::build(
            &rrg::RrgParams {
                switches: 700,
                degree: 5,
                endpoints_per_switch: 3,
                seed: Some(4),
                terminal_latency: 1,
                link_latency: 1,
            },
            4,
        )
        .unwrap();
        crate::faults::fail_random_links(&mut rrg, 200, 4).unwrap();
        let mut mesh = torus::build(&torus::TorusParams {
            sides: vec![23, 13],
            wrap: Some(vec![false, true]),
            endpoints_per_switch: 1,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap();
        crate::faults::fail_random_links(&mut mesh, 30, 2).unwrap();
        vec![rrg, mesh]
    }

    #[test]
    fn bit_parallel_bfs_agrees_with_single_source_bfs() {
        for net in larger_networks() {
            let n = net.num_switches();
            let table = DistanceTable::compute(&net).unwrap();
            let (mut sum, mut max) = (0u64, 0u32);
            for a in 0..n as u32 {
                let row = bfs(&net, a);
                for b in 0..n as u32 {
                    assert_eq!(table.get(a, b) as u32, row[b as usize], "{}: {a} -> {b}", net.name);
                    sum += row[b as usize] as u64;
                    max = max.max(row[b as usize]);
                }
            }
            let s = summarize(&net);
            assert_eq!(s.diameter, max);
            assert!((s.average_distance - sum as f64 / (n * (n - 1)) as f64).abs() < 1e-12);
            // Any list of sources, on any number of threads: the same distances.
            let adj = Adjacency::new(&net);
            let sources: Vec<SwitchId> = (0..n as SwitchId).rev().step_by(3).collect();
            let run = |threads| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    all_pairs(
                        &adj,
                        &sources,
                        vec![(); sources.len().div_ceil(BATCH)],
                        |b, ()| (b, Vec::new()),
                        |(b, found), level, v, new| {
                            for i in ones(new) {
                                found.push((sources[*b * BATCH + i], v, level));
                            }
                        },
                        |(_, found)| found,
                    )
                })
            };
            let (one, stats) = run(1);
            assert_eq!((one.clone(), stats), run(3));
            assert_eq!(stats.diameter, max);
            assert_eq!(stats.first_unreachable, None);
            let mut found: Vec<_> = one.into_iter().flatten().collect();
            found.sort_unstable();
            assert_eq!(found.len(), sources.len() * n);
            for (a, b, d) in found {
                assert_eq!(table.get(a, b) as u32, d);
            }
        }
    }

    /// `try_all_pairs` gives the distances until a stop is asked for, then fails naming
    /// what it was doing. The stop flag is the process's and stays set: no other test of
    /// this crate reads it (`all_pairs`, which they use, never stops).
    #[test]
    fn try_all_pairs_stops_when_a_stop_is_asked_for() {
        let net = &small_networks()[0];
        let adj = Adjacency::new(net);
        let sources: Vec<SwitchId> = (0..net.num_switches() as SwitchId).collect();
        let run = || {
            try_all_pairs(
                "computing test distances",
                &adj,
                &sources,
                vec![()],
                |_, ()| 0u64,
                |n, _, _, new| *n += count(new) as u64,
                |n| n,
            )
        };
        let (found, _) = run().expect("no stop asked for yet");
        assert_eq!(found, vec![(sources.len() * sources.len()) as u64]);
        base::cancel::request();
        let err = run().unwrap_err();
        assert_eq!(err.to_string(), "interrupted while computing test distances");
    }

    #[test]
    fn unreachable_switches_are_reported() {
        let net = disconnected();
        assert_eq!(bfs(&net, 0), vec![0, u32::MAX]);
        let table = DistanceTable::compute(&net).unwrap();
        assert_eq!(table.get(0, 1), DistanceTable::UNREACHABLE);
        let adj = Adjacency::new(&net);
        let (_, stats) = all_pairs(&adj, &[0, 1], vec![()], |_, ()| (), |_, _, _, _| {}, |_| ());
        assert_eq!(stats.first_unreachable, Some((0, 1)));
        assert_eq!(stats.unreachable, 2);
        assert!(stats.connected_diameter().unwrap_err().message.contains("no path from switch 0 to 1"));
        let s = summarize(&net);
        assert!(!s.connected);
        assert_eq!(s.unconnected_ports, 1);
        assert_eq!((s.min_radix, s.max_radix), (1, 2));
        assert_eq!(s.network_links, 0);
        assert_eq!(s.diameter, 0);
        assert_eq!(s.average_distance, 0.0);
    }

    #[test]
    fn distance_table_rejects_long_paths() {
        let ring = torus::build(&torus::TorusParams {
            sides: vec![600],
            wrap: Some(vec![false]),
            endpoints_per_switch: 1,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap();
        assert_eq!(summarize(&ring).diameter, 599);
        let e = DistanceTable::compute(&ring).unwrap_err();
        assert!(e.message.contains("254"), "{e}");
    }
}
