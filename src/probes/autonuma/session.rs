//! A whole `numabench autonuma` command: every test planned first (so a bad
//! size is refused before any work), then each run in turn, its record
//! added to the document and its text given out as it comes.

use super::bench::{self, Asked, Plan, Test};
use super::bind::{self, Bind};
use super::facts::{Header, Run};
use super::records;
use super::{Outcome, Settings, text, view};
use crate::probes::workload::tasks::cpu0_target;
use crate::probes::workload::watch::Look;
use crate::progress::Progress;
use crate::results::{Document, Record};
use crate::topology::Topology;
use crate::view::Chart;
use anyhow::{Context, Result, anyhow};

/// The tests to run, sized for this machine.
pub(crate) struct Job {
    pub plans: Vec<Plan>,
    pub header: Header,
    pub runs: usize,
    pub settings: Settings,
}

/// What a run leaves beside the document (`--out`): its chart and its
/// looks as CSV, under a file name stem.
pub(crate) struct RunFiles {
    pub stem: String,
    pub chart: Option<Chart>,
    pub csv: String,
}

/// The document of a command and how it ended.
pub(crate) struct Ended {
    pub doc: Document,
    pub interrupted: Option<i32>,
    pub failed: Option<String>,
}

/// The note of a test without baselines on a machine where they would be
/// the same placement.
pub(crate) const ONE_NODE_NOTE: &str = "no HARD_BIND / INVERSE_BIND baselines: one node with memory, so the threads' own node and the farthest node are the same and the two would measure the same placement; the result has no position between best and worst";

/// Each test's baselines first (where asked and meaningful), then the test.
fn with_baselines(topo: &Topology, plan: Plan, baselines: bool) -> Result<Vec<Plan>> {
    if !baselines {
        return Ok(vec![plan]);
    }
    if !bind::meaningful(topo) {
        let mut plan = plan;
        plan.notes.push(ONE_NODE_NOTE.into());
        return Ok(vec![plan]);
    }
    let mut out = Vec::new();
    for b in Bind::BASELINES {
        let placed = bind::placement(topo, b, &plan.shape);
        admit_bound(topo, &plan, &placed)?;
        out.push(plan.baseline(b, bind::describe(topo, b, &plan.shape)));
    }
    out.push(plan);
    Ok(out)
}

/// Refuses a baseline whose bound memory a node cannot hold (exit 2).
fn admit_bound(topo: &Topology, plan: &Plan, placed: &[(crate::ids::CpuSet, usize)]) -> Result<()> {
    let s = &plan.shape;
    let mut per_node = std::collections::BTreeMap::<usize, u64>::new();
    for (t, (_, node)) in placed.iter().enumerate() {
        // A process's memory goes with its first thread; a thread's own part with it.
        let bytes = if s.per_thread {
            s.bytes_per_thread_pass()
        } else if t % s.threads.max(1) == 0 {
            s.mem_bytes
        } else {
            0
        };
        *per_node.entry(*node).or_default() += bytes;
    }
    for (node, bytes) in per_node {
        crate::memory::admission::admit(
            topo,
            &crate::memory::admission::Footprint {
                bytes,
                nodes: Some(&[node]),
                what: format!("{}'s baselines", plan.test.name()),
                remedy: "give a smaller --mem or --no-baselines",
            },
        )?;
    }
    Ok(())
}

impl Job {
    /// Plans `tests` for the CPUs and start node this process may use,
    /// each after its baselines where `baselines`.
    pub(crate) fn new(
        topo: &Topology,
        tests: &[Test],
        asked: &Asked,
        runs: usize,
        settings: Settings,
        baselines: bool,
    ) -> Result<Job> {
        let nr_cpus = topo.allowed.cpus.intersection(&topo.cpus_online).len();
        let nr_nodes = topo.usable_cpu_nodes().len();
        let (_, start_node) =
            cpu0_target(topo).ok_or_else(|| anyhow!("this process may use no CPU of any node"))?;
        let start = bench::Start::of(topo, start_node);
        let mut plans = Vec::new();
        for &t in tests {
            let plan = bench::plan(t, nr_cpus, nr_nodes, &start, asked)?;
            plans.extend(with_baselines(topo, plan, baselines)?);
        }
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
    pub(crate) fn run(
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
            tests.push((plan.label(), runs));
            if let Some(line) = text::position_line(&plan.label(), &tests) {
                live(&line);
            }
            if ended.interrupted.is_some() || ended.failed.is_some() {
                break;
            }
            let position = text::position_of(&plan.label(), &tests).flatten();
            ended
                .doc
                .records
                .push(records::summary_record(plan, &outcomes, position.as_ref()));
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
                .with_context(|| format!("{} run {run}", plan.label()))?;
            let r = records::record(plan, run, &o, &self.settings);
            on_run(&RunFiles {
                stem: records::file_stem(plan, run),
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
        let mut on_look = |l: &Look| progress.step(&look_line(plan, run, self.runs, l));
        super::run(plan, topo, &self.settings, &mut on_look)
    }
}

/// Where the memory is at a look, for the progress display.
fn look_line(plan: &Plan, run: usize, runs: usize, look: &Look) -> String {
    let mem: Vec<String> = look
        .mem
        .iter()
        .map(|(n, b)| format!("node {n} {} MiB", b >> 20))
        .collect();
    format!(
        "{} run {run}/{runs}: {:.1} s, {}",
        plan.label(),
        look.t,
        mem.join(", ")
    )
}
