//! Anonymous memory that several tasks use at once, only through atomics
//! and `memset`.

use super::mmap::{map_anonymous, unmap};
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// An anonymous mapping used as `u64` words by several threads or (when
/// shared) processes at once. All Rust access goes through atomics; bulk
/// clearing goes through libc's `memset`, as the workload asks.
pub(crate) struct Region {
    base: NonNull<u8>,
    map_len: usize,
    offset: usize,
    len: usize,
}

// SAFETY: the region is plain memory that is only ever accessed through
// atomics (`words`, `u32s`) or `memset` of whole words (`zero`), so sharing
// `&Region` between threads introduces no non-atomic Rust access; moving it
// moves ownership of the mapping.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl Region {
    /// Maps `len` bytes (plus `align` bytes of slack when `align` > 0) and
    /// starts the usable part at the next multiple of `align`, as perf does
    /// for its 2 MiB-aligned buffers. `shared` maps `MAP_SHARED` (children
    /// forked later see the same memory), else `MAP_PRIVATE`. The memory
    /// reads as zero.
    pub(crate) fn map(len: usize, shared: bool, align: usize) -> io::Result<Region> {
        let flags = if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
        let map_len = len
            .checked_add(align)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?
            .max(1);
        let m = map_anonymous(map_len, flags)?;
        let start = m.ptr.as_ptr() as usize;
        let aligned = if align > 0 {
            start.next_multiple_of(align)
        } else {
            start
        };
        Ok(Region {
            base: m.ptr,
            map_len: m.len,
            offset: aligned - start,
            len,
        })
    }

    /// Address of the whole mapping (for madvise) and its length.
    pub(crate) fn mapping(&self) -> (usize, usize) {
        (self.base.as_ptr() as usize, self.map_len)
    }

    /// Address of the usable, aligned part.
    pub(crate) fn addr(&self) -> usize {
        self.base.as_ptr() as usize + self.offset
    }

    /// Usable bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The usable part as `len / 8` atomic words.
    pub(crate) fn words(&self) -> &[AtomicU64] {
        // SAFETY: `addr()..addr()+len` lies inside the mapping, which stays
        // mapped while `&self` lives; the address is page aligned plus a
        // multiple of the alignment, so 8-byte aligned; every bit pattern is
        // a valid AtomicU64, and AtomicU64 permits shared mutation.
        unsafe { std::slice::from_raw_parts(self.addr() as *const AtomicU64, self.len / 8) }
    }

    /// The first `n` 32-bit words as atomics. Callers keep the 32-bit and
    /// 64-bit views on disjoint byte ranges.
    pub(crate) fn u32s(&self, n: usize) -> &[AtomicU32] {
        assert!(n * 4 <= self.len, "u32 view beyond the region");
        // SAFETY: as for `words`, with 4-byte alignment and `n * 4 <= len`.
        unsafe { std::slice::from_raw_parts(self.addr() as *const AtomicU32, n) }
    }

    /// Writes `off`, `off + 1`, ... over the usable words (perf's `-I`
    /// contents), which also faults every page in from the calling thread.
    pub(crate) fn fill_counting(&mut self, off: u64) {
        let n = self.len / 8;
        // SAFETY: the words lie inside the mapping and are 8-byte aligned;
        // `&mut self` means no view of this region exists in this process,
        // and callers fill a region before any other process can see it
        // (private memory, or shared memory before the fork).
        let w = unsafe { std::slice::from_raw_parts_mut(self.addr() as *mut u64, n) };
        for (i, x) in w.iter_mut().enumerate() {
            *x = off.wrapping_add(i as u64);
        }
    }

    /// Zeroes words `start..start+n` with libc's `memset`, as perf's
    /// `bzero` does.
    pub(crate) fn zero(&self, start: usize, n: usize) {
        let words = self.len / 8;
        assert!(
            start <= words && n <= words - start,
            "zero beyond the region"
        );
        // SAFETY: the range lies inside the mapping (checked above) and stays
        // mapped while `&self` lives. Rust code only ever reads this memory
        // through atomics and treats any bit pattern as valid, so no Rust
        // value's invariant depends on the bytes memset writes. Other tasks
        // may write the same words concurrently, exactly as the workload
        // perf defines does; the result is some interleaving of whole-word
        // stores, which the benchmark neither reads back nor relies on.
        unsafe {
            libc::memset((self.addr() + start * 8) as *mut libc::c_void, 0, n * 8);
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping is owned by this Region; every view borrowed
        // from it has ended (they borrow `self`), and it is not used again.
        let _ = unsafe { unmap(self.base.as_ptr(), self.map_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn region_is_aligned_zeroed_and_clearable() {
        let r = Region::map(4 << 20, false, 2 << 20).unwrap();
        assert_eq!(r.addr() % (2 << 20), 0);
        assert_eq!(r.words().len(), (4 << 20) / 8);
        assert!(r.words().iter().all(|w| w.load(Ordering::Relaxed) == 0));
        for w in r.words() {
            w.store(7, Ordering::Relaxed);
        }
        r.zero(10, 20);
        let w = r.words();
        assert_eq!(w[9].load(Ordering::Relaxed), 7);
        assert_eq!(w[10].load(Ordering::Relaxed), 0);
        assert_eq!(w[29].load(Ordering::Relaxed), 0);
        assert_eq!(w[30].load(Ordering::Relaxed), 7);
    }
}
