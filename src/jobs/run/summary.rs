//! The summary `run` prints, from the records of its results document.

use crate::results::{Document, Record};
use crate::topology::MemoryLimit;
use crate::view::Finding;
use crate::view::Probe;

/// The summary of `doc`, measured in `secs`, with the lines of the probes
/// of `registry`.
pub(super) fn summary(doc: &Document, secs: f64, registry: &[&dyn Probe]) -> String {
    let h = &doc.host;
    let mut out = format!(
        "{} ({}), {} node(s) with memory, {} CPU(s); measured in {secs:.0} s\n",
        crate::text::escape(&h.hostname),
        crate::text::escape(&h.cpu_model),
        h.topology.nodes.iter().filter(|n| n.has_memory).count(),
        h.topology.allowed.cpus.len()
    );
    out.push_str(&super::headline::headline(
        &crate::probes::sweep::levels::Levels::of(&h.topology, None),
        &doc.records,
    ));
    out.push_str(&super::probe_lines::probe_lines(
        &h.topology,
        &doc.records,
        registry,
    ));
    out.push_str(&super::probe_lines::part_lines(&doc.records, registry));
    out.push_str(&limit_line(h.topology.memory_limit.as_ref(), &doc.records));
    out.push_str(&findings_lines(&crate::analysis::findings::findings(
        doc, registry,
    )));
    out
}

/// The report's findings, in its order and words, so a reader of the
/// terminal alone sees every warning the report shows; a flag is marked
/// `!`, as the report marks it red.
fn findings_lines(found: &[Finding]) -> String {
    if found.is_empty() {
        return String::new();
    }
    let mut out = String::from("findings:\n");
    for f in found {
        let mark = if f.flag { "! warning:" } else { "-" };
        out.push_str(&format!("  {mark} {}\n", crate::text::escape(&f.text)));
    }
    out
}

/// One line when a memory limit of the process cut some buffer down: the
/// figures above are then of smaller buffers than on the same machine
/// without it. A record whose buffer the limit cut says so by its
/// condition, naming the limit by its source.
fn limit_line(limit: Option<&MemoryLimit>, records: &[Record]) -> String {
    let Some(l) = limit else {
        return String::new();
    };
    if !records.iter().any(|r| r.scaled_by_memory_limit(&l.source)) {
        return String::new();
    }
    format!(
        "  memory limit: {}; buffers scaled down to fit (see the notes)\n",
        crate::text::escape(&l.describe())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Condition;
    use crate::results::names::probe;

    #[test]
    fn a_memory_limit_that_scaled_a_buffer_gets_one_line() {
        let l = MemoryLimit {
            headroom_bytes: 62 << 20,
            limit_bytes: 64 << 20,
            source: "memory cgroup /x (memory.limit_in_bytes)".into(),
        };
        let mut scaled = Record::new(probe::MATRIX, "matrix");
        scaled.conditions.push(Condition::ScaledByMemoryLimit {
            source: l.source.clone(),
        });
        let plain = Record::new(probe::SWEEP, "sweep");
        let text = limit_line(Some(&l), &[plain.clone(), scaled.clone(), scaled.clone()]);
        assert_eq!(
            text,
            "  memory limit: 62 MiB left under memory cgroup /x (memory.limit_in_bytes) of 64 MiB; buffers scaled down to fit (see the notes)\n"
        );
        // A limit that cut nothing, or no limit: no line; nor a note that
        // names the limit without its condition.
        let mut said = plain.clone();
        said.notes
            .push(format!("scaled down (half of the {})", l.describe()));
        assert_eq!(limit_line(Some(&l), &[plain, said]), "");
        assert_eq!(limit_line(None, &[scaled]), "");
    }

    #[test]
    fn findings_end_the_summary_with_flags_marked_and_controls_escaped() {
        let found = [
            Finding::info("one NUMA node".into()),
            Finding::flag("latency by pattern: CV above 5% on host\x1b[2J".into()),
        ];
        assert_eq!(
            findings_lines(&found),
            "findings:\n  - one NUMA node\n  ! warning: latency by pattern: CV above 5% on host\\x1b[2J\n"
        );
        assert_eq!(findings_lines(&[]), "");
    }
}
