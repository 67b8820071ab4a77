//! `numabench sweep`: bandwidth and latency across cache-aware buffer sizes,
//! option-compatible with sc-membench where the options overlap.

use super::args::{ChaseArgs, HugeArgs, KernelVariantArgs, LimitArgs, TriesArgs, VerboseArgs};
use super::omp::OmpEnv;
use super::output::{FormatArgs, SaveArgs, emit_or_stop};
use super::units::parse_size;
use crate::error::usage;
use crate::kernels::KernelSpec;
use crate::output::render::Format;
use crate::probes::sweep::{self, SweepConfig, SweepOp, records};
use crate::results::Document;
use crate::results::names::probe;
use crate::topology::{SysfsRoot, read_topology};
use anyhow::Result;
use std::time::Duration;

/// Measure bandwidth and latency at buffer sizes around the cache sizes.
///
/// Measure read/write/copy/triad bandwidth and pointer-chase latency at
/// buffer sizes around the real cache sizes (L1/2 ... 4xL3), one buffer per
/// thread bound to the thread's own node and verified.
///
/// Each thread may use half the free memory of its node. A size given with
/// -s that does not fit is refused before anything is measured (exit 2).
/// A cache-aware size that does not fit, or one the time limit (-t) cut
/// off, is not measured: a note says so in every format (a "note:" line in
/// the table, a "# note:" line after the CSV rows, the records' notes in
/// JSON) and the results document is marked "complete": false.
///
/// Latency buffers stop at 2 GiB or a quarter of the RAM, as sc-membench's:
/// a larger size's latency is measured once at that cap, with a note.
///
/// Environment, as sc-membench documents it for its bandwidth threads:
/// OMP_NUM_THREADS=N is the thread count when --threads is not given;
/// OMP_PROC_BIND=spread|close and OMP_PLACES=threads|cores|sockets place
/// them by OpenMP's rules (places in CPU-number order; close fills places
/// from the first, spread spaces the threads evenly over them; places
/// default to cores, the policy to spread). Unset, threads go round robin
/// over the nodes, one per core before SMT siblings. Other values are
/// refused (exit 2); the latency chase is always one thread.
///
/// Huge pages (-H) serve buffers of 4 MiB and more; a forced kernel
/// (--kernel-variant) has its operation measured, and with --op, --op
/// must name it.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// Operation to measure; repeat for several.
    ///
    /// Operation: read, write, copy, scale, add, triad, add3 or latency; repeat for
    /// several [default: read, write, copy, triad, latency]
    #[arg(long = "op", value_name = "OP")]
    pub ops: Vec<String>,
    /// Measure only this per-thread buffer size, with a unit, e.g. 64K or 2M.
    ///
    /// Whole KiB, at least 4K; repeatable; not with -f. A bare number is
    /// refused, as in every command's -s: where sc-membench's -s 1024
    /// meant KiB, write -s 1024K (or --buffer-kib 1024).
    #[arg(short = 's', long = "size", value_name = "SIZE", value_parser = super::units::size_with_unit)]
    pub size: Vec<String>,
    /// Measure only this per-thread buffer size in KiB, as sc-membench's -s.
    ///
    /// A plain number is KiB (--buffer-kib 1024 is 1 MiB), units work too;
    /// whole KiB, at least 4; repeatable; not with -f.
    #[arg(long = "buffer-kib", value_name = "SIZE_KB")]
    pub sizes: Vec<String>,
    /// Bandwidth threads [default: every CPU this process may use].
    #[arg(long = "threads", value_name = "THREADS")]
    pub threads: Option<usize>,
    /// Try 1, 2, 4, ... threads up to --threads and report the best.
    ///
    /// Without --threads, up to every CPU this process may use.
    #[arg(short = 'a', long = "auto-threads")]
    pub auto_threads: bool,
    #[command(flatten)]
    pub huge: HugeArgs,
    #[command(flatten)]
    pub chase: ChaseArgs,
    #[command(flatten)]
    pub limit: LimitArgs,
    #[command(flatten)]
    pub tries: TriesArgs,
    /// Continue past 4xL3 up to half the free memory (not with -s).
    #[arg(short = 'f', long = "full")]
    pub full: bool,
    #[command(flatten)]
    pub variants: KernelVariantArgs,
    /// List the kernels and which this CPU can run, then exit (alone).
    #[arg(long, exclusive = true)]
    pub list_kernels: bool,
    /// Human-readable table with summary and scores.
    ///
    /// Human-readable table with summary and scores (the default on a
    /// terminal; off one, as with sc-membench, CSV is).
    #[arg(
        short = 'R',
        long = "table",
        conflicts_with_all = ["format", "json", "csv", "markdown", "latex", "html"]
    )]
    pub table: bool,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
    #[command(flatten)]
    pub verbose: VerboseArgs,
}

