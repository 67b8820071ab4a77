//! The AutoNUMA benchmarks as a workload part of `run --profile full`.

use super::AutonumaView;
use crate::probes::part::words;
use crate::results::names::probe;
use crate::results::{Document, Record};
use crate::view::{FolderFile, Part, Probe, Profile};

const PART: Part = Part {
    profile: Profile::Full,
    order: 1,
    args: |_, _| words(&[probe::AUTONUMA, "all", "--json"]),
    counted_as: Some("AutoNUMA"),
    in_process: None,
    plan: |_, _| {
        let tests = super::bench::Test::ALL.len();
        // Each test's work takes about 20 s on a small machine, more where
        // the balancer is slow to converge.
        crate::probes::part::workload_plan(format!("{tests} test(s)"), tests, 20.0)
    },
};

impl Probe for AutonumaView {
    fn part(&self) -> Option<Part> {
        Some(PART)
    }

    /// Each run's memory-over-time series as a CSV of its own.
    fn folder_files(&self, _doc: &Document, records: &[&Record]) -> Vec<(String, FolderFile)> {
        records
            .iter()
            .flat_map(|r| {
                r.series.iter().map(|s| {
                    (
                        format!("autonuma-{}-{}.csv", r.name, s.name),
                        FolderFile::Series(s.clone()),
                    )
                })
            })
            .collect()
    }
}
