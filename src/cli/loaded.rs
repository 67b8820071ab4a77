//! `numabench loaded`: latency under load, as a curve of the chase's
//! latency against the bandwidth injector threads move, per node pair.

use super::args::{ChaseArgs, KernelVariantArgs, LimitArgs, NodeArgs, SizeArgs, VerboseArgs};
use super::output::finish_probe;
use super::select;
use super::units::size_at_least;
use crate::error::usage;
use crate::kernels::{self, KernelSpec};
use crate::output::render::Format;
use crate::probes::loaded::{self, DEFAULT_DELAYS_NS, LoadedConfig, Mix, Pairs};
use crate::results::Document;
use crate::results::names::probe;

use anyhow::Result;

/// Measure latency under load: a pointer chase while the other cores inject traffic.
///
/// Measure loaded latency: one thread chases pointers through a buffer on
/// the memory node while the other cores of its CPU node read (or copy)
/// their own buffers on that node, with a spin per 4 KiB chunk
/// stepped from long to none; prints latency against the injected
/// bandwidth per (CPU node, memory node) and the knee, where latency first
/// reaches twice its idle figure.
///
/// Threads pinned and memory bound, both
/// verified.
///
/// The chase buffer (--size) is 16x the L3 of the chase's core unless
/// given, at least 1 GiB, at most half the memory node's free memory. The
/// chase's pattern is full-random (one cycle through every line, page walks
/// included: the idle-latency chase, multiload -T SIZE) or page-local
/// (multiload's default); on a large buffer page walks can cost more than
/// the load adds, and page-local then shows the curve. A stride is not
/// measured: the prefetchers follow it.
#[derive(clap::Args, Debug)]
pub struct LoadedArgs {
    /// Spins per 4 KiB chunk of each injector, in ns: one curve point each.
    ///
    /// Spin per 4 KiB chunk of each injector, in nanoseconds,
    /// one curve point each (a calibrated count of the CPU's spin-wait
    /// hint); 0 is full load; an idle point is always measured first
    /// [default: 0,50,100,200,400,700,1000,1700,2500,5000,9000,20000].
    #[arg(short = 'd', long, value_name = "NS,...")]
    pub delays: Option<String>,
    /// Injected traffic: read, copy or copy-nt.
    ///
    /// Injected traffic: read (reads only), copy (1:1 reads and writes,
    /// regular stores) or copy-nt (the same with non-temporal stores, as
    /// glibc's memcpy for large copies); a copy counts read + written
    /// bytes, as STREAM does.
    ///
    /// The injectors run the fastest of its kernels
    /// in a short trial before each curve, or the one --kernel-variant
    /// names: a read kernel (regular or streaming loads) for read, a copy
    /// with regular stores for copy, with non-temporal stores for copy-nt.
    #[arg(long, value_name = "TRAFFIC", default_value = "read")]
    pub traffic: String,
    #[command(flatten)]
    pub kernel: KernelVariantArgs,
    #[command(flatten)]
    pub size: SizeArgs,
    #[command(flatten)]
    pub chase: ChaseArgs,
    /// Each injector's buffer, e.g. 256M.
    ///
    /// Each injector's buffer, e.g. 256M [default: the injectors together
    /// 4x the L3 they share, each at least 32 MiB].
    #[arg(long, value_name = "SIZE", value_parser = super::units::size_with_unit)]
    pub injector_size: Option<String>,
    /// Injector threads [default: every core of the node but the chase's].
    ///
    /// Injector threads, at most the CPUs free to inject from [default:
    /// every core of the injector node but the chase's core (one per
    /// physical core first)].
    #[arg(long, value_name = "N")]
    pub injectors: Option<usize>,
    /// Node whose cores inject [default: the chase's own CPU node].
    #[arg(long, value_name = "NODE")]
    pub injector_node: Option<usize>,
    /// Node pairs: all or near-far.
    ///
    /// all: every CPU node with every memory node; near-far: the first CPU
    /// node with its nearest and its farthest memory node (local-far, mlp's
    /// older name, is accepted).
    #[arg(long, value_name = "PAIRS", default_value = "all")]
    pub pairs: String,
    #[command(flatten)]
    pub nodes: NodeArgs,
    #[command(flatten)]
    pub limit: LimitArgs,
    #[command(flatten)]
    pub format: super::output::FormatArgs,
    #[command(flatten)]
    pub save: super::output::SaveArgs,
    #[command(flatten)]
    pub verbose: VerboseArgs,
    #[command(flatten)]
    pub planning: super::args::PlanArgs,
}

/// The most points a curve takes, and the longest delay (one second).
const MAX_DELAYS: usize = 64;
const MAX_DELAY_NS: u64 = 1_000_000_000;

fn delays(text: &Option<String>) -> Result<Vec<u64>> {
    let Some(t) = text else {
        return Ok(DEFAULT_DELAYS_NS.to_vec());
    };
    let bad = |why: String| usage(format!("--delays {t}: {why}"));
    let mut out = Vec::new();
    for part in t.split(',') {
        let d: u64 = part.trim().parse().map_err(|_| {
            bad(format!(
                "'{part}' is not a whole number of nanoseconds (write e.g. 0,100,1000)"
            ))
        })?;
        if d > MAX_DELAY_NS {
            return Err(bad(format!(
                "{d} ns is over the limit of {MAX_DELAY_NS} (1 s)"
            )));
        }
        out.push(d);
    }
    if out.len() > MAX_DELAYS {
        return Err(bad(format!("at most {MAX_DELAYS} delays")));
    }
    Ok(out)
}

