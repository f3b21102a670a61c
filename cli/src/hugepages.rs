//! The global allocator of the `xnet` binary: the system allocator, asking Linux for
//! transparent huge pages on every allocation of 2 MiB or more.
//!
//! Why: at a million endpoints the router state (ports, VCs, packet slabs, event wheels,
//! distance rows) is gigabytes read at random, one cache line per access; with 4 KiB pages
//! nearly every such access also misses the TLB. Many Linux installations run transparent
//! huge pages in `madvise` mode, where only memory that asks (`MADV_HUGEPAGE`) gets 2 MiB
//! pages. Asking for the large arrays makes a million-endpoint run about 10 % faster on
//! the development machine (docs/benchmarks-history.md, "Million-endpoint studies"); small allocations
//! are left alone, so memory use hardly changes. Where huge pages are off (`never`) or not
//! Linux, the advice is a no-op. Results do not depend on it.

use std::alloc::{GlobalAlloc, Layout, System};

/// The size of a transparent huge page on x86-64 and of the allocations advised.
const HUGE_PAGE: usize = 2 << 20;

/// [`System`], with `madvise(MADV_HUGEPAGE)` on the 2 MiB-aligned part of large blocks.
pub struct HugePageAlloc;

/// Asks for huge pages on the whole 2 MiB pages inside `[ptr, ptr + len)`.
fn advise(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
        let end = (ptr as usize + len) & !(HUGE_PAGE - 1);
        if end > start {
            // SAFETY: the range lies inside a block the allocator just handed out;
            // MADV_HUGEPAGE changes how it is backed, never its contents. A failure (an
            // old kernel, THP compiled out) leaves normal pages, which is fine.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

// SAFETY: every method forwards to `System` with the same arguments and returns its
// result; `advise` only changes the paging of memory that was returned.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if layout.size() >= HUGE_PAGE && !ptr.is_null() {
            advise(ptr, layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if layout.size() >= HUGE_PAGE && !ptr.is_null() {
            advise(ptr, layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if new_size >= HUGE_PAGE && !new.is_null() {
            advise(new, new_size);
        }
        new
    }
}
