//! `numabench sched`: Erich Focht's numa_test (2002): unbound tasks, a
//! disturbance burst, and where each task spent its time.

use super::output::{FormatArgs, SaveArgs, emit};
use crate::console::{Sink, command_line};
use crate::output::render::Format;
use crate::probes::sched::burst::BurstSpec;
use crate::probes::sched::plan::{self, Asked};
use crate::probes::sched::{self, BurstPlan, Params, records};
use crate::results::names::probe;
use crate::results::{Document, Record};
use crate::topology::{SysfsRoot, Topology, read_topology};
use anyhow::Result;

const MAX_TASKS: usize = 4096;
const MAX_GROUPS: usize = 1000;
/// hackbench's groups.
const DEFAULT_GROUPS: usize = 20;
/// Most task counts one command line may list.
const MAX_COUNTS: usize = 64;

fn whole(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a whole number from {lo} to {hi}")),
    }
}

/// Task counts: one number, or several separated by commas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts(pub Vec<usize>);

fn ntasks(s: &str) -> Result<Counts, String> {
    let counts = s
        .split(',')
        .map(|one| whole(one, 1, MAX_TASKS as u64).map(|v| v as usize))
        .collect::<Result<Vec<_>, _>>()?;
    if counts.len() > MAX_COUNTS {
        return Err(format!(
            "{} task counts: at most {MAX_COUNTS}",
            counts.len()
        ));
    }
    Ok(Counts(counts))
}

fn elements(s: &str) -> Result<usize, String> {
    whole(s, 1, 1 << 32).map(|v| v as usize)
}

fn passes(s: &str) -> Result<u32, String> {
    whole(s, 1, u64::from(u32::MAX)).map(|v| v as u32)
}

fn groups(s: &str) -> Result<usize, String> {
    whole(s, 1, MAX_GROUPS as u64).map(|v| v as usize)
}

fn interval(s: &str) -> Result<f64, String> {
    super::units::time(s, 1.0, 1000.0, "milliseconds")
}

fn burst_at(s: &str) -> Result<f64, String> {
    super::units::time(s, 0.0, 86_400.0, "seconds")
}

/// Run numa_test: unbound tasks, a disturbance burst, and where each task
/// spent its time.
///
/// NTASKS processes each do the same fixed work, a random update
/// `a[ix[i]] += b[i]` over their own arrays (written by the task itself, so
/// first touch places them), while a hackbench-like burst disturbs the
/// scheduler; then per task the share of its time on each node, the node it
/// started on (iSched), the node with most of its time (MSched), the node
/// with most of its memory, and the original's totals. Several counts
/// (4,8,16) or --series run one after the other and end with the
/// original's table across them. With another format than text (--json,
/// --csv, ...) the tables go to stderr.
#[derive(clap::Args, Debug)]
pub struct SchedArgs {
    /// Number of tasks, each a process (1 to 4096), or several counts
    /// separated by commas (4,8,16).
    #[arg(
        value_name = "NTASKS",
        value_parser = ntasks,
        required_unless_present = "series",
        conflicts_with = "series"
    )]
    pub ntasks: Option<Counts>,
    /// Run the original's series of 4 to 64 tasks.
    ///
    /// The original's series: 4, 8, 16, 32 and 64 tasks, up to 4 per CPU
    /// this process may use and as many as the free memory holds.
    #[arg(long)]
    pub series: bool,
    /// Elements per array (20 bytes each).
    ///
    /// Elements per array; a task holds two f64 arrays and one u32 index
    /// array, 20 bytes per element [default: 4 x the last-level cache per
    /// task, less where the free memory cannot hold that for every task].
    #[arg(long, value_name = "N", value_parser = elements)]
    pub elements: Option<usize>,
    /// Passes over the arrays each task makes.
    ///
    /// Passes over the arrays each task makes [default: as many as keep
    /// the tasks at work for about 3 x the burst time, from one pass timed
    /// before the run].
    #[arg(long, value_name = "N", value_parser = passes)]
    pub passes: Option<u32>,
    /// Milliseconds between two looks at every task's CPU and CPU time
    /// (1 to 1000).
    #[arg(long, value_name = "MS", default_value_t = 10.0, value_parser = interval)]
    pub interval_ms: f64,
    /// Seconds after the start when the burst begins.
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = burst_at)]
    pub burst_at: f64,
    /// Groups in the burst, each 20 senders and 20 receivers (1 to 1000).
    ///
    /// Groups in the burst, each 20 senders and 20 receivers (1 to 1000)
    /// [default: 20, fewer where the memory cannot hold them beside the
    /// tasks].
    #[arg(long, value_name = "G", value_parser = groups)]
    pub burst_groups: Option<usize>,
    /// Connect the burst's senders and receivers by pipes instead of
    /// socket pairs (hackbench -pipe).
    #[arg(long)]
    pub burst_pipe: bool,
    /// Run without the burst.
    #[arg(long, conflicts_with_all = ["burst_at", "burst_groups", "burst_pipe"])]
    pub no_burst: bool,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

