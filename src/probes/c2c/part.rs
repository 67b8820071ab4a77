//! Core-to-core latency in the jobs over several probes: its part in
//! `run` and its summary line.

use super::C2cView;
use crate::probes::part::words;
use crate::results::Record;
use crate::results::names::probe;
use crate::view::{Part, Probe, Profile};

/// Fewer samples, and sampled pairs above 16 CPUs, two per (class, node
/// pair): the node summary, not every pair.
const PART: Part = Part {
    profile: Profile::Default,
    order: 3,
    chases: false,
    args: |_| {
        words(&[
            probe::C2C,
            "-n",
            "100",
            "--sample-above",
            "16",
            "--per-group",
            "2",
            "--time-limit",
            "10",
            "--json",
        ])
    },
    counted_as: None,
};

impl Probe for C2cView {
    fn part(&self) -> Option<Part> {
        Some(PART)
    }

    /// Median one-way latency of each class, per variant, as the view's
    /// class table has it.
    fn summary_line(&self, recs: &[&Record]) -> Option<String> {
        let parts: Vec<String> = super::view::class_medians(recs)
            .into_iter()
            .map(|(v, classes)| {
                let per_class: Vec<String> = classes
                    .iter()
                    .map(|(c, m)| format!("{} {m:.1} ns", c.name()))
                    .collect();
                format!("{v} {}", per_class.join(", "))
            })
            .collect();
        (!parts.is_empty()).then(|| format!("  core to core:       {}\n", parts.join("; ")))
    }
}