/// The smallest per-thread buffer: one base page.
const MIN_SIZE: usize = 4096;

/// A per-thread size for `--buffer-kib` (plain numbers are KiB, as
/// sc-membench's -s) or `-s` (a unit is required before this is reached).
/// Rows report KiB and the smallest buffer is one page, so only whole KiB
/// from 4 KiB up can be measured as asked.
fn sweep_size(text: &str, flag: &str) -> Result<usize> {
    let t = text.trim();
    let plain = !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.');
    let accepted =
        "sizes are whole KiB from 4K up, e.g. -s 64K, -s 2M (--buffer-kib 1024 is 1 MiB)";
    let bytes = if plain {
        parse_size(&format!("{t}K"))
    } else {
        parse_size(t)
    }
    .map_err(|_| usage(format!("{flag} {text}: not a size; {accepted}")))?;
    if bytes % 1024 != 0 {
        return Err(usage(format!(
            "{flag} {text}: {bytes} bytes is not a whole number of KiB; {accepted}"
        )));
    }
    if bytes < MIN_SIZE {
        return Err(usage(format!(
            "{flag} {text}: {} KiB is below the smallest buffer, one 4 KiB page; {accepted}",
            bytes / 1024
        )));
    }
    Ok(bytes)
}

/// Forced kernels: each one that exists and runs here, at most one per
/// operation.
fn forced_kernels(names: &[String]) -> Result<Vec<&'static KernelSpec>> {
    let mut variants: Vec<&'static KernelSpec> = Vec::new();
    for name in names {
        let k = super::select::kernel(name, "--kernel-variant", |k, a| a.op == k.op)?;
        if let Some(other) = variants.iter().find(|v| v.op == k.op) {
            if other.name == k.name {
                continue;
            }
            return Err(usage(format!(
                "--kernel-variant {} and --kernel-variant {name} are both {} kernels: give one per operation",
                other.name, k.op
            )));
        }
        variants.push(k);
    }
    Ok(variants)
}

fn config(
    args: &SweepArgs,
    env: &OmpEnv,
    max_threads: usize,
    allowed: &str,
) -> Result<SweepConfig> {
    let variants = forced_kernels(&args.variants.kernel_variant)?;
    let ops = ops(args, &variants)?;
    let sizes = sizes(args, &ops)?;
    check_threads(args, &ops, max_threads, allowed)?;
    if let (None, Some(n)) = (args.threads, env.threads)
        && n > max_threads
    {
        return Err(usage(format!(
            "OMP_NUM_THREADS={n}: use 1 to {max_threads} threads (CPUs this process may use: {allowed})"
        )));
    }
    super::units::tries(args.tries.tries, "-r", "try")?;
    Ok(SweepConfig {
        ops,
        sizes,
        full: args.full,
        threads: args.threads.or(env.threads),
        auto_threads: args.auto_threads,
        huge: args.huge.huge,
        time_limit: args.limit.limit(),
        tries: args.tries.tries,
        variants,
        min_run: Duration::from_millis(40),
        placing: env.placing,
        pattern: args.chase.one(64)?,
    })
}

