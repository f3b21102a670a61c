//! The synthetic model the engine's tests run: LPs that pass tokens around a ring with
//! random chords.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use xnet_engine::{Ctx, LinkSpec, LogicalProcess};

/// A deterministic pseudo-random step (SplitMix64) so the model needs no RNG crate.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Each LP folds every event it sees into a hash (order matters) and passes every token
/// on, over a pseudo-randomly chosen link or back to itself after a pseudo-random delay.
#[derive(Clone, Debug, PartialEq)]
pub struct Gossip {
    pub out_links: Vec<u32>,
    pub state: u64,
    pub events: u64,
    pub panic_at: Option<u64>,
    /// From this time on, the LP asks the run to stop ([`STOP`]), as a signal would.
    pub stop_at: Option<u64>,
}

/// The stop request of `a_stop_request_ends_the_run_within_a_window`.
pub static STOP: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Token(u64);

impl LogicalProcess for Gossip {
    type Msg = Token;
    /// Events handled by the partition's LPs.
    type Local = u64;
    fn start(&mut self, ctx: &mut Ctx<'_, Token>, _: &mut u64) {
        self.state = mix(ctx.lp() as u64);
        for k in 0..3 {
            ctx.schedule(k, (k % 2) as u16, Token(self.state ^ k));
        }
    }
    fn handle(&mut self, msg: Token, ctx: &mut Ctx<'_, Token>, handled: &mut u64) {
        if self.panic_at.is_some_and(|t| ctx.now() >= t) {
            panic!("model failure in LP {}", ctx.lp());
        }
        if self.stop_at.is_some_and(|t| ctx.now() >= t) {
            STOP.store(true, Ordering::Relaxed);
        }
        self.events += 1;
        *handled += 1;
        self.state = mix(self.state ^ msg.0 ^ ctx.now().rotate_left(17));
        // Every token lives on: forwarded over a link, or now and then kept for a while.
        let r = self.state;
        if r.is_multiple_of(5) {
            ctx.schedule((r >> 16) % 3, ((r >> 20) % 4) as u16, Token(r >> 1));
        } else {
            let link = self.out_links[(r >> 8) as usize % self.out_links.len()];
            ctx.send(link, Token(r));
        }
    }
}

/// `n` LPs on a ring plus random chords, latencies 1..=6.
pub fn network(n: u32, seed: u64) -> (Vec<Gossip>, Vec<LinkSpec>) {
    let mut links = Vec::new();
    let mut lps: Vec<Gossip> = (0..n)
        .map(|_| Gossip { out_links: Vec::new(), state: 0, events: 0, panic_at: None, stop_at: None })
        .collect();
    let mut r = seed;
    for src in 0..n {
        for k in 0..3 {
            r = mix(r);
            let dst = if k == 0 { (src + 1) % n } else { (r % n as u64) as u32 };
            lps[src as usize].out_links.push(links.len() as u32);
            let tie = links.len() as u32;
            links.push(LinkSpec { src, dst, latency: 1 + (r >> 32) % 6, tie });
        }
    }
    (lps, links)
}
