//! `numabench pcie`: host-device bandwidth from every memory node to every
//! GPU (SHOC's BusSpeedDownload and BusSpeedReadback per node), with Phi,
//! alpha_p and bandwidth classes.

use super::args::{GpuArgs, NodeArgs, TriesArgs, VerboseArgs};
use super::output::{FormatArgs, SaveArgs, emit, emit_or_stop};
use super::select;
use super::units::parse_size;
use crate::error::usage;
use crate::ids::NodeSet;
use crate::output::render::{Format, csv_text};
use crate::probes::pcie::{self, Outcome, Request};
use crate::progress::Progress;
use crate::results::Document;
use crate::topology::{SysfsRoot, Topology, read_topology};
use anyhow::Result;

/// Sizes copied when `--sizes` is not given: SHOC's 1 KiB to 512 MiB
/// doubling range less its last step, so each memory node pins at most
/// 256 MiB.
pub(super) const DEFAULT_SIZES: &str = "1K-256M";

/// Measure host-GPU (PCIe) copy bandwidth from every memory node.
///
/// Measure host-GPU (PCIe) copy bandwidth from every memory node, with
/// Phi, alpha_p and bandwidth classes per GPU.
///
/// For each GPU and memory node: a host buffer bound to that node
/// (placement verified) and page-locked with cuMemHostRegister is copied to
/// the GPU (download) and back (readback) at each size, the thread on a
/// CPU of that node (or of the nearest node with CPUs), as SHOC's
/// BusSpeedDownload and BusSpeedReadback under numactl. Reports MB/s
/// (10^6 bytes/s), alpha_p = bandwidth / Phi (Phi: the PCIe link's
/// one-direction peak from sysfs, or --phi) and the classes of the nodes.
///
/// Where there is more than one CPU node, the largest sizes are copied
/// again with the thread on each other CPU node: a node x node table per
/// GPU and direction (thread on node i, host memory on node j), as the
/// thesis' Table 5.5.
///
/// CUDA is loaded at run time (libcuda.so.1, or the file named by
/// NUMABENCH_LIBCUDA). Without the library, or when it finds no GPU, one
/// line saying so goes to stderr and the exit code is 0; --json and --save
/// then still write a results document, with no records and that line
/// under "notes", and --csv prints the header only.
///
/// The rows of the node x node table are the --cpu-nodes the thread also
/// runs on, beside each memory node's own node (always measured). A timed
/// run (--tries) is one copy of a size in a direction, after one warm-up
/// copy; every copy is kept in the results document.
#[derive(clap::Args, Debug)]
#[command(mut_arg("tries", |a| a.default_value("10")))]
pub struct PcieArgs {
    #[command(flatten)]
    pub gpu: GpuArgs,
    #[command(flatten)]
    pub nodes: NodeArgs,
    /// No node x node table: the thread only on each memory node's own
    /// node (or the nearest with CPUs).
    #[arg(long)]
    pub no_pairs: bool,
    /// Copy sizes: a list (64K,1M,64M) and/or doubling ranges (1K-512M is
    /// SHOC's range).
    #[arg(long, value_name = "SIZES", default_value = DEFAULT_SIZES)]
    pub sizes: String,
    #[command(flatten)]
    pub tries: TriesArgs,
    #[command(flatten)]
    pub classes: super::classes::ClassArgs,
    /// Also a table of every size per GPU and direction.
    #[arg(long)]
    pub per_size: bool,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub save: SaveArgs,
    #[command(flatten)]
    pub verbose: VerboseArgs,
}

