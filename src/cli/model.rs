//! `numabench model`: the data-access performance model of a measured
//! matrix: bandwidth classes, alpha_i = class bandwidth / Gamma, and
//! D = sum(alpha_i * theta_i) for a given access mix, a running process, or
//! a mixed placement measured now.

use super::args::{GammaArgs, GpuArgs, MemNodeArgs, SizeArgs};
use super::output::emit;
use super::select;
use crate::analysis::model as m;
use crate::error::usage;
use crate::output::render::Format;
use crate::probes::model::pcie as pcie_model;
use crate::probes::model::validate::{self, Checked};
use crate::probes::model::{self, ModelOptions, records, sections};
use crate::probes::pcie::Direction;
use crate::results::Document;
use crate::results::names::probe;
use crate::topology::{SysfsRoot, read_topology};
use anyhow::Result;
use std::path::PathBuf;

/// Apply the data-access performance model to a matrix results file.
///
/// Apply the data-access performance model (Braithwaite 2012) to a matrix
/// results file: bandwidth classes with their alpha values, D for an
/// access mix (--theta) or for a running process (--pid); or measure a
/// mixed placement now and compare it with the prediction (--validate).
///
/// --validate works on a working set (--size) sized as `matrix` sizes a
/// cell's unless given, split over the --mem-nodes (every usable memory
/// node unless given).
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// A results file from matrix, run or pcie --save.
    ///
    /// A results file from `numabench matrix --save FILE` (or `numabench
    /// run`), or from `numabench pcie --save FILE` for the PCIe-access
    /// model (alpha_p per class, D_p).
    #[arg(value_name = "RESULTS")]
    pub results: Option<PathBuf>,
    /// Fractions of accesses per bandwidth class, e.g. 0.5,0.25,0.25.
    ///
    /// Fractions of accesses per bandwidth class, class 0 (fastest) first,
    /// e.g. 0.5,0.25,0.25 or 50%,25%,25%; prints D = sum(alpha_i *
    /// theta_i) and its loss against alpha_0.
    #[arg(long, value_name = "LIST")]
    pub theta: Option<String>,
    /// Classes as seen from this CPU node for --theta [default: the
    /// system-wide classes].
    #[arg(long, value_name = "NODE")]
    pub cpu_node: Option<usize>,
    /// Predict D for a running process from where its pages are.
    ///
    /// Read where process PID's pages are (/proc/PID/numa_maps) and
    /// predict D for running it on each CPU node, with numactl advice.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    #[command(flatten)]
    pub peak: GammaArgs,
    #[command(flatten)]
    pub classes: super::classes::ClassArgs,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Only this direction of a pcie results file: download or readback.
    ///
    /// Only this direction of a `pcie` results file for --theta:
    /// download (host to device) or readback [default: both].
    #[arg(long, value_name = "DIR")]
    pub direction: Option<String>,
    /// Measure a mixed placement now and compare it with the prediction.
    ///
    /// Measure now: one thread on --cpu-node (default: the first) streams
    /// over memory split across --mem-nodes by --weights, and the measured
    /// bandwidth is compared with the predictions from the pure placements.
    #[arg(long)]
    pub validate: bool,
    /// Weights of the memory nodes for --validate, e.g. 1:1 or 3:1
    /// [default: equal].
    #[arg(long, value_name = "W:W...")]
    pub weights: Option<String>,
    #[command(flatten)]
    pub mem: MemNodeArgs,
    #[command(flatten)]
    pub size: SizeArgs,
    #[command(flatten)]
    pub format: super::output::FormatArgs,
    #[command(flatten)]
    pub save: super::output::SaveArgs,
}

/// Loads a results file; a missing or damaged file is the user's input
/// error, said in one line.
pub(super) fn load(path: &std::path::Path) -> Result<Document> {
    let loaded = Document::load(path).map_err(|e| usage(format!("{e:#}")))?;
    for w in &loaded.warnings {
        eprintln!(
            "numabench: warning: {}: {}",
            crate::text::escape(&path.display().to_string()),
            crate::text::escape(w)
        );
    }
    Ok(loaded.document)
}