impl SchedArgs {
    /// The task counts to run: those given, or the series this machine
    /// holds (and the counts left out, for a note).
    pub fn counts(&self, topo: &Topology) -> Result<(Vec<usize>, Vec<usize>)> {
        if let Some(c) = &self.ntasks {
            return Ok((c.0.clone(), Vec::new()));
        }
        let cpus = topo.allowed.cpus.intersection(&topo.cpus_online).len();
        let (run, left) = plan::series(cpus, &|n| plan::fits(topo, self.elements, n));
        if run.is_empty() {
            return Err(crate::error::usage(format!(
                "--series: not even {} tasks fit in the free memory{}",
                plan::SERIES[0],
                if self.elements.is_some() {
                    "; give fewer --elements"
                } else {
                    ""
                }
            )));
        }
        Ok((run, left))
    }

    pub fn asked(&self) -> Asked {
        let groups = self.burst_groups.unwrap_or(DEFAULT_GROUPS);
        let spec = if self.burst_pipe {
            BurstSpec::hackbench_pipe(groups)
        } else {
            BurstSpec::hackbench(groups)
        };
        Asked {
            size: self.elements,
            passes: self.passes,
            interval: super::units::duration(self.interval_ms / 1e3),
            burst: (!self.no_burst).then(|| BurstPlan {
                at: super::units::duration(self.burst_at),
                spec,
            }),
            burst_groups_given: self.burst_groups.is_some(),
            burst_at: super::units::duration(self.burst_at),
        }
    }

    /// One run's parameters per task count.
    pub fn params(&self, topo: &Topology, counts: &[usize]) -> Result<Vec<Params>> {
        plan::params(topo, &self.asked(), counts)
    }
}

pub(super) fn run(args: SchedArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    args.save.check()?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    let (counts, left_out) = args.counts(&topo)?;
    let all = args.params(&topo, &counts)?;
    let series = args.series || all.len() > 1;
    let mut doc = Document::new(&topo);
    let sink = Sink {
        to_stderr: format != Format::Text,
    };
    let (mut interrupted, mut failed) = (None, None);
    for p in &all {
        let output = sched::run(p, &topo)?;
        let recs = records::records(
            p,
            &output,
            &command_line(probe::SCHED),
            series.then_some(&left_out[..]),
        );
        // Each run's table as it ends, as numa_test printed it: on stdout,
        // or on stderr beside a document on stdout.
        let refs: Vec<&Record> = recs.iter().collect();
        sink.put(&sched::view::run_text(&refs));
        doc.records.extend(recs);
        (interrupted, failed) = (output.interrupted, output.failed);
        if interrupted.is_some() || failed.is_some() {
            break;
        }
    }
    if series {
        let refs: Vec<&Record> = doc.records.iter().collect();
        sink.put(&sched::view::series_text(&refs));
    }
    if interrupted.is_none() && failed.is_none() {
        doc.finish();
    }
    args.save.save(&doc)?;
    if format != Format::Text {
        emit(&doc, format)?;
    }
    end(&args, interrupted, failed)
}

