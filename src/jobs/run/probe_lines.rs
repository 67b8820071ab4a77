//! The summary lines of the parts of `run`, each from its probe's records:
//! a short probe's line gives the figure a person quotes
//! (`Probe::summary_line`), a workload's counts its records.

use super::parts;
use crate::results::Record;
use crate::results::names::{param, run};
use crate::topology::Topology;
use crate::view::{Probe, Profile};

/// `probe`'s records.
fn of<'a>(records: &'a [Record], probe: &str) -> Vec<&'a Record> {
    records.iter().filter(|r| r.probe == probe).collect()
}

/// The line of every probe of `registry` (in its order) that has one and
/// left records, but the workloads'; a part that failed says so in place
/// of its figures.
pub(super) fn probe_lines(topo: &Topology, records: &[Record], registry: &[&dyn Probe]) -> String {
    let mut out = String::new();
    for p in registry {
        let part = p.part();
        if part.is_some_and(|part| part.counted_as.is_some()) {
            continue;
        }
        let name = p.probe();
        let own = of(records, name);
        let failed = own.iter().any(|r| r.name == run::NOT_COMPLETE);
        if part.is_some_and(|part| part.in_process.is_none()) && failed {
            out.push_str(&format!("  {name:<19} NOT COMPLETE, see {name}.log\n"));
        } else if let Some(line) = p.summary_line(topo, &own) {
            out.push_str(&line);
        }
    }
    out
}

