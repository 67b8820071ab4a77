//! The parts a profile adds to the matrix and the sweep, as the probes of
//! the registry declare them (`Probe::part`), and how each runs: as a
//! child numabench printing its results document (`--json`). The workload
//! engines fork, which wants a single-threaded parent, and a child keeps
//! one part's failure from taking the others.

use crate::results::names::run::NOT_COMPLETE;
use crate::results::{Document, Record};
use crate::topology::Topology;
use crate::view::{Part, Probe, Profile, Scope};

/// One part as a run plans it: the probe its records carry (its command
/// is named so) and the part.
pub(super) struct Planned {
    pub probe: &'static str,
    pub part: Part,
}

/// The parts of `profile` among the probes of `registry`, in the order
/// they run: the default profile's, then the full profile's, each in their
/// order.
pub(super) fn of(profile: Profile, registry: &[&dyn Probe]) -> Vec<Planned> {
    let mut parts: Vec<Planned> = registry
        .iter()
        .filter_map(|p| {
            let part = p.part().filter(|part| part.profile <= profile)?;
            Some(Planned {
                probe: p.probe(),
                part,
            })
        })
        .collect();
    parts.sort_by_key(|p| (p.part.profile, p.part.order));
    parts
}

/// What a part left: its records (with a `NOT_COMPLETE` record when it
/// failed while no stop was asked for) and its log (its stderr, the human
/// output).
pub(super) struct Ran {
    pub records: Vec<Record>,
    pub log: String,
}

/// Runs `part` as a child; `stopped` says whether a stop was asked for,
/// after which a failure is the stop's and its own records say so.
pub(super) fn run_part(
    part: &Planned,
    topo: &Topology,
    scope: Scope,
    stopped: impl Fn() -> bool,
) -> Ran {
    let (mut records, log, failure) = stage(&(part.part.args)(topo, scope));
    if let Some(why) = failure.filter(|_| !stopped()) {
        let name = part.probe;
        eprintln!("numabench: warning: {name}: {why}; the other parts go on");
        let mut note = Record::new(name, NOT_COMPLETE);
        note.notes.push(format!("{name}: {why} (see {name}.log)"));
        records.insert(0, note);
    }
    Ran { records, log }
}

/// Runs this binary with `args`; returns the records of the results
/// document it printed (those of a failed run too, when it printed one),
/// its stderr (its human output) and why it failed, if it did.
fn stage(args: &[String]) -> (Vec<Record>, String, Option<String>) {
    let out = match std::env::current_exe().and_then(|exe| {
        use std::process::Stdio;
        let mut cmd = std::process::Command::new(exe);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        crate::interrupt::tie_child(&mut cmd);
        wait_passing_stops_on(cmd.spawn()?)
    }) {
        Ok(out) => out,
        Err(e) => {
            return (
                Vec::new(),
                String::new(),
                Some(format!("cannot start: {e}")),
            );
        }
    };
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    let doc = serde_json::from_slice::<Document>(&out.stdout);
    let failure = if !out.status.success() {
        let last = log.lines().rev().find(|l| !l.trim().is_empty());
        Some(match last {
            Some(last) => format!("failed ({}): {last}", out.status),
            None => format!("failed ({}) with nothing on stderr", out.status),
        })
    } else {
        doc.as_ref()
            .err()
            .map(|e| format!("its results do not parse: {e}"))
    };
    (doc.map(|d| d.records).unwrap_or_default(), log, failure)
}

/// Waits for a stage, passing a stop signal this process receives on to it
/// once (it is in a process group of its own); a second signal kills it
/// with this process (see `interrupt`).
fn wait_passing_stops_on(child: std::process::Child) -> std::io::Result<std::process::Output> {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    let pid = child.id() as i32;
    crate::interrupt::set_child(pid);
    let (tx, rx) = channel();
    let (give, take) = channel::<std::process::Child>();
    let waiter = crate::sys::threads::spawn((0, 1), move || {
        if let Ok(child) = take.recv() {
            let _ = tx.send(child.wait_with_output());
        }
    });
    if waiter.is_err() {
        // No thread to wait with (a task limit): wait here. A first stop
        // is then not passed on; a second still ends the stage with this
        // process.
        let out = child.wait_with_output();
        crate::interrupt::set_child(0);
        return out;
    }
    let _ = give.send(child);
    let mut passed_on = false;
    let out = loop {
        match rx.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(out) => break out,
            Err(RecvTimeoutError::Timeout) => {
                if let Some(sig) = crate::interrupt::requested()
                    && !passed_on
                {
                    crate::interrupt::pass_on(pid, sig);
                    passed_on = true;
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                break Err(std::io::Error::other("lost track of the stage"));
            }
        }
    };
    crate::interrupt::set_child(0);
    out
}
