//! k-ary n-tree (Petrini and Vanneschi): `k^n` endpoints, `n` levels of `k^(n-1)` switches.
//!
//! Switch id `level * k^(n-1) + w`, level 0 at the leaves. Leaves have terminal ports
//! `0..k`; other switches have down ports `0..k`; all but the top level have up ports
//! `k..2k`. Up port `j` of `<w, l>` reaches `<w with digit l set to j, l + 1>` at its down
//! port `w_l` (digits of `w` in base `k`, digit 0 least significant).

use serde::Serialize;

/// Parameters kept for routing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FatTreeShape {
    /// Arity.
    pub k: u32,
    /// Levels.
    pub n: u32,
}
