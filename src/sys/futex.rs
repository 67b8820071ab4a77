//! Futexes on words that several threads or processes share: the cheapest
//! wait for a value to change.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Waits while `word` holds `expected`, at most `timeout`; returns on a
/// wake, a timeout, a signal, or at once when the value already differs.
/// Works across processes for words in `MAP_SHARED` memory.
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a valid, aligned 32-bit atomic for the whole call;
    // FUTEX_WAIT only reads it (and compares with `expected`), and reads
    // the timespec on this frame. The shared (non-private) form is used
    // because waiters and wakers live in different processes.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wakes every waiter on `word`.
pub(crate) fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address as a key; nothing is read
    // or written through it.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn futex_wait_times_out_and_returns_on_changed_value() {
        let word = AtomicU32::new(1);
        let t = std::time::Instant::now();
        futex_wait(&word, 1, Some(Duration::from_millis(20)));
        assert!(t.elapsed() >= Duration::from_millis(15));
        let t = std::time::Instant::now();
        futex_wait(&word, 2, Some(Duration::from_secs(5)));
        assert!(t.elapsed() < Duration::from_secs(1));
    }
}
