//! `numabench peak`: peak injection bandwidth of every read/write mix with
//! both store kinds, from each CPU node to local, remote and interleaved
//! memory, one thread and all threads; the best mix named per target.

use super::args::{HugeArgs, LimitArgs, NodeArgs, SizeArgs, TriesArgs, VerboseArgs, check_nodes};
use super::output::finish_probe;
use crate::error::usage;
use crate::kernels::{Mix, Store};
use crate::output::render::Format;
use crate::probes::measure::Timing;
use crate::probes::peak::{self, PeakConfig, ThreadCount};
use crate::results::Document;
use crate::results::names::probe;

use anyhow::Result;
use std::time::Duration;

/// Measure peak injection bandwidth of each CPU node, per read/write mix.
///
/// Measure peak injection bandwidth: all cores of a CPU node running one
/// read/write mix (read, 3:1, 2:1, 1:1, write, triad) with regular and
/// non-temporal stores against local, each remote, and interleaved memory;
/// one thread and all threads; the best mix and store kind named per
/// target.
///
/// Memory admitted, bound and verified as in `matrix`.
///
/// A measurement's working set (--size) is 4x the L3 of the CPU node
/// unless given, at least 64 MiB, at most half the target's free memory;
/// memory interleaved is interleaved over the --mem-nodes.
#[derive(clap::Args, Debug)]
pub struct PeakArgs {
    /// Read/write mixes, comma-separated [default: all six].
    ///
    /// Mixes, comma-separated: read (all reads), 3:1, 2:1, 1:1 (reads to
    /// writes: three, two or one read stream per write stream), write
    /// (all writes), triad (STREAM a = b + q*c) [default: all six].
    #[arg(long, value_name = "LIST")]
    pub mix: Option<String>,
    /// Store kinds, comma-separated: regular, nt (non-temporal)
    /// [default: both].
    #[arg(long, value_name = "LIST")]
    pub store: Option<String>,
    /// Thread counts, comma-separated: a number or all.
    ///
    /// Thread counts, comma-separated: a number, or all (every allowed core
    /// of the CPU node); a count above a node's cores is all of them.
    #[arg(long, value_name = "LIST", default_value = "1,all")]
    pub threads: String,
    #[command(flatten)]
    pub size: SizeArgs,
    #[command(flatten)]
    pub tries: TriesArgs,
    /// Shortest timed run, in milliseconds; repetitions are scaled to
    /// reach it (1 to 60000).
    #[arg(long, value_name = "MS", default_value_t = 40)]
    pub min_run_ms: u64,
    #[command(flatten)]
    pub limit: LimitArgs,
    #[command(flatten)]
    pub huge: HugeArgs,
    /// Leave out memory interleaved over all allowed nodes.
    ///
    /// Leave out memory interleaved over all allowed nodes (measured by
    /// default where there are two or more).
    #[arg(long)]
    pub no_interleave: bool,
    #[command(flatten)]
    pub nodes: NodeArgs,
    #[command(flatten)]
    pub format: super::output::FormatArgs,
    #[command(flatten)]
    pub save: super::output::SaveArgs,
    #[command(flatten)]
    pub verbose: VerboseArgs,
    #[command(flatten)]
    pub planning: super::args::PlanArgs,
    #[command(flatten)]
    pub sampling: super::args::PairSamplingArgs,
}

/// A comma-separated list, each item parsed, duplicates dropped, none
/// empty.
fn list<T: PartialEq>(
    text: &str,
    flag: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        let v = parse(item).map_err(|e| usage(format!("{flag} {text}: {e}")))?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// A list of mixes (`read,3:1,...`).
pub(crate) fn mixes(text: &str, flag: &str) -> Result<Vec<Mix>> {
    list(text, flag, |s| s.parse::<Mix>().map_err(|e| e.to_string()))
}

fn threads(text: &str) -> Result<Vec<ThreadCount>> {
    list(text, "--threads", |s| match s {
        "all" => Ok(ThreadCount::All),
        _ => match s.parse::<usize>() {
            Ok(n) if n > 0 => Ok(ThreadCount::Some(n)),
            _ => Err(format!(
                "'{s}' is not a thread count (give a number from 1, or all, e.g. 1,all)"
            )),
        },
    })
}

fn config(args: &PeakArgs) -> Result<PeakConfig> {
    super::units::tries(args.tries.tries, "--tries", "timed run")?;
    if !(1..=60_000).contains(&args.min_run_ms) {
        return Err(usage(format!(
            "--min-run-ms {}: give 1 to 60000 milliseconds",
            args.min_run_ms
        )));
    }
    let mixes = match &args.mix {
        Some(t) => mixes(t, "--mix")?,
        None => Mix::ALL.to_vec(),
    };
    let stores = match &args.store {
        Some(t) => list(t, "--store", |s| {
            s.parse::<Store>().map_err(|e| e.to_string())
        })?,
        None => vec![Store::Regular, Store::NonTemporal],
    };
    let working_set = args.size.at_least(1 << 20)?;
    Ok(PeakConfig {
        selection: args.sampling.selection(),
        mixes,
        stores,
        threads: threads(&args.threads)?,
        working_set,
        timing: Timing {
            tries: args.tries.tries,
            min_run: Duration::from_millis(args.min_run_ms),
        },
        huge: args.huge.huge,
        interleave: !args.no_interleave,
        time_limit: args.limit.limit(),
        cpu_nodes: args.nodes.cpu()?,
        mem_nodes: args.nodes.mem()?,
    })
}

pub(crate) fn run(args: PeakArgs) -> Result<()> {
    let topo = args.planning.topology()?;
    let cfg = config(&args)?;
    check_nodes(&topo, &cfg.cpu_nodes, &cfg.mem_nodes)?;
    if args.planning.print(
        crate::results::names::probe::PEAK,
        &topo,
        &peak::estimate(&topo, &cfg),
    ) {
        return Ok(());
    }
    args.save.check()?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    let mut doc = Document::new(&topo);
    let progress = crate::progress::Progress::new(args.verbose.verbose);
    let mut step = |what: &str| progress.step(what);
    let result = peak::run(&topo, &cfg, &mut step);
    drop(progress);
    let measured = result?;
    let interrupted = crate::interrupt::requested();
    if measured.runs.is_empty() && interrupted.is_none() {
        return Err(usage(format!(
            "nothing was measured: {}; give a longer --time-limit",
            measured.notes.join("; ")
        )));
    }
    let cut_short = measured.conditions.iter().any(|c| c.is_time_limit());
    doc.records = measured.records();
    finish_probe(
        &mut doc,
        probe::PEAK,
        format,
        &args.save,
        measured.failed.as_deref(),
        !cut_short,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_refuse_what_is_not_a_mix_store_or_count() {
        let t = threads("all,1,all,4").unwrap();
        assert_eq!(
            t,
            [ThreadCount::All, ThreadCount::Some(1), ThreadCount::Some(4)]
        );
        for bad in ["0", "two", ""] {
            let e = threads(bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
            assert!(e.to_string().contains("is not a thread count"), "{e}");
        }
        let mixes = list("3:1,read,3:1", "--mix", |s| {
            s.parse::<Mix>().map_err(|e| e.to_string())
        })
        .unwrap();
        assert_eq!(mixes, [Mix::R3W1, Mix::Read]);
        let e = list("4:1", "--mix", |s| {
            s.parse::<Mix>().map_err(|e| e.to_string())
        })
        .unwrap_err();
        assert!(
            e.to_string().starts_with("--mix 4:1: unknown mix '4:1'"),
            "{e}"
        );
    }
}
