//! A cache hint for the model's hot loops: [`prefetch`].
//!
//! The engine has its own (it depends on no crate of the workspace); the model's crates
//! take theirs from here rather than depend on the engine for one hint.

/// Asks the CPU to bring the cache line holding `value` closer (a hint, no effect on
/// results; a no-op on CPUs without a prefetch instruction).
#[inline(always)]
pub fn prefetch<T>(value: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint: it never faults and has no effect on memory, whatever
    // the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(value as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
