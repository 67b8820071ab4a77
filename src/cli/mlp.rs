//! `numabench mlp`: memory-level parallelism, N independent chases in one
//! thread, per node pair.

use super::args::{ChaseArgs, LimitArgs, NodeArgs, PagesArgs, SizeArgs, VerboseArgs, check_nodes};
use super::chase;
use super::output::{FormatArgs, SaveArgs, finish_probe};
use crate::error::usage;
use crate::kernels::chase::MAX_CHASES;
use crate::memory::admission::admit_each;
use crate::output::render::Format;
use crate::probes::mlp::{self, MlpConfig, Pairs, records};
use crate::results::Document;
use crate::results::names::probe;

use anyhow::Result;

/// Measure memory-level parallelism: N pointer chases at once from one thread.
///
/// Measure memory-level parallelism: one pinned thread follows N
/// independent pointer chases at once (multichase -c parallelN), for each
/// N, per (CPU node, memory node): ns per access (wall time / all loads),
/// each chase's latency (N x that) and the achieved concurrency (ns per
/// access with one chase / with N: misses overlapped, counted in idle
/// latencies, = bandwidth x idle latency / line).
///
/// The chase buffer (--size, at least 1M) is 1 GiB unless given, or half
/// of what the memory node or the process's memory limit leaves where
/// that is less (said in a note); it is admitted against each memory
/// node's free memory before anything is mapped.
#[derive(clap::Args, Debug)]
#[command(
    mut_arg("pattern", |a| a.default_value("page-local")),
)]
pub struct MlpArgs {
    #[command(flatten)]
    pub size: SizeArgs,
    /// Chase counts, comma-separated, 1 to 16 (1 is always measured: the
    /// concurrency is relative to it).
    #[arg(
        short = 'n',
        long,
        value_name = "N",
        value_delimiter = ',',
        default_value = "1,2,4,8,16"
    )]
    pub chases: Vec<usize>,
    #[command(flatten)]
    pub chase: ChaseArgs,
    #[command(flatten)]
    pub pages: PagesArgs,
    /// Node pairs: all or near-far.
    ///
    /// all: every CPU node with every memory node; near-far: each CPU node
    /// with its own and its farthest memory node (local-far, an older
    /// name, is accepted).
    #[arg(long, value_name = "PAIRS", default_value = "all")]
    pub pairs: String,
    #[command(flatten)]
    pub nodes: NodeArgs,
    #[command(flatten)]
    pub limit: LimitArgs,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
    #[command(flatten)]
    pub verbose: VerboseArgs,
    #[command(flatten)]
    pub planning: super::args::PlanArgs,
    #[command(flatten)]
    pub sampling: super::args::PairSamplingArgs,
}

