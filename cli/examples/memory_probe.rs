//! Measures what bounds a million-endpoint run on this machine's memory (BENCHMARKS.md,
//! "What one cache miss costs"): the time of one random cache-line read from DRAM when
//! each read needs the previous one (latency), and the time per line when a core reads
//! many independent lines at once, as a routing decision that looks up every neighbour's
//! distance does (throughput: latency divided by the misses a core keeps in flight).
//!
//!     cargo run --release -p xnet --example memory_probe            # 1 GiB, as the RRG's rows
//!     cargo run --release -p xnet --example memory_probe -- 4       # GiB of memory to read
//!
//! Prints one line per measurement, the best of three rounds (the machine's quietest).
//! The memory is allocated as `xnet` allocates its large arrays (on huge pages).

use std::hint::black_box;
use std::time::Instant;

#[path = "../src/hugepages.rs"]
mod hugepages;

#[global_allocator]
static ALLOCATOR: hugepages::HugePageAlloc = hugepages::HugePageAlloc;

const LINE: usize = 64;
/// Lines a far decision on the RRG reads: the switch's own entry and its 32 neighbours'.
const BATCH: usize = 33;

fn main() {
    let gib: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 1,
        Some(Ok(g)) if g > 0 => g,
        Some(_) => {
            eprintln!("memory_probe: the argument is the GiB of memory to read, a positive integer");
            std::process::exit(2);
        }
    };
    let lines = (gib << 30) / LINE;
    let words_per_line = LINE / 8;
    // Each line's first word names the next line of one random cycle through all lines.
    let mut memory = vec![0u64; lines * words_per_line];
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut order: Vec<u32> = (0..lines as u32).collect();
    for i in (1..lines).rev() {
        let j = (next(&mut rng) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    for k in 0..lines {
        memory[order[k] as usize * words_per_line] = order[(k + 1) % lines] as u64;
    }
    drop(order);
    println!("memory {gib} GiB, {lines} lines of {LINE} bytes");

    let chase = 2_000_000;
    let latency = best_of_three(|| {
        let mut at = 0u64;
        for _ in 0..chase {
            at = memory[at as usize * words_per_line];
        }
        black_box(at);
    }) / chase as f64;
    println!("dependent read (latency)        {:6.1} ns per line", latency * 1e9);

    let decisions = 200_000;
    let batch = best_of_three(|| {
        let mut sum = 0u64;
        let mut at = [0usize; BATCH];
        for _ in 0..decisions {
            for a in at.iter_mut() {
                *a = ask_for_random_line(&memory, &mut rng, words_per_line);
            }
            for &a in &at {
                sum = sum.wrapping_add(memory[a]);
            }
        }
        black_box(sum);
    }) / decisions as f64;
    println!(
        "{BATCH} independent reads at once    {:6.1} ns per line, {:6.0} ns per batch",
        batch / BATCH as f64 * 1e9,
        batch * 1e9
    );

    // The next batches' lines are asked for while this one is read: the most a core can do.
    const AHEAD: usize = 8;
    let streamed = best_of_three(|| {
        let mut sum = 0u64;
        let mut ring = [[0usize; BATCH]; AHEAD];
        for d in 0..decisions + AHEAD {
            let slot = &mut ring[d % AHEAD];
            if d >= AHEAD {
                for &a in slot.iter() {
                    sum = sum.wrapping_add(memory[a]);
                }
            }
            for a in slot.iter_mut() {
                *a = ask_for_random_line(&memory, &mut rng, words_per_line);
            }
        }
        black_box(sum);
    }) / decisions as f64;
    println!(
        "{BATCH} reads, {AHEAD} batches ahead      {:6.1} ns per line, {:6.0} ns per batch",
        streamed / BATCH as f64 * 1e9,
        streamed * 1e9
    );
}

/// Picks a random line of `memory`, asks the memory system for it, and returns the index
/// of its first word.
fn ask_for_random_line(memory: &[u64], rng: &mut u64, words_per_line: usize) -> usize {
    let lines = (memory.len() / words_per_line) as u64;
    let at = (next(rng) % lines) as usize * words_per_line;
    engine::prefetch(&memory[at]);
    at
}

/// xorshift64: cheap, and enough to scatter the reads.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Seconds of the fastest of three runs of `f`.
fn best_of_three(mut f: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}
