//! Everything a job over several probes asks of one probe, as one trait:
//! the registry (`probes::REGISTRY`) holds one entry per probe, and `run`,
//! its summary, the repeat check and the fleet report iterate it without
//! naming a probe. Each answer is opt-in: a probe that does not take part
//! in `run`, or gives no fleet figure, leaves the default of none.

use super::View;
use crate::results::{Better, Document, Record, Series};
use crate::topology::Topology;
use crate::view::Finding;
use serde::Serialize;

/// One probe as the shared jobs see it: its view (how its records are
/// drawn) and what it adds to each job.
pub(crate) trait Probe: View {
    /// Its part in `run`, as a child numabench.
    fn part(&self) -> Option<Part> {
        None
    }

    /// Measures its part of `run` where the probe has no command of its
    /// own: its [`Part::args`] then start with `part PROBE`, and run's
    /// child (`numabench part PROBE ARGS...`) prints these records as a
    /// results document. `None`: its part runs its own command.
    fn measure_part(
        &self,
        _topo: &Topology,
        _args: &[String],
    ) -> Option<anyhow::Result<Vec<Record>>> {
        None
    }

    /// Files of its own in a run's results folder, beside results.json
    /// and report.html, each named (the run makes the name safe for a
    /// file system) and drawn from its records.
    fn folder_files(&self, _doc: &Document, _records: &[&Record]) -> Vec<(String, FolderFile)> {
        Vec::new()
    }

    /// Its line(s) in run's terminal summary, from its own records: the
    /// figure a person quotes. A part that failed is named in its place.
    fn summary_line(&self, _topo: &Topology, _records: &[&Record]) -> Option<String> {
        None
    }

    /// What its records show that a reader must know, as the report's
    /// findings (and run's summary after it) say it: noise, an implausible
    /// ratio, a curve that never loaded. `records` are its own, `doc` the
    /// whole document, for a figure to compare with another probe's.
    fn findings(&self, _doc: &Document, _records: &[&Record]) -> Vec<Finding> {
        Vec::new()
    }

    /// The ns per load of `r` where it is one idle pointer chase on one
    /// node pair, which the repeat check compares with the same chase
    /// measured by other probes of a run; `None` for every other record.
    fn idle_chase(&self, _r: &Record) -> Option<f64> {
        None
    }

    /// Where its idle chases come from, in words for a sentence ("the
    /// latency probe").
    fn idle_chase_source(&self) -> &'static str {
        self.probe()
    }

    /// The key figures it adds to a fleet report, after the matrix's and
    /// the host's.
    fn fleet_figures(&self) -> &'static [FleetFigure] {
        &[]
    }
}

/// A file of a probe's in a run's results folder.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FolderFile {
    /// A table, written as CSV with its notes after the rows.
    Table(super::Csv),
    /// A time series: a column of x, then one column per line.
    Series(Series),
}

/// How much a run measures; each profile holds the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Profile {
    /// The matrix on 8 MiB buffers with one timed run: seconds, and cache
    /// figures, not memory's (hidden; for tests of what carries the
    /// results, such as `fleet submit`).
    Smoke,
    /// The matrix alone: what `fleet report` compares.
    Quick,
    /// The matrix, the sweep and the short probes (latency by pattern,
    /// memory-level parallelism, loaded latency, peak injection,
    /// core-to-core latency).
    Default,
    /// Also the workload parts (perf's suite, AutoNUMA, numa_test).
    Full,
}

impl Profile {
    /// The profile `--profile NAME` names.
    pub(crate) fn from_name(name: &str) -> Option<Profile> {
        Some(match name {
            "smoke" => Profile::Smoke,
            "quick" => Profile::Quick,
            "default" => Profile::Default,
            "full" => Profile::Full,
            _ => return None,
        })
    }
}

/// A probe's part in `run`: a child numabench that prints its results
/// document (`--json`). The workload engines fork, which wants a
/// single-threaded parent, and a child keeps one part's failure from
/// taking the others.
#[derive(Clone, Copy)]
pub(crate) struct Part {
    /// The least profile that runs it.
    pub profile: Profile,
    /// Its place among the parts of its profile: they run in this order.
    pub order: u8,
    /// Its command line on this machine (the command is named as the
    /// probe).
    pub args: fn(&Topology, Scope) -> Vec<String>,
    /// A workload's summary line counts its records, under this name
    /// ("perf's suite"), where a short probe's gives its figures.
    pub counted_as: Option<&'static str>,
    /// Measured in run's own process instead of a child (`args` then
    /// unused): a step whose buffers the steps after it follow, such as the
    /// matrix, or that forks nothing and needs no child to fail alone.
    pub in_process: Option<InProcess>,
    /// What it will measure on this machine and how long that should take,
    /// worked out from the same sizes its command line (or its in-process
    /// config) is given, before anything is measured.
    pub plan: fn(&Topology, Scope) -> PartPlan,
}

/// What a run asks of its parts: its profile, and how far they are
/// trimmed to fit its time budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scope {
    pub profile: Profile,
    pub trim: Trim,
    /// Every node pair in the per-pair parts (`run --all-pairs`), however
    /// many nodes there are.
    pub all_pairs: bool,
}