fn check_args(args: &ModelArgs) -> Result<()> {
    if args.results.is_none() && !args.validate {
        return Err(usage(
            "give a results file from 'numabench matrix --save FILE', or --validate to measure now",
        ));
    }
    if !args.validate {
        // These shape the placement --validate measures; without it they
        // would be silently ignored.
        for (given, flag) in [
            (args.weights.is_some(), "--weights"),
            (args.mem.mem_nodes.is_some(), "--mem-nodes"),
            (args.size.size.is_some(), "--size"),
        ] {
            if given {
                return Err(usage(format!(
                    "{flag} applies to --validate only (the placement measured now); add --validate, or leave {flag} out to model the results file"
                )));
            }
        }
    }
    if args.validate && (args.theta.is_some() || args.pid.is_some()) {
        return Err(usage(
            "--validate measures now; use --theta and --pid with a results file",
        ));
    }
    if args.validate
        && let Some(path) = &args.results
    {
        return Err(usage(format!(
            "--validate measures now and reads no results file; give {} without --validate to model it, or --validate alone",
            path.display()
        )));
    }
    if args.validate
        && (args.gpu.phi.is_some() || !args.gpu.gpu.is_empty() || args.direction.is_some())
    {
        return Err(usage(
            "--phi, --gpu and --direction apply to a pcie results file; --validate measures memory now",
        ));
    }
    if args.validate && args.peak.peak.is_some() {
        return Err(usage(
            "--peak applies to a results file; --validate compares measured bandwidths only",
        ));
    }
    if args.validate && (args.classes.tolerance.is_some() || args.classes.merge_close_classes) {
        return Err(usage(
            "--tolerance and --merge-close-classes shape the classes of a results file; --validate finds no classes",
        ));
    }
    if let Some(p) = args.peak.peak {
        super::units::peak(p, "--peak")?;
    }
    if let (Some(out), Some(input)) = (&args.save.save, &args.results) {
        crate::results::check_not_an_input(out, std::slice::from_ref(input), "--save")?;
    }
    args.save.check()
}

pub(super) fn run(args: ModelArgs) -> Result<()> {
    check_args(&args)?;
    let thetas = args
        .theta
        .as_deref()
        .map(|t| m::parse_thetas(t).map_err(|e| usage(format!("--theta {t}: {e}"))))
        .transpose()?;
    if args.validate {
        return validate_now(&args);
    }
    let path = args.results.as_ref().expect("checked above");
    let doc = load(path)?;
    if pcie_model::is_pcie(&doc) {
        return run_pcie(&args, &doc, thetas);
    }
    for (given, flag) in [
        (args.gpu.phi.is_some(), "--phi"),
        (!args.gpu.gpu.is_empty(), "--gpu"),
        (args.direction.is_some(), "--direction"),
    ] {
        if given {
            return Err(usage(format!(
                "{flag} applies to a 'numabench pcie' results file; {} holds a matrix",
                path.display()
            )));
        }
    }
    let opts = ModelOptions {
        peak: args.peak.peak,
        tolerance: args.classes.tolerance_fraction()?,
        merge_close: args.classes.merge_close_classes,
        thetas,
        cpu_node: args.cpu_node,
        pid: args.pid,
    };
    let modelled = model::model(&doc, &path.display().to_string(), &opts)?;
    // The model's results keep the measured machine's host description.
    let mut result = doc.clone();
    result.command = std::env::args().collect();
    result.records = records::of_model(&modelled);
    args.save.save(&result)?;
    print(&result, format(&args), || {
        sections::of_model(&modelled, &doc.host.topology)
    })
}

/// The PCIe-access model of a `pcie` results file.
fn run_pcie(args: &ModelArgs, doc: &Document, thetas: Option<Vec<f64>>) -> Result<()> {
    let path = args.results.as_ref().expect("checked above");
    for (given, flag, instead) in [
        (args.peak.peak.is_some(), "--peak", "--phi"),
        (args.pid.is_some(), "--pid", "--theta"),
        (args.cpu_node.is_some(), "--cpu-node", "--gpu"),
    ] {
        if given {
            return Err(usage(format!(
                "{flag} applies to a matrix results file; {} holds pcie figures (use {instead})",
                path.display()
            )));
        }
    }
    if let Some(p) = args.gpu.phi {
        super::units::peak(p, "--phi")?;
    }
    let direction = args
        .direction
        .as_deref()
        .map(|d| {
            Direction::from_name(d).ok_or_else(|| {
                usage(format!(
                    "--direction {d}: write download (host to device) or readback"
                ))
            })
        })
        .transpose()?;
    let opts = pcie_model::PcieOptions {
        phi: args.gpu.phi,
        tolerance: args.classes.tolerance_fraction()?,
        merge_close: args.classes.merge_close_classes,
        gpus: args.gpu.gpu.clone(),
        direction,
        thetas,
    };
    let modelled = pcie_model::model(doc, &path.display().to_string(), &opts)?;
    let mut result = doc.clone();
    result.command = std::env::args().collect();
    result.records = pcie_model::records(&modelled);
    args.save.save(&result)?;
    print(&result, format(args), || pcie_model::sections(&modelled))
}

/// Text unless a format is asked for, on a terminal or not.
fn format(args: &ModelArgs) -> Format {
    args.format.chosen().unwrap_or(Format::Text)
}

/// `doc` in `format`; text is the probe's sections of what was just worked
/// out, which say more than the records keep (see `probes::model::sections`).
fn print(
    doc: &Document,
    format: Format,
    text: impl FnOnce() -> Vec<crate::view::Section>,
) -> Result<()> {
    match format {
        Format::Text => {
            crate::console::out(&crate::output::sections::text(&text()));
            Ok(())
        }
        f => emit(doc, f),
    }
}

/// Largest weight: the memory is placed in 2 MiB pieces following the
/// weights in turn, so a finer ratio would need gigabytes per period (and
/// the pattern itself would grow with the sum of the weights).
const MAX_WEIGHT: u32 = 1000;

