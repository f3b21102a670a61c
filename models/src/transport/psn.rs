//! Packet sequence numbers as a packet carries them: 15 bits, compared within half the
//! space.

/// Bits of a PSN as a packet carries it (RoCE's carry 24; here the 15 bits a packet has
/// free, with a window of at most [`MAX_WINDOW`] packets it is as unambiguous).
pub const PSN_BITS: u32 = 15;

/// The PSNs a packet can carry.
pub const PSN_MASK: u32 = (1 << PSN_BITS) - 1;

/// The most packets a connection may have unacknowledged: under half the PSN space, so
/// that a responder can tell a packet ahead of the one it expects from a duplicate.
pub const MAX_WINDOW: u32 = (1 << (PSN_BITS - 1)) - 1;

/// How far PSN `a` is ahead of PSN `b` (negative: behind), both of [`PSN_BITS`] bits, in
/// `-2^14..2^14`.
pub fn psn_ahead(a: u32, b: u32) -> i32 {
    let d = a.wrapping_sub(b) & PSN_MASK;
    if d >= 1 << (PSN_BITS - 1) {
        d as i32 - (1 << PSN_BITS)
    } else {
        d as i32
    }
}

/// The full PSN nearest to `near` whose low bits are `psn`.
pub(crate) fn widen(psn: u32, near: u32) -> u32 {
    near.wrapping_add(psn_ahead(psn, near & PSN_MASK) as u32)
}