/// The operations: `--op`, else the forced kernels' operations, else the
/// defaults; each forced kernel's operation among them.
fn ops(args: &SweepArgs, variants: &[&'static KernelSpec]) -> Result<Vec<SweepOp>> {
    let mut ops = Vec::new();
    for o in &args.ops {
        ops.push(SweepOp::parse(o).map_err(|e| usage(format!("--op {e}")))?);
    }
    if ops.is_empty() {
        ops = if variants.is_empty() {
            SweepOp::defaults()
        } else {
            variants.iter().map(|k| SweepOp::bandwidth(k.op)).collect()
        };
    }
    // A forced kernel whose operation is not measured would be ignored.
    if let Some(k) = variants
        .iter()
        .find(|k| !ops.contains(&SweepOp::bandwidth(k.op)))
    {
        return Err(usage(format!(
            "--kernel-variant {}: a {} kernel, but --op does not measure {}: add --op {}, or leave out --op to measure the forced kernels' operations",
            k.name, k.op, k.op, k.op
        )));
    }
    Ok(ops)
}

/// The sizes given with `-s` or `--buffer-kib` (`None`: the cache-aware set), refused with
/// `-f`, or with `-H` where all are too small for huge pages.
fn sizes(args: &SweepArgs, ops: &[SweepOp]) -> Result<Option<Vec<usize>>> {
    let given: Vec<(&str, &String)> = args
        .size
        .iter()
        .map(|s| ("-s", s))
        .chain(args.sizes.iter().map(|s| ("--buffer-kib", s)))
        .collect();
    if given.is_empty() {
        return Ok(None);
    }
    let shown = given
        .iter()
        .map(|(flag, s)| format!("{flag} {s}"))
        .collect::<Vec<_>>()
        .join(" ");
    if args.full {
        return Err(usage(format!(
            "-f and {shown}: -f continues the cache-aware sizes up to half the free memory, -s measures only the sizes given; give one of them"
        )));
    }
    let mut sizes = Vec::new();
    for (flag, s) in &given {
        sizes.push(sweep_size(s, flag)?);
    }
    // Huge pages start at 4 MiB of arrays per thread; below that -H
    // would change nothing.
    let arrays = |o: &SweepOp| o.op().map_or(1, |op| op.arrays());
    let widest = ops.iter().map(arrays).max().unwrap_or(1);
    if args.huge.huge
        && sizes
            .iter()
            .all(|s| s.saturating_mul(widest) < sweep::HUGE_FROM)
    {
        return Err(usage(format!(
            "-H with {shown}: huge pages are used for a thread's arrays of 4 MiB and more, and these are smaller; leave -H out, or add a larger -s such as 4M"
        )));
    }
    Ok(Some(sizes))
}

/// `--threads` and `-a`: a thread count this process may use, and only where a
/// bandwidth operation and more than one thread give them a meaning.
fn check_threads(
    args: &SweepArgs,
    ops: &[SweepOp],
    max_threads: usize,
    allowed: &str,
) -> Result<()> {
    if let Some(p) = args.threads
        && (p == 0 || p > max_threads)
    {
        return Err(usage(format!(
            "--threads {p}: use 1 to {max_threads} threads (CPUs this process may use: {allowed})"
        )));
    }
    if ops.iter().all(|o| *o == SweepOp::Latency) && (args.auto_threads || args.threads.is_some()) {
        return Err(usage(format!(
            "{}: --op latency alone measures with one thread; --threads and -a set the bandwidth threads: leave them out, or add a bandwidth operation such as --op read",
            match args.threads {
                Some(p) if !args.auto_threads => format!("--threads {p}"),
                _ => "-a".to_string(),
            }
        )));
    }
    if args.auto_threads && args.threads == Some(1) {
        return Err(usage(
            "-a with --threads 1: -a tries 1, 2, 4, ... threads up to --threads (default: every usable CPU), so with one thread there is nothing to try; drop -a or raise --threads",
        ));
    }
    Ok(())
}

/// Why scores from this run may not compare with a default run.
fn comparability_warnings(args: &SweepArgs, env: &OmpEnv, max_threads: usize) -> Vec<String> {
    let mut w = Vec::new();
    if !env.given.is_empty() {
        w.push(format!(
            "bandwidth threads as {} asks instead of one per CPU round robin over the nodes",
            env.given.join(", ")
        ));
    }
    if args.limit.time_limit > 0.0 {
        w.push(format!(
            "time limit (-t {}) may have prevented testing larger buffer sizes",
            args.limit.time_limit
        ));
    }
    if let Some(p) = args.threads {
        w.push(format!(
            "fixed thread count (--threads {p}) instead of using all CPUs ({max_threads})"
        ));
    }
    if !args.sizes.is_empty() || !args.size.is_empty() {
        w.push(format!(
            "only the size(s) given with -s ({}) were tested",
            args.size
                .iter()
                .cloned()
                .chain(args.sizes.iter().map(|k| format!("{k} KiB")))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    w
}

pub(crate) fn run(args: SweepArgs) -> Result<()> {
    if args.list_kernels {
        crate::console::out(&sweep::view::kernel_table());
        return Ok(());
    }
    let topo = read_topology(&SysfsRoot::live())?;
    let max = crate::probes::seats::max_threads(&topo);
    let env = super::omp::read(&|k: &str| std::env::var(k).ok())?;
    let cfg = config(&args, &env, max, &topo.allowed.cpus.to_list())?;
    args.save.check()?;
    let format = if args.table {
        Format::Text
    } else {
        args.format.or_default(Format::Csv)
    };
    sweep::check_given_sizes(&topo, &cfg).map_err(usage)?;
    let mut doc = Document::new(&topo);
    let sweep::Swept {
        rows,
        notes,
        conditions,
        failed,
    } = {
        let progress = crate::progress::Progress::new(args.verbose.verbose);
        sweep::run(&topo, &cfg, &mut |what| progress.step(what))?
    };
    let interrupted = crate::interrupt::requested();
    if rows.is_empty() && !notes.is_empty() && interrupted.is_none() {
        // Nothing to attach the notes to, and nothing measured.
        return Err(usage(format!("nothing was measured: {}", notes.join("; "))));
    }
    doc.records = records::records(&rows, &notes, &conditions);
    match (interrupted, &failed) {
        (Some(sig), _) => super::mark_interrupted(&mut doc, probe::SWEEP, sig),
        (None, Some(why)) => super::mark_failed(&mut doc, probe::SWEEP, why),
        (None, None) => {
            doc.finish();
            // A size planned but not measured leaves the run incomplete.
            doc.complete = notes.is_empty();
        }
    }
    records::keep_warnings(&mut doc, &comparability_warnings(&args, &env, max));
    args.save.save(&doc)?;
    if failed.is_some() {
        return super::output::emit_then_fail(
            &doc,
            format,
            interrupted,
            failed.as_deref(),
            args.save.save.is_some(),
        );
    }
    let kept = format!("{} row(s) measured before the stop", rows.len());
    emit_or_stop(&doc, format, interrupted, &kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_are_whole_kib_from_one_page() {
        assert_eq!(sweep_size("16", "--buffer-kib").unwrap(), 16 << 10);
        assert_eq!(sweep_size("2M", "-s").unwrap(), 2 << 20);
        let e = sweep_size("4.5", "--buffer-kib").unwrap_err().to_string();
        assert!(e.contains("4608 bytes is not a whole number of KiB"), "{e}");
        for bad in ["1.5", "1", "3K", "1000B", "0", "", "-4", "4Q"] {
            let e = sweep_size(bad, "--buffer-kib").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--buffer-kib {bad}: ")) && e.contains("whole KiB from 4"),
                "{e}"
            );
        }
    }

    proptest! {
        #[test]
        fn any_size_text_is_a_size_or_an_error(text in "\\PC{0,16}|[0-9.]{1,12}[KkMmGgTtBi]{0,3}") {
            if let Ok(b) = sweep_size(&text, "-s") {
                prop_assert!(b >= MIN_SIZE && b % 1024 == 0);
            }
        }

        #[test]
        fn any_kernel_names_are_kernels_or_an_error(
            names in proptest::collection::vec("[a-z0-9_]{0,16}|read_portable|copy_portable|read_avx2", 0..4),
        ) {
            if let Ok(v) = forced_kernels(&names) {
                let mut ops: Vec<String> = v.iter().map(|k| k.op.to_string()).collect();
                ops.sort();
                ops.dedup();
                prop_assert_eq!(ops.len(), v.len(), "one kernel per operation");
            }
        }
    }
}
