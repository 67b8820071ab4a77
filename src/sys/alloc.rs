//! The heap, with one clear line instead of an abort when it runs out.
//!
//! Rust's default answer to a refused allocation is "memory allocation of N
//! bytes failed" and `abort()`: exit 134 and, where cores are kept, a core
//! dump of a process that may have mapped gigabytes. Under `ulimit -v` or a
//! memory cgroup that is a limit reached, not a bug: numabench says which
//! and exits 1. Sizes it can foresee (buffers, documents) are checked
//! against the limits before they are asked for; this is the backstop for
//! the rest.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, ending the process with a message when a request
/// is refused.
pub struct Reported;

const MESSAGE: &[u8] = b"numabench: error: out of memory: the heap could not grow (a memory cgroup, ulimit -v or ulimit -d reached, or the machine is out of memory); 'numabench topo' shows the limit that applies\n";

#[cold]
fn refused() -> ! {
    // No allocation, no lock, no destructor here: the heap is what failed.
    // SAFETY: write reads MESSAGE.len() bytes of a static buffer; _exit
    // never returns.
    unsafe {
        libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
        libc::_exit(1)
    }
}

// SAFETY: every call is passed to `System` unchanged; only a null result,
// which `System` gives for a refused request, ends the process instead of
// being returned.
unsafe impl GlobalAlloc for Reported {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            refused();
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            refused();
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, which is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the caller's contract is passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            refused();
        }
        p
    }
}
