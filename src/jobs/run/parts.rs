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
    let args = (part.part.args)(topo, scope);
    let (doc, said, failure) = stage(&args);
    let log = log_text(
        &format!("numabench {}", args.join(" ")),
        &said,
        doc.as_ref(),
    );
    let mut records = doc.map(|d| d.records).unwrap_or_default();
    if let Some(why) = failure.filter(|_| !stopped()) {
        let name = part.probe;
        eprintln!("numabench: warning: {name}: {why}; the other parts go on");
        let mut note = Record::new(name, NOT_COMPLETE);
        note.notes.push(format!("{name}: {why} (see {name}.log)"));
        records.insert(0, note);
    }
    Ran { records, log }
}

/// A part's log: how it ran, what it said on stderr (its warnings, a
/// failure), then its results as its command prints them without `--json`.
/// Its stderr alone is empty when all went well: the results, notes
/// included, go to its document.
pub(super) fn log_text(how: &str, said: &str, doc: Option<&Document>) -> String {
    let mut log = format!("{how}\n");
    if !said.is_empty() {
        log.push('\n');
        log.push_str(said);
        if !said.ends_with('\n') {
            log.push('\n');
        }
    }
    let shown = doc.map(|d| {
        crate::output::render::render(
            d,
            crate::output::render::Format::Text,
            crate::probes::REGISTRY,
        )
    });
    match shown {
        Some(Ok(text)) if !text.trim().is_empty() => {
            log.push('\n');
            log.push_str(&text);
            if !text.ends_with('\n') {
                log.push('\n');
            }
        }
        Some(Err(e)) => log.push_str(&format!("\nits results cannot be shown: {e:#}\n")),
        _ => log.push_str("\nno results\n"),
    }
    log
}

/// Runs this binary with `args`; returns the results document it printed
/// (that of a failed run too, when it printed one), its stderr and why it
/// failed, if it did.
fn stage(args: &[String]) -> (Option<Document>, String, Option<String>) {
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
            return (None, String::new(), Some(format!("cannot start: {e}")));
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
    (doc.ok(), log, failure)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_log_holds_its_command_its_stderr_and_its_results_as_shown() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/cases/run.json");
        let mut doc = Document::load(std::path::Path::new(path)).unwrap().document;
        doc.records
            .retain(|r| r.probe == crate::results::names::probe::LOADED);
        let log = log_text(
            "numabench loaded --json",
            "numabench: warning: a warning",
            Some(&doc),
        );
        let (how, rest) = log.split_once('\n').unwrap();
        assert_eq!(how, "numabench loaded --json");
        assert!(
            rest.starts_with("\nnumabench: warning: a warning\n\n"),
            "{log}"
        );
        assert!(rest.contains("loaded latency by node pair"), "{log}");
        // A quiet child that printed no document still says so.
        let quiet = log_text("numabench c2c --json", "", None);
        assert_eq!(quiet, "numabench c2c --json\n\nno results\n");
    }
}