fn size(text: &Option<String>, flag: &str, min: usize) -> Result<Option<usize>> {
    text.as_deref()
        .map(|t| size_at_least(t, min).map_err(|e| usage(format!("{flag} {t}: {e}"))))
        .transpose()
}

/// The kernel `--kernel-variant name` asks for, if it exists, runs here
/// and makes the traffic of `--traffic mix_name`.
fn injector_kernel(name: &str, mix: Mix, mix_name: &str) -> Result<&'static KernelSpec> {
    let k = select::kernel(name, "--kernel-variant", |_, a| mix.accepts(a))?;
    if !mix.accepts(k) {
        let fitting: Vec<&str> = kernels::available()
            .filter(|a| mix.accepts(a))
            .map(|a| a.name)
            .collect();
        return Err(usage(format!(
            "--kernel-variant {name}: a {} kernel with {}, which --traffic {mix_name} does not run (use one of: {})",
            k.op,
            k.access(),
            fitting.join(", ")
        )));
    }
    Ok(k)
}

fn config(args: &LoadedArgs) -> Result<LoadedConfig> {
    let mix = match args.traffic.as_str() {
        "read" => Mix::Read,
        "copy" => Mix::Copy,
        "copy-nt" => Mix::CopyNt,
        m => {
            return Err(usage(format!("--traffic {m}: use read, copy or copy-nt")));
        }
    };
    let kernel = match &args.kernel.kernel_variant[..] {
        [] => None,
        [name] => Some(injector_kernel(name, mix, &args.traffic)?),
        more => {
            return Err(usage(format!(
                "--kernel-variant {}: the injectors run one kernel; give one",
                more.join(" --kernel-variant ")
            )));
        }
    };
    let pairs = match select::pairs(&args.pairs)? {
        select::PairChoice::All => Pairs::All,
        select::PairChoice::NearFar => Pairs::NearFar,
    };
    if args.injectors == Some(0) {
        return Err(usage(
            "--injectors 0: a loaded latency needs at least one injector (the idle point alone is 'numabench matrix --no-saturated')",
        ));
    }
    let pattern = args.chase.one(64)?;
    if pattern.stride().is_some() {
        return Err(usage(
            "--pattern stride: the prefetchers follow a stride, so its latency under load is not memory's; use full-random or page-local",
        ));
    }
    let chase_bytes = args.size.at_least(1 << 20)?;
    if let Some(b) = chase_bytes {
        super::chase::fits(&pattern, b)?;
    }
    Ok(LoadedConfig {
        delays_ns: delays(&args.delays)?,
        mix,
        kernel,
        chase_bytes,
        pattern,
        injector_bytes: size(&args.injector_size, "--injector-size", 64 << 10)?,
        injectors: args.injectors,
        injector_node: args.injector_node,
        pairs,
        cpu_nodes: args.nodes.cpu()?,
        mem_nodes: args.nodes.mem()?,
        time_limit: args.limit.limit(),
    })
}

fn check_nodes(topo: &crate::topology::Topology, cfg: &LoadedConfig) -> Result<()> {
    super::args::check_nodes(topo, &cfg.cpu_nodes, &cfg.mem_nodes)?;
    if let Some(n) = cfg.injector_node {
        select::cpu_node(topo, n, "--injector-node")?;
    }
    Ok(())
}

pub(super) fn run(args: LoadedArgs) -> Result<()> {
    let topo = args.planning.topology()?;
    let cfg = config(&args)?;
    check_nodes(&topo, &cfg)?;
    if args.planning.print(
        crate::results::names::probe::LOADED,
        &topo,
        &loaded::estimate(&topo, &cfg),
    ) {
        return Ok(());
    }
    args.save.check()?;
    let format = args.format.chosen().unwrap_or(Format::Text);
    let mut doc = Document::new(&topo);
    let progress = crate::progress::Progress::new(args.verbose.verbose);
    let mut step = |what: &str| progress.step(what);
    let result = loaded::run(&topo, &cfg, &mut step);
    drop(progress);
    let measured = result?;
    if measured.curves.is_empty() && measured.timed_out {
        return Err(usage(format!(
            "nothing was measured: {}; give a longer --time-limit",
            measured.notes.join("; ")
        )));
    }
    doc.records = measured.records();
    finish_probe(
        &mut doc,
        probe::LOADED,
        format,
        &args.save,
        measured.failed.as_deref(),
        !measured.timed_out,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::pattern::Pattern;

    fn parsed(args: &[&str]) -> Result<LoadedConfig> {
        match crate::cli::parsed_command(&[&["loaded"], args].concat()) {
            crate::cli::Command::Loaded(a) => config(&a),
            other => panic!("not loaded: {other:?}"),
        }
    }

    #[test]
    fn the_chase_is_full_random_unless_page_local_is_asked_and_never_a_stride() {
        assert_eq!(parsed(&[]).unwrap().pattern, Pattern::FullRandom);
        assert_eq!(
            parsed(&["--pattern", "page-local", "--window", "64K"])
                .unwrap()
                .pattern,
            Pattern::PageLocal { window: 64 << 10 }
        );
        for (args, says) in [
            (
                &["--pattern", "stride"][..],
                "--pattern stride: the prefetchers",
            ),
            (&["--pattern", "zigzag"][..], "--pattern"),
            (
                &["--pattern", "page-local", "-s", "4M", "--window", "8M"][..],
                "--window 8M: larger than the buffer",
            ),
        ] {
            let e = parsed(args).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE, "{e}");
            assert!(e.to_string().starts_with(says), "{args:?}: {e}");
        }
    }
}