/// One line per workload part that left records, in the order they ran:
/// how many, how many skipped, and whether it failed.
pub(super) fn part_lines(records: &[Record], registry: &[&dyn Probe]) -> String {
    let mut out = String::new();
    for planned in parts::of(Profile::Full, registry) {
        let (probe, Some(what)) = (planned.probe, planned.part.counted_as) else {
            continue;
        };
        let recs = of(records, probe);
        if recs.is_empty() {
            continue;
        }
        let skipped = recs
            .iter()
            .filter(|r| r.bool_param(param::SKIPPED) == Some(true))
            .count();
        let failed = recs.iter().filter(|r| r.name == run::NOT_COMPLETE).count();
        out.push_str(&format!(
            "  {probe:<8} {what:<11} {} record(s){}{}\n",
            recs.len() - skipped - failed,
            if skipped > 0 {
                format!(", {skipped} skipped")
            } else {
                String::new()
            },
            if failed > 0 {
                " - NOT COMPLETE, see its log".to_string()
            } else {
                String::new()
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::REGISTRY;
    use crate::results::Better;
    use crate::results::names::{c2c, loaded, metric, peak, probe};

    /// The lines of the probes that are parts of run (the matrix and the
    /// sweep, run's own steps, have tests of their own).
    fn parts_lines(records: &[Record]) -> String {
        let parts: Vec<&dyn Probe> = REGISTRY
            .iter()
            .copied()
            .filter(|p| p.part().is_some_and(|part| part.in_process.is_none()))
            .collect();
        probe_lines(&crate::topology::fixture("two-node"), records, &parts)
    }

    fn at(name: &str, c: u64, m: u64) -> Record {
        Record::new(name, "r")
            .param(param::CPU_NODE, c)
            .param(param::MEM_NODE, m)
    }

    /// A latency record of `pattern` from node 0 to `m`, on 2M pages.
    fn lat(pattern: &str, m: u64, ns: f64) -> Record {
        at(probe::LATENCY, 0, m)
            .param(param::PATTERN, pattern)
            .param(param::PAGE_SIZE, "2M")
            .metric(metric::LATENCY_NS, ns, "ns", Better::Lower)
    }

    #[test]
    fn each_probe_gives_its_line_with_local_beside_remote() {
        let records = vec![
            lat("full-random", 0, 150.0),
            lat("full-random", 1, 240.0),
            lat("page-local", 0, 94.0).param(param::SIZE_BYTES, 2_516_582_400u64),
            lat("stride:128", 0, 60.0).param(param::SIZE_BYTES, 2_516_582_400u64),
            at(probe::PEAK, 0, 0)
                .param(peak::param::KIND, peak::kind::BEST)
                .param(param::THREADS, 8)
                .param(peak::param::MIX, "1:1")
                .param(peak::param::STORE, "nt")
                .metric(metric::BANDWIDTH_MB_S, 46000.0, "MB/s", Better::Higher),
            at(probe::PEAK, 0, 0)
                .param(peak::param::KIND, peak::kind::BEST)
                .param(param::THREADS, 1)
                .metric(metric::BANDWIDTH_MB_S, 25000.0, "MB/s", Better::Higher),
            Record::new(probe::C2C, "cas 0-1")
                .param(param::VARIANT, "cas")
                .param(param::CPU, 0)
                .param(c2c::param::PEER_CPU, 1)
                .param(c2c::param::CLASS, c2c::class::SAME_L3)
                .metric(metric::LATENCY_NS, 26.2, "ns", Better::Lower),
            at(probe::LOADED, 0, 0)
                .param(loaded::param::KIND, loaded::kind::KNEE)
                .metric(loaded::metric::IDLE_LATENCY_NS, 170.0, "ns", Better::Lower)
                .metric(
                    loaded::metric::MAX_LOAD_LATENCY_NS,
                    335.0,
                    "ns",
                    Better::Lower,
                )
                .metric(
                    loaded::metric::MAX_BANDWIDTH_MB_S,
                    28700.0,
                    "MB/s",
                    Better::Higher,
                ),
        ];
        let text = parts_lines(&records);
        // Page-local and full-random are run's headline, not repeated.
        assert!(
            text.contains("  other patterns:     stride:128 (2M, 2.3 GiB) local 60.0 ns\n"),
            "{text}"
        );
        assert!(
            !text.contains("page-local") && !text.contains("full-random"),
            "{text}"
        );
        assert!(
            text.contains("8 thread(s): local 46000 MB/s (local best: 1:1 nt)"),
            "{text}"
        );
        assert!(text.contains("cas same-l3 26.2 ns"), "{text}");
        assert!(
            text.contains("0->0 idle 170 ns, 335 ns at 28700 MB/s injected, no knee"),
            "{text}"
        );
        assert!(!text.contains("parallel chases"), "{text}");
    }

    #[test]
    fn latency_names_each_pattern_once_when_records_come_pair_by_pair() {
        // The probe's order: every pattern for 0->0, then every one for 0->1.
        let records = vec![
            lat("stride:128", 0, 150.0),
            lat("page-local", 0, 94.0),
            lat("stride:64", 0, 70.0),
            lat("stride:128", 1, 240.0),
            lat("page-local", 1, 180.0),
            lat("stride:64", 1, 90.0),
        ];
        let text = parts_lines(&records);
        assert_eq!(
            text,
            "  other patterns:     stride:128 (2M) local 150.0 ns, remote 240.0 ns; \
             stride:64 (2M) local 70.0 ns, remote 90.0 ns\n"
        );
    }

    #[test]
    fn a_failed_part_says_so_instead_of_its_figures() {
        let records = vec![
            at(probe::LOADED, 0, 0)
                .param(loaded::param::KIND, loaded::kind::KNEE)
                .metric(loaded::metric::IDLE_LATENCY_NS, 170.0, "ns", Better::Lower),
            Record::new(probe::LOADED, run::NOT_COMPLETE),
        ];
        let text = parts_lines(&records);
        assert_eq!(text, "  loaded              NOT COMPLETE, see loaded.log\n");
    }

    #[test]
    fn a_failed_part_and_skipped_tests_are_counted_apart() {
        let mut failed = Record::new(probe::MEM, run::NOT_COMPLETE);
        failed.notes.push("mem: failed".into());
        let skipped = Record::new(probe::MEM, "numa01").param(param::SKIPPED, true);
        let done = Record::new(probe::MEM, "numa02");
        let lines = part_lines(&[failed, skipped, done], REGISTRY);
        assert_eq!(
            lines,
            "  mem      perf's suite 1 record(s), 1 skipped - NOT COMPLETE, see its log\n"
        );
    }
}
