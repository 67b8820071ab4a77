//! SIGINT and SIGTERM for the measuring commands.
//!
//! The first signal asks for a stop: probes look at [`requested`] between
//! measurements, keep what they have and the command writes it, marked
//! incomplete, then exits 128 + the signal. What happens on a second signal
//! depends on the guard: [`catch_stop_signals`] only counts it (the
//! workload engines, which must stop their children themselves), while
//! [`stop_at_boundaries`] ends the process at once from the handler, after
//! removing a results file half written and killing a child run.
//! Commands that measure nothing take [`end_cleanly`]: the first signal
//! ends them, with the same clean-up.

use std::io;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The last stop signal received (0 = none) and how many arrived.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);
static STOP_COUNT: AtomicU32 = AtomicU32::new(0);
/// The signal (1st, 2nd) that ends the process from the handler; 0 =
/// none does.
static ENDS_AT: AtomicU32 = AtomicU32::new(0);
/// A child process (a numabench stage) killed with the process on a second
/// signal; 0 = none.
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(sig: libc::c_int) {
    // Only atomics, kill(2), unlink(2) and _exit(2): async-signal-safe.
    STOP_SIGNAL.store(sig, Ordering::SeqCst);
    let seen = STOP_COUNT.fetch_add(1, Ordering::SeqCst) + 1;
    let ends_at = ENDS_AT.load(Ordering::SeqCst);
    if ends_at > 0 && seen >= ends_at {
        let child = CHILD.load(Ordering::SeqCst);
        if child > 0 {
            // SAFETY: kill has no memory effect in this process.
            unsafe { libc::kill(child, libc::SIGKILL) };
        }
        crate::results::remove_temp_in_flight();
        // SAFETY: _exit never returns and has no preconditions.
        unsafe { libc::_exit(128 + sig) }
    }
}

/// SIGINT and SIGTERM received since the guard was made: the last signal
/// and the count.
pub fn stop_signals() -> (i32, u32) {
    (
        STOP_SIGNAL.load(Ordering::SeqCst),
        STOP_COUNT.load(Ordering::SeqCst),
    )
}

/// The signal that asked for a stop, if one did.
pub fn requested() -> Option<i32> {
    match stop_signals() {
        (sig, n) if n > 0 => Some(sig),
        _ => None,
    }
}

/// The signal's name for notes and the human output.
pub fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGKILL => "SIGKILL",
        _ => "a signal",
    }
}

fn set_action(sig: i32, handler: libc::sighandler_t) -> io::Result<libc::sighandler_t> {
    // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value;
    // the kernel reads `new` and writes `old`, both on this frame. The
    // handler installed is either SIG_DFL/SIG_IGN or `on_stop_signal`, which
    // is async-signal-safe. No SA_RESTART: a blocking waitpid or futex wait
    // returns EINTR so the caller sees the signal at once.
    unsafe {
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = handler;
        libc::sigemptyset(&mut new.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, &new, &mut old) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(old.sa_sigaction)
    }
}

/// Saved dispositions of SIGINT and SIGTERM, restored on drop.
pub struct StopSignals {
    old: [(i32, libc::sighandler_t); 2],
    old_ends_at: u32,
}

fn install(ends_at: u32) -> io::Result<StopSignals> {
    // The counts are never reset: a stop asked for before a probe's own
    // guard (during start-up, between two runs of a suite) still stops it.
    let handler = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    let int = set_action(libc::SIGINT, handler)?;
    let term = match set_action(libc::SIGTERM, handler) {
        Ok(t) => t,
        Err(e) => {
            let _ = set_action(libc::SIGINT, int);
            return Err(e);
        }
    };
    let old_ends_at = ENDS_AT.swap(ends_at, Ordering::SeqCst);
    Ok(StopSignals {
        old: [(libc::SIGINT, int), (libc::SIGTERM, term)],
        old_ends_at,
    })
}

/// Routes SIGINT and SIGTERM to [`stop_signals`] until the guard drops;
/// every signal is only counted.
pub fn catch_stop_signals() -> io::Result<StopSignals> {
    install(0)
}

/// Like [`catch_stop_signals`], but a second signal ends the process at
/// once (exit 128 + signal), leaving no temporary file and no child behind.
pub fn stop_at_boundaries() -> io::Result<StopSignals> {
    install(2)
}

/// For commands that only read and write files (report, compare, gather,
/// topo): the first signal ends the process at once, as by default, but
/// never leaves a results file half written behind.
pub fn end_cleanly() -> io::Result<StopSignals> {
    install(1)
}

/// Names the child process a second signal must take along (0: none).
pub fn set_child(pid: i32) {
    CHILD.store(pid, Ordering::SeqCst);
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        ENDS_AT.store(self.old_ends_at, Ordering::SeqCst);
        for (sig, old) in self.old {
            let _ = set_action(sig, old);
        }
    }
}

/// In a forked child: ignore SIGINT (a terminal's Ctrl-C reaches the whole
/// process group; the parent decides how to stop) and take SIGTERM's
/// default action again.
pub fn child_signal_setup() {
    let _ = set_action(libc::SIGINT, libc::SIG_IGN);
    let _ = set_action(libc::SIGTERM, libc::SIG_DFL);
}

/// Prepares a child numabench run (a `run --profile full` stage): its own
/// process group, so a terminal's Ctrl-C reaches only this process, which
/// passes the stop on once; and SIGTERM from the kernel should this process
/// die first, so no stage outlives the run.
pub fn tie_child(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only prctl(2), which is async-signal-safe and reads its integer
    // arguments alone.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Sends `sig` to `pid` (a child this process started).
pub fn pass_on(pid: i32, sig: i32) {
    // SAFETY: kill has no memory effect in this process.
    unsafe { libc::kill(pid, sig) };
}