/// The chase counts: 1 to [`MAX_CHASES`], ascending, 1 included.
fn counts(given: &[usize]) -> Result<Vec<usize>> {
    if let Some(bad) = given.iter().find(|n| !(1..=MAX_CHASES).contains(*n)) {
        return Err(usage(format!(
            "--chases {bad}: give 1 to {MAX_CHASES} chases (one thread keeps that many pointers in registers)"
        )));
    }
    let mut out: Vec<usize> = given.to_vec();
    out.push(1);
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn config(args: &MlpArgs) -> Result<MlpConfig> {
    let pattern = args.chase.one(crate::kernels::pattern::WIDE_SPACING)?;
    if let Some(s) = pattern.stride()
        && s < crate::kernels::pattern::WIDE_SPACING
    {
        return Err(usage(format!(
            "--stride {s}: mlp chases sit in 8-byte slots of {} B elements; give --stride 256 or more",
            crate::kernels::pattern::WIDE_SPACING
        )));
    }
    let pages = args.pages.one()?.1;
    let pairs = match super::select::pairs(&args.pairs)? {
        super::select::PairChoice::All => Pairs::All,
        super::select::PairChoice::NearFar => Pairs::LocalFar,
    };
    let size = chase::buffer_or_default(&args.size.size)?;
    chase::fits(&pattern, size)?;
    let cfg = MlpConfig {
        selection: args.sampling.selection(),
        only: None,
        size,
        pattern,
        pages,
        counts: counts(&args.chases)?,
        pairs,
        cpu_nodes: args.nodes.cpu()?,
        mem_nodes: args.nodes.mem()?,
        time_limit: args.limit.limit(),
    };
    crate::probes::mlp::check_elements(&cfg)?;
    Ok(cfg)
}

pub(super) fn run(args: MlpArgs) -> Result<()> {
    let topo = args.planning.topology()?;
    let mut cfg = config(&args)?;
    check_nodes(&topo, &cfg.cpu_nodes, &cfg.mem_nodes)?;
    let mut mem_nodes: Vec<usize> = mlp::pairs(&topo, &cfg).iter().map(|p| p.1).collect();
    mem_nodes.sort_unstable();
    mem_nodes.dedup();
    let mut sized = None;
    if args.size.size.is_none() {
        let (size, note) = chase::default_buffer(&topo, &mem_nodes)?;
        cfg.size = size;
        sized = note;
        chase::fits(&cfg.pattern, cfg.size)?;
        crate::probes::mlp::check_elements(&cfg)?;
    }
    if args.planning.print(
        crate::results::names::probe::MLP,
        &topo,
        &crate::probes::mlp::estimate(&topo, &cfg),
    ) {
        return Ok(());
    }
    admit_each(
        &topo,
        cfg.size as u64,
        &mem_nodes,
        &chase::size_shown(&args.size.size, cfg.size),
        "give a smaller --size",
    )?;
    args.save.check()?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    let mut doc = Document::new(&topo);
    let measured = {
        let progress = crate::progress::Progress::new(args.verbose.verbose);
        mlp::run(&topo, &cfg, &mut |what| progress.step(what))?
    };
    let interrupted = crate::interrupt::requested();
    if measured.curves.is_empty() && interrupted.is_none() {
        return Err(usage(format!(
            "nothing was measured: {}; give a longer --time-limit",
            measured.notes.join("; ")
        )));
    }
    doc.records = records::records(&cfg, &measured);
    if let (Some((note, limit)), Some(first)) = (sized, doc.records.first_mut()) {
        first.notes.push(note);
        first.conditions.extend(limit);
    }
    finish_probe(
        &mut doc,
        probe::MLP,
        format,
        &args.save,
        measured.failed.as_deref(),
        measured.notes.is_empty(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::pattern::Pattern;

    fn parsed(args: &[&str]) -> Result<MlpConfig> {
        match crate::cli::parsed_command(&[&["mlp"], args].concat()) {
            crate::cli::Command::Mlp(a) => config(&a),
            other => panic!("not mlp: {other:?}"),
        }
    }

    #[test]
    fn a_stride_pattern_takes_the_stride_the_help_names_and_must_fit_the_buffer() {
        let c = parsed(&["--pattern", "stride"]).unwrap();
        assert_eq!(c.pattern, Pattern::Stride { stride: 256 });
        for (args, says) in [
            (
                &["-s", "4M", "--window", "1T"][..],
                "--window 1T: larger than the buffer",
            ),
            (
                &["-s", "4M", "--pattern", "stride", "--stride", "4M"],
                "--stride 4M",
            ),
        ] {
            let e = parsed(args).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
            assert!(e.to_string().contains(says), "{e}");
        }
        let c = parsed(&[
            "-s",
            "4M",
            "--pattern",
            "stride",
            "--stride",
            "2M",
            "-n",
            "2",
        ])
        .unwrap();
        assert_eq!(c.pattern.stride(), Some(2 << 20));
        assert!(parsed(&["-s", "4M", "--window", "4M", "-n", "1"]).is_ok());
        // Two elements, one window: not enough for the 16 chases.
        for args in [
            &["-s", "4M", "--pattern", "stride", "--stride", "2M"][..],
            &["-s", "4M", "--window", "4M", "-n", "2"],
        ] {
            let e = parsed(args).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
            assert!(e.to_string().contains("fewer than the"), "{e}");
        }
    }

    #[test]
    fn chase_counts_include_one_and_stay_in_registers() {
        assert_eq!(counts(&[8, 2, 2]).unwrap(), vec![1, 2, 8]);
        let e = counts(&[0]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        assert!(
            counts(&[17])
                .unwrap_err()
                .to_string()
                .contains("--chases 17")
        );
    }
}