/// After a stop signal, exit 128 + its number; after a failure, exit 1
/// once what was measured is kept.
fn end(args: &SchedArgs, interrupted: Option<i32>, failed: Option<String>) -> Result<()> {
    if let Some(sig) = interrupted {
        super::exit_interrupted(sig);
    }
    match failed {
        Some(why) if args.save.save.is_some() => Err(anyhow::anyhow!(
            "{why}; what was measured before is saved, marked incomplete"
        )),
        Some(why) => Err(anyhow::anyhow!("{why}")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::time::Duration;

    #[derive(Parser, Debug)]
    struct T {
        #[command(flatten)]
        a: SchedArgs,
    }

    fn parse(args: &[&str]) -> Result<SchedArgs, String> {
        let mut v = vec!["sched"];
        v.extend_from_slice(args);
        T::try_parse_from(v).map(|t| t.a).map_err(|e| e.to_string())
    }

    #[test]
    fn given_values_are_kept_and_open_ones_chosen() {
        let topo = crate::topology::fixture("two-node");
        let a = parse(&["4", "--elements", "1000", "--passes", "5"]).unwrap();
        let (counts, left) = a.counts(&topo).unwrap();
        assert_eq!((counts, left), (vec![4], vec![]));
        let p = &a.params(&topo, &[4]).unwrap()[0];
        assert_eq!((p.tasks, p.size, p.passes), (4, 1000, 5));
        assert_eq!(p.interval, Duration::from_millis(10));
        let b = p.burst.unwrap();
        assert_eq!(b.at, Duration::from_secs(3));
        assert_eq!(b.spec, BurstSpec::hackbench(20));
        let a = parse(&[
            "2",
            "--no-burst",
            "--interval-ms",
            "2.5",
            "--elements",
            "10",
        ])
        .unwrap();
        let p = &a.params(&topo, &[2]).unwrap()[0];
        assert!(p.burst.is_none());
        assert_eq!(p.interval, Duration::from_micros(2500));
        // Open passes were chosen: 3 x the burst time.
        assert_eq!(p.chosen.target_s, Some(9.0));
        let a = parse(&["2", "--burst-pipe", "--elements", "10", "--passes", "1"]).unwrap();
        let p = &a.params(&topo, &[2]).unwrap()[0];
        assert_eq!(p.burst.unwrap().spec, BurstSpec::hackbench_pipe(20));
    }

    #[test]
    fn counts_are_a_list_or_the_series() {
        let topo = crate::topology::fixture("two-node");
        let a = parse(&["4,8,2"]).unwrap();
        assert_eq!(a.counts(&topo).unwrap().0, vec![4, 8, 2]);
        let a = parse(&["--series", "--elements", "1000"]).unwrap();
        let cpus = topo.allowed.cpus.intersection(&topo.cpus_online).len();
        let (run, left) = a.counts(&topo).unwrap();
        assert!(run.iter().all(|&n| n <= (4 * cpus).max(4)), "{run:?}");
        assert_eq!(run.len() + left.len(), 5);
        assert_eq!(run[0], 4);
        let e = parse(&["--series", "--elements", "4294967296"])
            .unwrap()
            .counts(&topo)
            .unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
    }

    #[test]
    fn bad_values_name_the_range() {
        for (args, needle) in [
            (&["0"][..], "from 1 to 4096"),
            (&["x"], "'x' is not a whole number"),
            (&["2", "--elements", "0"], "from 1 to"),
            (&["2", "--passes", "-1"], "'-1'"),
            (&["2", "--interval-ms", "0"], "from 1 to 1000"),
            (&["2", "--burst-at", "nan"], "'nan' is not a number"),
            (&["2", "--burst-groups", "0"], "from 1 to 1000"),
            (&["4,x"], "'x' is not a whole number"),
            (&["4", "--series"], "cannot be used with"),
            (&["2", "--no-burst", "--burst-pipe"], "cannot be used with"),
            (
                &["2", "--no-burst", "--burst-at", "1"],
                "cannot be used with",
            ),
        ] {
            let e = parse(args).unwrap_err();
            assert!(e.contains(needle), "{args:?}: {e}");
        }
    }

    #[test]
    fn more_memory_than_free_is_bad_input() {
        let topo = crate::topology::fixture("two-node");
        assert!(crate::memory::admission::free_bytes(&topo, None).is_some());
        let e = parse(&["4096", "--elements", "4294967296"])
            .unwrap()
            .params(&topo, &[4096])
            .unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("free"), "{e}");
    }
}
