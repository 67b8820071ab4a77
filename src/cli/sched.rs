//! `numabench sched`: Erich Focht's numa_test (2002): unbound tasks, a
//! disturbance burst, and where each task spent its time.

use super::output::{FormatArgs, SaveArgs, emit};
use crate::console::{Sink, command_line};
use crate::output::render::{Format, render};
use crate::probes::sched::burst::BurstSpec;
use crate::probes::sched::task::Arrays;
use crate::probes::sched::{self, BurstPlan, Params, records::records};
use crate::results::Document;
use crate::results::names::probe;
use crate::topology::{SysfsRoot, Topology, read_topology};
use anyhow::Result;

const MAX_TASKS: usize = 4096;
const MAX_GROUPS: usize = 1000;

fn whole(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a whole number from {lo} to {hi}")),
    }
}

fn ntasks(s: &str) -> Result<usize, String> {
    whole(s, 1, MAX_TASKS as u64).map(|v| v as usize)
}

fn size(s: &str) -> Result<usize, String> {
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
/// a[ix[i]] += b[i] over their own arrays (written by the task itself, so
/// first touch places them), while a hackbench-like burst disturbs the
/// scheduler; then per task the share of its time on each node, the node it
/// started on (iSched), the node with most of its time (MSched), the node
/// with most of its memory, and the original's totals. With another format
/// than text (--json, --csv, ...) the table goes to stderr.
#[derive(clap::Args, Debug)]
pub struct SchedArgs {
    /// Number of tasks, each a process (1 to 4096).
    #[arg(value_name = "NTASKS", value_parser = ntasks)]
    pub ntasks: usize,
    /// Elements per array; a task holds two f64 arrays and one u32 index
    /// array, 20 bytes per element.
    #[arg(long, value_name = "N", default_value_t = 1_000_000, value_parser = size)]
    pub size: usize,
    /// Passes over the arrays each task makes.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = passes)]
    pub passes: u32,
    /// Milliseconds between two looks at every task's CPU and CPU time
    /// (1 to 1000).
    #[arg(long, value_name = "MS", default_value_t = 10.0, value_parser = interval)]
    pub interval: f64,
    /// Seconds after the start when the burst begins.
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = burst_at)]
    pub burst_at: f64,
    /// Groups in the burst, each 20 senders and 20 receivers (1 to 1000).
    #[arg(long, value_name = "G", default_value_t = 20, value_parser = groups)]
    pub burst_groups: usize,
    /// Run without the burst.
    #[arg(long, conflicts_with_all = ["burst_at", "burst_groups"])]
    pub no_burst: bool,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

impl SchedArgs {
    pub fn params(&self, topo: &Topology) -> Result<Params> {
        crate::memory::admission::admit(
            topo,
            &crate::memory::admission::Footprint {
                bytes: (self.ntasks as u64).saturating_mul(Arrays::bytes(self.size)),
                nodes: None,
                what: format!("{} tasks x --size {}", self.ntasks, self.size),
                remedy: "use fewer tasks or a smaller --size",
            },
        )?;
        Ok(Params {
            tasks: self.ntasks,
            size: self.size,
            passes: self.passes,
            interval: super::units::duration(self.interval / 1e3),
            burst: (!self.no_burst).then(|| BurstPlan {
                at: super::units::duration(self.burst_at),
                spec: BurstSpec::hackbench(self.burst_groups),
            }),
        })
    }
}

pub fn run(args: SchedArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    args.save.check()?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    let p = args.params(&topo)?;
    let mut doc = Document::new(&topo);
    let output = sched::run(&p, &topo)?;
    doc.records = records(&p, &output, &command_line(probe::SCHED));
    // The table first, as numa_test printed it: on stdout, or on stderr
    // beside a document on stdout.
    if format == Format::Text {
        emit(&doc, Format::Text)?;
    } else {
        Sink { to_stderr: true }.put(&render(&doc, Format::Text, crate::probes::VIEWS)?);
    }
    if output.interrupted.is_none() && output.failed.is_none() {
        doc.finish();
    }
    args.save.save(&doc)?;
    if format != Format::Text {
        emit(&doc, format)?;
    }
    end(&args, output.interrupted, output.failed)
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
    fn defaults_are_the_originals() {
        let a = parse(&["4"]).unwrap();
        let p = a.params(&crate::topology::fixture("two-node")).unwrap();
        assert_eq!((p.tasks, p.size, p.passes), (4, 1_000_000, 100));
        assert_eq!(p.interval, Duration::from_millis(10));
        let b = p.burst.unwrap();
        assert_eq!(b.at, Duration::from_secs(3));
        assert_eq!(b.spec, BurstSpec::hackbench(20));
        let p = parse(&["2", "--no-burst", "--interval", "2.5"])
            .unwrap()
            .params(&crate::topology::fixture("two-node"))
            .unwrap();
        assert!(p.burst.is_none());
        assert_eq!(p.interval, Duration::from_micros(2500));
    }

    #[test]
    fn bad_values_name_the_range() {
        for (args, needle) in [
            (&["0"][..], "from 1 to 4096"),
            (&["x"], "'x' is not a whole number"),
            (&["2", "--size", "0"], "from 1 to"),
            (&["2", "--passes", "-1"], "'-1'"),
            (&["2", "--interval", "0"], "from 1 to 1000"),
            (&["2", "--burst-at", "nan"], "'nan' is not a number"),
            (&["2", "--burst-groups", "0"], "from 1 to 1000"),
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
        let e = parse(&["4096", "--size", "4294967296"])
            .unwrap()
            .params(&topo)
            .unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("free"), "{e}");
    }
}
