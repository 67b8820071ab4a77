//! Anonymous mappings, their protection and page-size advice, and the base
//! page size: the memory calls every buffer and shared region is built on.

use std::ffi::c_void;
use std::fmt;
use std::io;
use std::ptr::NonNull;
use std::sync::OnceLock;

/// The base page size.
pub(crate) fn base_page_size() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    *SIZE.get_or_init(|| {
        // SAFETY: sysconf reads a constant and has no memory effects.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
    })
}

/// An anonymous mapping that nothing else refers to yet.
pub(crate) struct Mapping {
    pub ptr: NonNull<u8>,
    pub len: usize,
}

/// `mmap(NULL, len, PROT_READ|PROT_WRITE, MAP_ANONYMOUS|extra_flags, -1, 0)`.
///
/// Safe: without `MAP_FIXED` the kernel picks an unused range, so no existing
/// memory is replaced.
pub(crate) fn map_anonymous(len: usize, extra_flags: i32) -> io::Result<Mapping> {
    assert_eq!(extra_flags & libc::MAP_FIXED, 0, "MAP_FIXED could clobber");
    // SAFETY: a fresh anonymous mapping at an address of the kernel's choice;
    // no pointer is read or written by the call.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_ANONYMOUS | extra_flags,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned 0"))?;
    Ok(Mapping { ptr, len })
}

/// `munmap(ptr, len)`.
///
/// # Safety
/// `ptr..ptr+len` must be mapped memory owned by the caller that no live
/// reference points into, and must not be used again.
pub(crate) unsafe fn unmap(ptr: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: guaranteed by the caller.
    let ret = unsafe { libc::munmap(ptr.cast::<c_void>(), len) };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `mprotect(ptr, len, PROT_NONE)`: any access to the range faults.
///
/// # Safety
/// No reference may point into `ptr..ptr+len`, and no code may access it
/// afterwards expecting memory.
pub(crate) unsafe fn protect_none(ptr: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: guaranteed by the caller.
    let ret = unsafe { libc::mprotect(ptr.cast::<c_void>(), len, libc::PROT_NONE) };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The `madvise` advice this crate uses; none of them changes contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advice {
    HugePage,
    NoHugePage,
}

/// `madvise(addr, len, advice)` for advice that only steers page sizes.
pub(crate) fn madvise(addr: usize, len: usize, advice: Advice) -> io::Result<()> {
    let advice = match advice {
        Advice::HugePage => libc::MADV_HUGEPAGE,
        Advice::NoHugePage => libc::MADV_NOHUGEPAGE,
    };
    // SAFETY: MADV_HUGEPAGE and MADV_NOHUGEPAGE only set VMA flags for later
    // faults and khugepaged; they never discard or change data.
    let ret = unsafe { libc::madvise(addr as *mut c_void, len, advice) };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl fmt::Display for Advice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Advice::HugePage => "MADV_HUGEPAGE",
            Advice::NoHugePage => "MADV_NOHUGEPAGE",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_reads_zero_and_takes_advice() {
        let len = 4 * base_page_size();
        let m = map_anonymous(len, libc::MAP_PRIVATE).unwrap();
        assert_eq!(m.len, len);
        assert_eq!(m.ptr.as_ptr() as usize % base_page_size(), 0);
        // Advice may be refused without THP, never for a bad range.
        let _ = madvise(m.ptr.as_ptr() as usize, len, Advice::NoHugePage);
        // SAFETY: fresh memory of `len` bytes that nothing else refers to.
        let first = unsafe { m.ptr.as_ptr().read() };
        assert_eq!(first, 0);
        assert_eq!(Advice::HugePage.to_string(), "MADV_HUGEPAGE");
        // SAFETY: the mapping was made above and is not used again.
        unsafe { unmap(m.ptr.as_ptr(), m.len) }.unwrap();
    }
}