/// Sizes as `--sizes` takes them: a comma-separated list of sizes
/// (`64K,1M,64M`) and doubling ranges (`1K-512M`: 1 KiB, 2 KiB, ... up to
/// 512 MiB; an end that is not on the doubling ladder stops it below).
/// Returned ascending without repeats. The error is the reason only,
/// without the flag.
pub(super) fn parse_sizes(text: &str) -> Result<Vec<usize>, String> {
    if text.trim().is_empty() {
        return Err("no sizes given (write e.g. 64K,1M,64M or 1K-256M)".into());
    }
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!(
                "'{text}' has an empty item (write e.g. 64K,1M,64M or 1K-256M)"
            ));
        }
        match item.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (parse_size(lo)?, parse_size(hi)?);
                if lo > hi {
                    return Err(format!(
                        "'{item}' runs backwards (write the smaller size first)"
                    ));
                }
                let mut s = lo;
                while s <= hi {
                    out.push(s);
                    match s.checked_mul(2) {
                        Some(next) => s = next,
                        None => break,
                    }
                }
            }
            None => out.push(parse_size(item)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The flags checked before the driver is loaded: everything but the
/// GPU ordinals, which only the driver can check.
fn check(args: &PcieArgs, topo: &Topology) -> Result<Request> {
    super::units::tries(args.tries.tries, "--tries", "timed copy")?;
    let format = args.format.chosen();
    if args.per_size && matches!(format, Some(Format::Json | Format::Csv)) {
        return Err(usage(format!(
            "--per-size adds tables to the text output; {} already holds every size: leave --per-size out",
            if format == Some(Format::Json) {
                "--json"
            } else {
                "--csv"
            }
        )));
    }
    if let Some(p) = args.gpu.phi {
        super::units::peak(p, "--phi")?;
    }
    let classes = args.classes.options()?;
    let sizes =
        parse_sizes(&args.sizes).map_err(|e| usage(format!("--sizes {}: {e}", args.sizes)))?;
    let mem_nodes = mem_nodes(args, topo)?;
    let cpu_nodes = cpu_nodes(args, topo)?;
    // One pinned host buffer of the largest size on each node in turn.
    let largest = sizes.last().copied().unwrap_or(0);
    crate::memory::admission::admit_each(
        topo,
        largest as u64,
        &mem_nodes,
        &format!("--sizes {} (the largest)", args.sizes),
        "give smaller --sizes",
    )?;
    args.save.check()?;
    Ok(Request {
        gpus: args.gpu.gpu.clone(),
        mem_nodes,
        cpu_nodes,
        sizes,
        tries: args.tries.tries,
        phi_mb_s: args.gpu.phi,
        classes,
    })
}

/// `--mem-nodes`, each checked, else every node with memory this process
/// may use.
fn mem_nodes(args: &PcieArgs, topo: &Topology) -> Result<Vec<usize>> {
    let mem_nodes: Vec<usize> = match &args.nodes.mem.mem_nodes {
        Some(text) => {
            let set = NodeSet::parse_list(text)
                .map_err(|e| usage(format!("--mem-nodes {text}: {e} (write e.g. 0,2-3)")))?;
            for n in set.iter() {
                select::memory_node(topo, n, "--mem-nodes")?;
            }
            set.iter().collect()
        }
        None => topo.usable_memory_nodes().iter().collect(),
    };
    if mem_nodes.is_empty() {
        return Err(usage(
            "--mem-nodes: no memory node this process may allocate from",
        ));
    }
    Ok(mem_nodes)
}

/// The rows of the node x node table: `--cpu-nodes`, each checked, else
/// every node with CPUs this process may use; none with `--no-pairs`.
fn cpu_nodes(args: &PcieArgs, topo: &Topology) -> Result<Vec<usize>> {
    match (&args.nodes.cpu_nodes, args.no_pairs) {
        (Some(_), true) => Err(usage(
            "--cpu-nodes names the rows of the node x node table, and --no-pairs leaves the table out: give one of them",
        )),
        (None, true) => Ok(Vec::new()),
        (None, false) => Ok(topo.usable_cpu_nodes().iter().collect()),
        (Some(text), false) => {
            let set = select::node_list(text, "--cpu-nodes")?;
            for n in set.iter() {
                select::cpu_node(topo, n, "--cpu-nodes")?;
            }
            Ok(set.iter().collect())
        }
    }
}

pub(super) fn run(args: PcieArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    let req = check(&args, &topo)?;
    // Text unless asked otherwise, on a terminal or not, as before the
    // shared flags.
    let format = args.format.chosen().unwrap_or(Format::Text);
    let mut doc = Document::new(&topo);
    let outcome = {
        let progress = Progress::new(args.verbose.verbose);
        pcie::run(&topo, &req, &mut |what| progress.step(what))?
    };
    doc.records = match outcome {
        Outcome::Nothing(message) => return nothing_to_measure(&args, format, doc, &message),
        Outcome::Records(r) => r,
    };
    let interrupted = crate::interrupt::requested();
    match interrupted {
        None => doc.finish(),
        Some(sig) => super::mark_interrupted(&mut doc, pcie::PROBE, sig),
    }
    args.save.save(&doc)?;
    emit_or_stop(
        &doc,
        format,
        interrupted,
        "the sizes and nodes measured before the stop",
    )
}

/// The document as JSON with a top-level `notes` list (readers of the
/// results document ignore keys they do not know).
fn json_with_notes(doc: &Document, notes: &[String]) -> Result<Vec<u8>> {
    let mut value = serde_json::to_value(doc)?;
    if let Some(obj) = value.as_object_mut() {
        obj.insert("notes".into(), notes.into());
    }
    let mut out = crate::text::json_pretty(&value)?.into_bytes();
    out.push(b'\n');
    Ok(out)
}

/// No driver or no GPU: the one line on stderr, an empty document where
/// one was asked for (the line under its `notes`), the CSV header alone,
/// no text; exit 0.
fn nothing_to_measure(
    args: &PcieArgs,
    format: Format,
    mut doc: Document,
    message: &str,
) -> Result<()> {
    eprintln!("{message}");
    doc.finish();
    let json = json_with_notes(&doc, &[message.to_string()])?;
    if let Some(path) = &args.save.save {
        crate::results::write_output(path, &json)?;
    }
    match format {
        Format::Text => {}
        Format::Json => crate::console::out(std::str::from_utf8(&json)?),
        Format::Csv => crate::console::out(&csv_text(&pcie::view::empty_csv())?),
        other => emit(&doc, other)?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::pcie::locate::GpuInfo;
    use crate::probes::pcie::locate::pick_gpus;
    use crate::topology::fixture;
    use serde_json::Value;

    proptest::proptest! {
        /// Any --sizes text gives a short ascending list or an error: a
        /// doubling range stops within 64 PiB, so at most 56 steps each.
        #[test]
        fn any_sizes_text_is_sizes_or_an_error(
            text in "\\PC{0,24}|[0-9.]{1,8}[KMGT]?(-[0-9.]{1,8}[KMGTP]?)?(,[0-9.]{1,8}[KMGT]?(-[0-9.]{1,8}[KMGT]?)?){0,4}",
        ) {
            if let Ok(v) = parse_sizes(&text) {
                proptest::prop_assert!(!v.is_empty() && v.len() <= 57 * 5);
                proptest::prop_assert!(v.windows(2).all(|w| w[0] < w[1]) && v[0] >= 1);
            }
        }
    }

    #[test]
    fn size_lists_and_ranges() {
        assert_eq!(
            parse_sizes("64K,1M,64M"),
            Ok(vec![64 << 10, 1 << 20, 64 << 20])
        );
        assert_eq!(
            parse_sizes("1K-8K"),
            Ok(vec![1 << 10, 2 << 10, 4 << 10, 8 << 10])
        );
        // Unordered, repeated, mixed, spaced.
        assert_eq!(
            parse_sizes(" 4K , 1K-2K,4K "),
            Ok(vec![1 << 10, 2 << 10, 4 << 10])
        );
        // A range end off the ladder stops below it.
        assert_eq!(parse_sizes("1K-3K"), Ok(vec![1 << 10, 2 << 10]));
        assert_eq!(parse_sizes("5-5"), Ok(vec![5]));
        let default = parse_sizes(DEFAULT_SIZES).unwrap();
        assert_eq!(default.len(), 19);
        assert_eq!(default.first(), Some(&1024));
        assert_eq!(default.last(), Some(&(256 << 20)));
        // SHOC's own range: 1 KiB to 512 MiB, 20 sizes.
        assert_eq!(parse_sizes("1K-512M").unwrap().len(), 20);
        let err = |t: &str| parse_sizes(t).unwrap_err();
        assert!(err("0").contains("out of range"), "{}", err("0"));
        assert!(err("").contains("no sizes"));
        assert!(err("1K,,2K").contains("empty item"));
        assert!(err("64M-1K").contains("runs backwards"));
        assert!(err("1Q").contains("unknown unit"));
        assert!(err("-1K").contains("not a size"), "{}", err("-1K"));
        assert!(err("1K-").contains("not a size"));
    }

    fn args(extra: &[&str]) -> PcieArgs {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Wrap {
            #[command(flatten)]
            a: PcieArgs,
        }
        let mut argv = vec!["pcie"];
        argv.extend_from_slice(extra);
        Wrap::try_parse_from(argv).unwrap().a
    }

    fn args_gpu(extra: &[&str]) -> Vec<usize> {
        args(extra).gpu.gpu
    }

    #[test]
    fn flags_are_checked_before_anything_runs() {
        let t = fixture("cxl-memonly");
        let c = check(&args(&[]), &t).unwrap();
        assert_eq!(c.mem_nodes, [0, 1, 2]);
        assert_eq!(c.sizes.len(), 19);
        assert_eq!(c.classes.tolerance, 0.10);
        assert!(!c.classes.merge_close);
        let c = check(&args(&["--merge-close-classes", "--tolerance", "5"]), &t).unwrap();
        assert!(c.classes.merge_close && c.classes.tolerance == 0.05);
        let c = check(&args(&["--mem-nodes", "2", "--sizes", "64K,1M"]), &t).unwrap();
        assert_eq!(c.mem_nodes, [2]);
        assert_eq!(c.sizes, [64 << 10, 1 << 20]);
        let err = |a: &[&str]| check(&args(a), &t).unwrap_err().to_string();
        assert_eq!(
            err(&["--tries", "0"]),
            "--tries 0: at least one timed copy is needed"
        );
        assert_eq!(
            err(&["--sizes", "0"]),
            "--sizes 0: '0' is out of range (1 byte to under 64 PiB)"
        );
        assert_eq!(
            err(&["--mem-nodes", "9"]),
            "--mem-nodes 9: node 9 does not exist (nodes: 0-2)"
        );
        assert!(err(&["--mem-nodes", "x"]).starts_with("--mem-nodes x: "));
        assert_eq!(
            err(&["--phi", "0"]),
            "--phi 0: give MB/s from 1 to 1000000000 (1 PB/s)"
        );
        assert!(err(&["--tolerance", "150"]).contains("0 to 100"));
        let e = err(&["--sizes", "1T"]);
        assert!(e.contains("free on node 0"), "{e}");
        let gpus = [0, 1].map(|ordinal| GpuInfo {
            ordinal,
            name: "GPU".into(),
            pci_bus_id: format!("0000:{:02x}:00.0", ordinal + 1),
        });
        assert_eq!(pick_gpus(&args_gpu(&[]), &gpus).unwrap(), [0, 1]);
        assert_eq!(
            pick_gpus(&args_gpu(&["--gpu", "1,1", "--gpu", "0"]), &gpus).unwrap(),
            [1, 0]
        );
        assert_eq!(
            pick_gpus(&args_gpu(&["--gpu", "5"]), &gpus)
                .unwrap_err()
                .to_string(),
            "--gpu 5: GPU 5 does not exist (CUDA devices: 0-1)"
        );
    }

    #[test]
    fn the_rows_of_the_node_by_node_table() {
        let t = fixture("cxl-memonly");
        assert_eq!(check(&args(&[]), &t).unwrap().cpu_nodes, [0, 1]);
        let c = check(&args(&["--cpu-nodes", "1"]), &t).unwrap();
        assert_eq!(c.cpu_nodes, [1]);
        let c = check(&args(&["--no-pairs"]), &t).unwrap();
        assert!(c.cpu_nodes.is_empty());
        let err = |a: &[&str]| check(&args(a), &t).unwrap_err().to_string();
        assert_eq!(
            err(&["--cpu-nodes", "2"]),
            "--cpu-nodes 2: node 2 has no CPUs (memory only) (nodes with usable CPUs: 0-1)"
        );
        assert!(err(&["--cpu-nodes", "1", "--no-pairs"]).contains("give one of them"));
        assert!(err(&["--cpu-nodes", ""]).contains("the list is empty"));
        assert!(err(&["--cpu-nodes", "x"]).starts_with("--cpu-nodes x: "));
    }

    #[test]
    fn an_empty_document_carries_the_note() {
        let t = fixture("local-1node");
        let mut doc = Document::new(&t);
        doc.finish();
        let bytes = json_with_notes(&doc, &["no CUDA driver".into()]).unwrap();
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["notes"][0], "no CUDA driver");
        assert_eq!(v["records"].as_array().unwrap().len(), 0);
        let loaded = Document::from_json(std::str::from_utf8(&bytes).unwrap()).unwrap();
        assert!(loaded.warnings.is_empty());
        assert!(loaded.document.records.is_empty());
    }
}
