//! One Slurm command run as a user would run it: in its own process
//! group, stopped at the time limit, and (unless it submits) at a stop
//! signal.

use anyhow::{Context, Result, bail};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// The most of a command's stdout or stderr read: far above any cluster's
/// node list, far below what would exhaust memory.
const MAX_OUTPUT: u64 = 64 << 20;

/// How long one Slurm command may take, in milliseconds.
static LIMIT_MS: AtomicU64 = AtomicU64::new(60_000);

/// Sets how long one Slurm command may take before it is stopped.
pub(crate) fn set_limit(limit: Duration) {
    LIMIT_MS.store(
        u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
        Ordering::SeqCst,
    );
}

fn limit() -> Duration {
    Duration::from_millis(LIMIT_MS.load(Ordering::SeqCst))
}

/// A stop signal arrived while a Slurm command that only reads was running;
/// the command was stopped.
#[derive(Debug)]
pub(crate) struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped")
    }
}

impl std::error::Error for Stopped {}

/// Kills the child's process group (the command and anything it started)
/// and reaps the child.
fn stop(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        crate::interrupt::pass_on(-pid, libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads the child's stdout (sent as 0) and stderr (1), each up to one
/// byte past [`MAX_OUTPUT`], on threads of their own; the receiver, and
/// how many pipes there are.
fn read_output(child: &mut std::process::Child) -> (Receiver<(u8, Vec<u8>)>, usize) {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut readers = 0;
    for (which, pipe) in [
        (
            0,
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
        (
            1,
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
    ] {
        let Some(pipe) = pipe else { continue };
        let tx = tx.clone();
        readers += 1;
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            // One byte more than allowed tells too much from just enough.
            let _ = pipe.take(MAX_OUTPUT + 1).read_to_end(&mut buf);
            let _ = tx.send((which, buf));
        });
    }
    (rx, readers)
}

/// Runs a Slurm command and returns its stdout; the error names the
/// command and quotes its stderr. A command still running after the limit
/// is killed: a controller that does not answer must not hang the
/// submission. Only `sbatch` is left to finish after a stop signal, so that
/// a job it submitted is counted.
pub(super) fn slurm(cmd: &str, args: &[&str], stdin: Option<&str>) -> Result<Vec<u8>> {
    let limit = limit();
    let mut c = Command::new(cmd);
    c.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own group: a terminal's Ctrl-C reaches this process alone, which
    // decides what to stop, and a timeout kills what the command started.
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let mut child = c.spawn().with_context(|| {
        format!("cannot run {cmd} (is Slurm installed and on PATH on this machine?)")
    })?;
    let start = Instant::now();
    if let Some(text) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().context("no stdin pipe")?;
        // A job script is far below a pipe's buffer: this does not block.
        let _ = pipe.write_all(text.as_bytes());
    }
    let (rx, readers) = read_output(&mut child);
    let stoppable = cmd != "sbatch";
    let mut status = None;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut got = 0;
    let mut timed_out = false;
    let mut too_much = false;
    while status.is_none() || got < readers {
        if stoppable && crate::interrupt::requested().is_some() {
            stop(&mut child);
            return Err(Stopped.into());
        }
        if start.elapsed() >= limit {
            timed_out = true;
            stop(&mut child);
            break;
        }
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok((0, b)) => (out, got) = (b, got + 1),
            Ok((_, b)) => (err, got) = (b, got + 1),
            Err(_) => {}
        }
        if out.len() as u64 > MAX_OUTPUT || err.len() as u64 > MAX_OUTPUT {
            too_much = true;
            stop(&mut child);
            break;
        }
        if status.is_none() {
            status = child.try_wait()?;
        }
    }
    if timed_out {
        bail!(
            "{cmd} {} gave no answer in {} s and was stopped (is slurmctld reachable from here?)",
            crate::text::escape(&args.join(" ")),
            limit.as_secs_f64()
        );
    }
    if too_much {
        bail!(
            "{cmd} {} printed more than {} MiB and was stopped; that is no answer of Slurm's",
            crate::text::escape(&args.join(" ")),
            MAX_OUTPUT >> 20
        );
    }
    let status = status.context("the command's status was lost")?;
    if !status.success() {
        let err = String::from_utf8_lossy(&err);
        // sinfo and squeue only read; when they fail, Slurm is not usable
        // from this machine at all.
        let hint = if cmd == "sbatch" {
            ""
        } else {
            "; run fleet submit where Slurm's commands work (a login node), or copy the nodes' results folders under one folder and run 'numabench fleet report' on it"
        };
        bail!(
            "{cmd} {} failed ({}): {}{hint}",
            crate::text::escape(&args.join(" ")),
            status,
            super::shown(err.trim().as_bytes())
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_hangs_is_stopped_at_the_limit() {
        set_limit(Duration::from_millis(300));
        let t = Instant::now();
        let e = slurm("sh", &["-c", "sleep 30 & sleep 30"], None).unwrap_err();
        set_limit(Duration::from_secs(60));
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(e.to_string().contains("gave no answer in 0.3 s"), "{e}");
    }

    #[test]
    fn endless_output_is_cut_and_refused() {
        let e = slurm("sh", &["-c", "exec yes"], None).unwrap_err();
        assert!(e.to_string().contains("printed more than 64 MiB"), "{e}");
        let e = slurm("sh", &["-c", "yes >&2"], None).unwrap_err();
        assert!(e.to_string().contains("printed more than 64 MiB"), "{e}");
    }
}