fn parse_weights(text: &str, n: usize) -> Result<Vec<u32>> {
    let w: Vec<u32> = text
        .split([':', ','])
        .map(|p| p.trim().parse::<u32>().ok().filter(|&w| w <= MAX_WEIGHT))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            usage(format!(
                "--weights {text}: write whole numbers from 0 to {MAX_WEIGHT}, like 1:1 or 3:1"
            ))
        })?;
    if w.len() != n {
        return Err(usage(format!(
            "--weights {text}: {} weight(s) for {n} memory node(s)",
            w.len()
        )));
    }
    if w.iter().all(|&x| x == 0) {
        return Err(usage(format!(
            "--weights {text}: at least one must be above 0"
        )));
    }
    Ok(w)
}

/// The CPU node for --validate: --cpu-node, else the first usable.
fn validate_cpu_node(args: &ModelArgs, topo: &crate::topology::Topology) -> Result<usize> {
    match args.cpu_node {
        Some(c) => {
            select::cpu_node(topo, c, "--cpu-node")?;
            Ok(c)
        }
        None => topo
            .usable_cpu_nodes()
            .first()
            .ok_or_else(|| anyhow::anyhow!("this process may run on no CPU")),
    }
}

/// The memory nodes for --validate with their weights.
fn validate_pairs(args: &ModelArgs, topo: &crate::topology::Topology) -> Result<Vec<(usize, u32)>> {
    let mems: Vec<usize> = match &args.mem.mem_nodes {
        Some(t) => {
            let set = crate::ids::NodeSet::parse_list(t)
                .map_err(|e| usage(format!("--mem-nodes {t}: {e} (write e.g. 0-1)")))?;
            if set.is_empty() {
                return Err(usage(format!(
                    "--mem-nodes '{t}': the list is empty; name at least one node (e.g. 0-1) or leave --mem-nodes out for all"
                )));
            }
            for n in set.iter() {
                select::memory_node(topo, n, "--mem-nodes")?;
            }
            set.iter().collect()
        }
        None => topo.usable_memory_nodes().iter().collect(),
    };
    let weights = match &args.weights {
        Some(t) => parse_weights(t, mems.len())?,
        None => vec![1; mems.len()],
    };
    Ok(mems.into_iter().zip(weights).collect())
}

fn validate_now(args: &ModelArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    let cpu_node = validate_cpu_node(args, &topo)?;
    let pairs = validate_pairs(args, &topo)?;
    let size = args.size.at_least(1 << 20)?;
    let progress = crate::progress::Progress::new(false);
    let outcome = validate::check(&topo, cpu_node, &pairs, size, &mut |w| progress.step(w))?;
    drop(progress);
    let mut doc = Document::new(&topo);
    let v = match outcome {
        validate::Outcome::Done(v) => v,
        validate::Outcome::Stopped(pure) => {
            let sig = crate::interrupt::requested().unwrap_or(libc::SIGINT);
            doc.records = records::of_stopped(cpu_node, &pure);
            return stopped_validation(args, doc, pairs.len(), sig);
        }
    };
    let checked = Checked::new(v)?;
    doc.records.push(records::of_validation(&checked));
    doc.finish();
    args.save.save(&doc)?;
    print(&doc, format(args), || {
        vec![sections::of_validation(&checked)]
    })
}

/// What a stop left of a validation: the pure placements measured, saved
/// and shown as such, with no prediction checked.
fn stopped_validation(args: &ModelArgs, mut doc: Document, nodes: usize, sig: i32) -> Result<()> {
    let measured = doc.records.len();
    let alone = sections::of_stopped(&doc.records);
    super::mark_interrupted(&mut doc, probe::MODEL, sig);
    args.save.save(&doc)?;
    let kept = format!(
        "{measured} of {nodes} node(s) measured alone and not the mixed placement: no prediction checked"
    );
    let line = super::interrupted_line(sig, &kept);
    match format(args) {
        Format::Text => crate::console::out(&format!("{line}\n{alone}")),
        f => {
            eprintln!("numabench: {line}");
            emit(&doc, f)?;
        }
    }
    super::exit_interrupted(sig)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn weights_are_whole_numbers_up_to_the_cap() {
        assert_eq!(parse_weights("3:1", 2).unwrap(), [3, 1]);
        assert_eq!(parse_weights("0,1000", 2).unwrap(), [0, 1000]);
        for (bad, n) in [
            ("1001:1", 2),
            ("1:1", 3),
            ("0:0", 2),
            ("-1:1", 2),
            ("", 1),
            ("1.5:1", 2),
        ] {
            let e = parse_weights(bad, n).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--weights {bad}: ")), "{e}");
        }
    }

    proptest! {
        #[test]
        fn any_weights_text_is_weights_or_an_error(
            text in "\\PC{0,24}|[0-9]{1,12}([:,][0-9]{1,12}){0,6}",
            n in 0usize..8,
        ) {
            if let Ok(w) = parse_weights(&text, n) {
                prop_assert_eq!(w.len(), n);
                prop_assert!(w.iter().all(|&x| x <= MAX_WEIGHT) && w.iter().any(|&x| x > 0));
            }
        }
    }
}
