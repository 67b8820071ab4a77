//! Jobs: what a command does between parsing its arguments and printing,
//! where that is more than one probe's measurement (the `run` job runs
//! several probes and writes a results folder). Above the probes and the
//! output, below the command line.

pub mod fleet;
pub mod gather;
pub mod place;
pub mod run;

use crate::results::{Document, Record};

/// Leaves `doc` incomplete after a stop by `sig` and says so in a note: on
/// its last record, or on a record of its own when nothing was measured.
pub fn mark_interrupted(doc: &mut Document, probe: &str, sig: i32) {
    let note = format!(
        "interrupted by {}: the run is partial; what is here was measured before the stop",
        crate::interrupt::name(sig)
    );
    doc.complete = false;
    match doc.records.last_mut() {
        Some(r) => r.notes.push(note),
        None => {
            let mut r = Record::new(probe, crate::results::names::run::INTERRUPTED);
            r.notes.push(note);
            doc.records.push(r);
        }
    }
}

/// The line the human output opens with after a stop.
pub fn interrupted_line(sig: i32, kept: &str) -> String {
    format!(
        "INTERRUPTED by {}: partial results, {kept}",
        crate::interrupt::name(sig)
    )
}
