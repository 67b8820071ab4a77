//! Findings on how each probe's measurement ended: a part that failed, a
//! time limit that cut it short, an error part-way. Read from the
//! records' conditions (never from a note's wording), one sentence per
//! probe and kind of ending, in the order the probes' records come.

use crate::results::Record;
use crate::results::names::run::NOT_COMPLETE;
use crate::view::Finding;

pub(crate) fn part_findings(records: &[Record]) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut push = |f: Finding| {
        if !out.contains(&f) {
            out.push(f);
        }
    };
    for r in records {
        let probe = crate::text::escape(&r.probe);
        if r.name == NOT_COMPLETE {
            push(Finding::flag(format!(
                "{probe} did not complete: its figures are missing or partial (its log in the results folder says why)"
            )));
        }
        if let Some(limit_s) = r.cut_by_time_limit() {
            push(Finding::flag(format!(
                "{probe} was cut short by its time limit of {limit_s} s: some of its figures were not measured (its notes say which)"
            )));
        }
        if let Some(why) = r.part_failed() {
            push(Finding::flag(format!(
                "{probe} failed part-way ({}): its figures are partial",
                crate::text::escape(why)
            )));
        }
        if let Some(signal) = r.cut_by_signal() {
            push(Finding::flag(format!(
                "{probe} was stopped by signal {signal}: its figures are partial"
            )));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Condition;
    use crate::results::names::probe;

    #[test]
    fn each_ending_is_said_once_per_probe_from_the_conditions() {
        let mut cut = Record::new(probe::LATENCY, "chase");
        cut.conditions
            .push(Condition::CutByTimeLimit { limit_s: 12.0 });
        let mut failed = Record::new(probe::SCHED, "numa_test");
        failed.conditions.push(Condition::PartFailed {
            why: "mbind: out of memory".into(),
        });
        let gone = Record::new(probe::PEAK, NOT_COMPLETE);
        let whole = Record::new(probe::MLP, "mlp");
        let f = part_findings(&[cut.clone(), cut, failed, gone, whole]);
        let t: Vec<&str> = f.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            t,
            [
                "latency was cut short by its time limit of 12 s: some of its figures were not measured (its notes say which)",
                "sched failed part-way (mbind: out of memory): its figures are partial",
                "peak did not complete: its figures are missing or partial (its log in the results folder says why)",
            ]
        );
        assert!(f.iter().all(|f| f.flag));
        // A note alone is no condition.
        let mut said = Record::new(probe::PEAK, "peak");
        said.notes.push("time limit of 20 s reached".into());
        assert!(part_findings(&[said]).is_empty());
    }
}
