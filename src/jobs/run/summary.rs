//! The summary `run` prints, from the records of its results document.

use crate::results::{Document, Record};
use crate::topology::MemoryLimit;
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
    out.push_str(&super::probe_lines::probe_lines(
        &h.topology,
        &doc.records,
        registry,
    ));
    out.push_str(&super::probe_lines::part_lines(&doc.records, registry));
    out.push_str(&cut_lines(&doc.records));
    out.push_str(&limit_line(h.topology.memory_limit.as_ref(), &doc.records));
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

/// One line per part its time limit stopped early, from the records'
/// conditions: a figure missing from the lines above is then explained,
/// and the part's notes say how much of it was measured.
fn cut_lines(records: &[Record]) -> String {
    let mut cuts: Vec<(&str, f64)> = Vec::new();
    for r in records {
        if let Some(limit_s) = r.cut_by_time_limit()
            && !cuts.contains(&(r.probe.as_str(), limit_s))
        {
            cuts.push((r.probe.as_str(), limit_s));
        }
    }
    cuts.iter()
        .map(|(probe, limit_s)| {
            format!(
                "  {} cut short: time limit of {limit_s} s reached (its notes say what was measured)\n",
                crate::text::escape(probe)
            )
        })
        .collect()
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
    fn a_part_its_time_limit_stopped_is_named_once_from_its_conditions() {
        let limit = |s: f64| Condition::CutByTimeLimit { limit_s: s };
        let mut cut = Record::new(probe::LATENCY, "chase");
        cut.notes
            .push("time limit reached: 1 of 2 measurements made".into());
        cut.conditions.push(limit(12.0));
        let whole = Record::new(probe::MLP, "mlp");
        let text = cut_lines(&[cut.clone(), cut, whole]);
        assert_eq!(
            text,
            "  latency cut short: time limit of 12 s reached (its notes say what was measured)\n"
        );
        assert_eq!(cut_lines(&[Record::new(probe::PEAK, "peak")]), "");
        // A note that says it, without the condition, is no cut; a stop by
        // a signal is none either.
        let mut peak = Record::new(probe::PEAK, "peak");
        peak.notes
            .push("time limit of 20 s reached: 4 of 12 measurement(s) made".into());
        let mut mlp = Record::new(probe::MLP, "mlp");
        mlp.conditions.push(Condition::CutBySignal { signal: 2 });
        assert_eq!(cut_lines(&[peak.clone(), mlp.clone()]), "");
        peak.conditions.push(limit(20.0));
        mlp.conditions.push(limit(0.5));
        assert_eq!(
            cut_lines(&[peak, mlp]),
            "  peak cut short: time limit of 20 s reached (its notes say what was measured)\n  \
             mlp cut short: time limit of 0.5 s reached (its notes say what was measured)\n"
        );
    }
}