impl Scope {
    /// `profile` untrimmed.
    #[cfg(test)]
    pub(crate) fn of(profile: Profile) -> Scope {
        Scope {
            profile,
            trim: Trim::None,
            all_pairs: false,
        }
    }
}

/// How far a run's parts are cut to fit its budget (`run --budget`), in
/// the order they are cut; each level holds the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Trim {
    /// As the profile has it.
    None,
    /// The per-pair parts measure pairs by distance class on any machine
    /// of more than two memory nodes, not only on large ones.
    Pairs,
    /// The matrix's thread scan once per CPU node and distance class.
    Scan,
    /// Fewer repeats: each bandwidth figure the best of two runs of 20 ms,
    /// three chase counts, three loads, half the core-to-core samples.
    Repeats,
    /// The sweep at every other size.
    Sizes,
    /// The matrix's idle latency on the pairs of each distance class the
    /// per-pair parts measure (its bandwidth stays complete).
    Cells,
    /// Brief figures: each bandwidth figure one run of 10 ms after its
    /// warm-up, the latency part page-local only (its full-random chase
    /// repeats the matrix's), chases 1 and 16.
    Brief,
}

impl Trim {
    /// Every level, from none to the most.
    pub(crate) const LADDER: [Trim; 7] = [
        Trim::None,
        Trim::Pairs,
        Trim::Scan,
        Trim::Repeats,
        Trim::Sizes,
        Trim::Cells,
        Trim::Brief,
    ];

    /// What this level and those before it drop, in words.
    pub(crate) fn dropped(self) -> String {
        let own = |t: Trim| match t {
            Trim::None => "",
            Trim::Pairs => "node pairs of latency, mlp and peak by distance class",
            Trim::Scan => "the matrix's thread scan once per CPU node and distance class",
            Trim::Repeats => {
                "fewer repeats (2 timed runs of 20 ms, 3 chase counts, 3 loads, half the core-to-core samples)"
            }
            Trim::Sizes => "the sweep at every other size",
            Trim::Cells => "the matrix's latency on the sampled pairs only",
            Trim::Brief => {
                "brief figures (one timed run of 10 ms, latency page-local only, chases 1 and 16)"
            }
        };
        let all: Vec<&str> = Trim::LADDER
            .iter()
            .filter(|&&t| t != Trim::None && t <= self)
            .map(|&t| own(t))
            .collect();
        if all.is_empty() {
            "nothing".into()
        } else {
            all.join("; ")
        }
    }
}

/// What a part (or a command) will do, before it measures: `--plan` prints
/// it and `run` sums its parts' estimates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct PartPlan {
    /// What it measures, in words ("16 cells: 4 CPU nodes x 4 memory
    /// nodes").
    pub measures: String,
    /// The buffers it builds.
    pub buffers: Vec<Builds>,
    /// The most memory it maps at one time, in bytes.
    pub mapped_at_once: u64,
    /// Estimated seconds (the model is `probes::cost`'s), the cap applied.
    pub seconds: f64,
    /// What bounds the estimate where the model alone would give more
    /// (its time limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capped_by: Option<String>,
}

impl PartPlan {
    /// The plan of a part that cannot be planned (its config is refused
    /// on this machine): nothing, and why; the part fails the same way
    /// when it runs.
    pub(crate) fn cannot(why: &anyhow::Error) -> PartPlan {
        PartPlan {
            measures: format!("nothing: {why:#}"),
            buffers: Vec::new(),
            mapped_at_once: 0,
            seconds: 0.0,
            capped_by: None,
        }
    }
}

/// Buffers of one kind a part builds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Builds {
    /// What they hold ("chase", "bandwidth arrays").
    pub what: String,
    pub count: usize,
    /// Bytes of the largest.
    pub bytes: u64,
    /// Bytes of the smallest.
    pub smallest: u64,
}

/// A part measured in run's own process: the topology, the run's scope
/// and where to say what it is doing.
pub(crate) type InProcess = fn(&Topology, Scope, &dyn Fn(&str)) -> anyhow::Result<InRun>;

/// What an in-process part measured: its records, and why it stopped
/// short where it failed after measuring some of them.
pub(crate) struct InRun {
    pub records: Vec<Record>,
    pub failed: Option<String>,
}

/// One key figure of a fleet: what it is, its unit and which way is
/// better.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spec {
    pub id: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    pub better: Better,
}

/// One figure of one machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Figure {
    pub value: f64,
    /// The matrix cell it comes from (`0->1`): the worst of its kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
    /// The measurement's repetitions, for noise marks in a comparison
    /// (not in the report's JSON: the results documents hold them).
    #[serde(skip)]
    pub samples: Vec<f64>,
}

/// A key figure a probe adds to a fleet report, and how it is read from
/// one document's records of that probe.
pub(crate) struct FleetFigure {
    pub spec: Spec,
    pub read: fn(&[&Record]) -> Option<Figure>,
}
