//! A whole `numabench autonuma` command: every test planned first (so a bad
//! size is refused before any work), then each run in turn, its record
//! added to the document and its text given out as it comes.

use super::bench::{self, Asked, Plan, Test};
use super::facts::{Header, Run};
use super::records;
use super::watch::Look;
use super::{Outcome, Settings, text, view};
use crate::probes::mem::tasks::cpu0_target;
use crate::progress::Progress;
use crate::results::{Document, Record};
use crate::topology::Topology;
use crate::view::Chart;
use anyhow::{Context, Result, anyhow};

/// The tests to run, sized for this machine.
pub struct Job {
    pub plans: Vec<Plan>,
    pub header: Header,
    pub runs: usize,
    pub settings: Settings,
}

/// What a run leaves beside the document (`--out`): its chart and its
/// looks as CSV, under a file name stem.
pub struct RunFiles {
    pub stem: String,
    pub chart: Option<Chart>,
    pub csv: String,
}

/// The document of a command and how it ended.
pub struct Ended {
    pub doc: Document,
    pub interrupted: Option<i32>,
    pub failed: Option<String>,
}

impl Job {
    /// Plans `tests` for the CPUs and start node this process may use.
    pub fn new(
        topo: &Topology,
        tests: &[Test],
        asked: &Asked,
        runs: usize,
        settings: Settings,
    ) -> Result<Job> {
        let nr_cpus = topo.allowed.cpus.intersection(&topo.cpus_online).len();
        let (_, start_node) =
            cpu0_target(topo).ok_or_else(|| anyhow!("this process may use no CPU of any node"))?;
        let free = topo.node_free_bytes(start_node);
        let plans = tests
            .iter()
            .map(|&t| bench::plan(t, nr_cpus, start_node, free, asked))
            .collect::<Result<_>>()?;
        Ok(Job {
            plans,
            header: Header::live(topo, nr_cpus, start_node, &settings),
            runs,
            settings,
        })
    }

    /// Runs every test `runs` times, or until a run is cut short. `live`
    /// gets the text as it comes (what the view prints for the finished
    /// document), `on_run` each run's files.
    pub fn run(
        &self,
        topo: &Topology,
        live: &mut dyn FnMut(&str),
        on_run: &mut dyn FnMut(&RunFiles) -> Result<()>,
    ) -> Result<Ended> {
        live(&text::header(&self.header));
        let mut ended = Ended {
            doc: Document::new(topo),
            interrupted: None,
            failed: None,
        };
        let mut tests: Vec<(String, Vec<Run>)> = Vec::new();
        for plan in &self.plans {
            live(&text::intro(plan));
            let (records, outcomes) = self.test(plan, topo, &mut ended, on_run)?;
            let runs: Vec<Run> = records.iter().map(Run::of).collect();
            live(&text::runs_text(plan, &runs));
            ended.doc.records.extend(records);
            tests.push((plan.test.name().to_string(), runs));
            if ended.interrupted.is_some() || ended.failed.is_some() {
                break;
            }
            ended
                .doc
                .records
                .push(records::summary_record(plan, &outcomes));
        }
        if text::wants_summary(&tests) {
            live(&text::summary(&tests));
        }
        Ok(ended)
    }

    /// The runs of one test, up to the first one cut short.
    fn test(
        &self,
        plan: &Plan,
        topo: &Topology,
        ended: &mut Ended,
        on_run: &mut dyn FnMut(&RunFiles) -> Result<()>,
    ) -> Result<(Vec<Record>, Vec<Outcome>)> {
        let mut records = Vec::new();
        let mut outcomes = Vec::new();
        for run in 1..=self.runs {
            let o = self
                .one(plan, run, topo)
                .with_context(|| format!("{} run {run}", plan.test.name()))?;
            let r = records::record(plan, run, &o, &self.settings);
            on_run(&RunFiles {
                stem: records::file_stem(plan.test, run),
                chart: view::memory_chart(&r),
                csv: records::looks_csv(&o),
            })?;
            records.push(r);
            let cut = o.interrupted.is_some() || o.failed.is_some();
            if cut {
                ended.interrupted = o.interrupted;
                ended.failed = o.failed.clone();
            }
            outcomes.push(o);
            if cut {
                break;
            }
        }
        Ok((records, outcomes))
    }

    /// One run, with where its memory is now on a terminal's stderr.
    fn one(&self, plan: &Plan, run: usize, topo: &Topology) -> Result<Outcome> {
        // No ticker thread: the workload forks, which needs one thread.
        let progress = Progress::unticked();
        let mut on_look = |l: &Look| progress.step(&look_line(plan.test, run, self.runs, l));
        super::run(plan, topo, &self.settings, &mut on_look)
    }
}

/// Where the memory is at a look, for the progress display.
fn look_line(test: Test, run: usize, runs: usize, look: &Look) -> String {
    let mem: Vec<String> = look
        .mem
        .iter()
        .map(|(n, b)| format!("node {n} {} MiB", b >> 20))
        .collect();
    format!(
        "{} run {run}/{runs}: {:.1} s, {}",
        test.name(),
        look.t,
        mem.join(", ")
    )
}
