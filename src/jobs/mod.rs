//! Jobs: what a command does between parsing its arguments and printing,
//! where that is more than one probe's measurement (the `run` job runs
//! several probes and writes a results folder). Above the probes and the
//! output, below the command line.

pub(crate) mod fleet;
pub(crate) mod gather;
pub(crate) mod place;
pub(crate) mod run;

use crate::results::{Document, Record};

/// Leaves `doc` incomplete after a stop by `sig` and says so in a note: on
/// its last record, or on a record of its own when nothing was measured.
pub fn mark_interrupted(doc: &mut Document, probe: &str, sig: i32) {
    let note = format!(
        "interrupted by {}: the run is partial; what is here was measured before the stop",
        crate::interrupt::name(sig)
    );
    mark_partial(doc, probe, note, crate::results::names::run::INTERRUPTED);
}

/// Marks `doc` incomplete with `note` on its last record, or on a record
/// of its own named `empty_name` where nothing was measured.
fn mark_partial(doc: &mut Document, probe: &str, note: String, empty_name: &str) {
    doc.complete = false;
    match doc.records.last_mut() {
        Some(r) => r.notes.push(note),
        None => {
            let mut r = Record::new(probe, empty_name);
            r.notes.push(note);
            doc.records.push(r);
        }
    }
}

/// Marks `doc` as cut short by a measurement that failed (`why`) after
/// others were made: what is here was measured before it.
pub fn mark_failed(doc: &mut Document, probe: &str, why: &str) {
    let note =
        format!("failed partway: {why}; the run is partial, what is here was measured before");
    mark_partial(doc, probe, note, crate::results::names::run::NOT_COMPLETE);
}

/// The line the human output opens with after a stop.
pub fn interrupted_line(sig: i32, kept: &str) -> String {
    format!(
        "INTERRUPTED by {}: partial results, {kept}",
        crate::interrupt::name(sig)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_partway_marks_the_document_and_notes_why() {
        let topo = crate::topology::fixture("two-node");
        let mut doc = Document::new(&topo);
        doc.records.push(Record::new("latency", "chase 0->0"));
        doc.complete = true;
        mark_failed(&mut doc, "latency", "mbind: out of memory");
        assert!(!doc.complete);
        assert_eq!(doc.records.len(), 1);
        assert!(doc.records[0].notes[0].contains("failed partway: mbind: out of memory"));
        // Nothing measured: a record of its own says so.
        let mut empty = Document::new(&topo);
        mark_failed(&mut empty, "latency", "no memory");
        assert_eq!(
            empty.records[0].name,
            crate::results::names::run::NOT_COMPLETE
        );
    }
}
