//! `numabench pcie`: host-device bandwidth from every memory node to every
//! GPU (SHOC's BusSpeedDownload and BusSpeedReadback per node), with Phi,
//! alpha_p and bandwidth classes.

use super::select;
use super::units::parse_size;
use crate::analysis::classes::ClassOptions;
use crate::error::usage;
use crate::output::sections::{self, Section};
use crate::placement::NodeSet;
use crate::probes::cuda::Driver;
use crate::probes::pcie::{
    self, Direction, Found, GpuInfo, GpuSummary, KIND_BEST, KIND_SIZE, PcieConfig,
};
use crate::results::{Document, Record};
use crate::topology::{SysfsRoot, Topology, read_topology};
use crate::view::table::bytes;
use anyhow::Result;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Sizes copied when `--sizes` is not given: SHOC's 1 KiB to 512 MiB
/// doubling range less its last step, so each memory node pins at most
/// 256 MiB.
pub const DEFAULT_SIZES: &str = "1K-256M";

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
/// CUDA is loaded at run time (libcuda.so.1, or the file named by
/// NUMABENCH_LIBCUDA). Without the library, or when it finds no GPU, one
/// line saying so goes to stderr and the exit code is 0; --json and --save
/// then still write a results document, with no records and that line
/// under "notes", and --csv prints the header only.
#[derive(clap::Args, Debug)]
pub struct PcieArgs {
    /// GPUs by CUDA device ordinal (as CUDA_VISIBLE_DEVICES leaves them),
    /// e.g. 0 or 0,2; repeatable [default: every GPU].
    #[arg(long = "gpu", value_name = "N", value_delimiter = ',')]
    pub gpu: Vec<usize>,
    /// Only these memory nodes, e.g. 0,2-3 [default: every node with
    /// memory this process may use].
    #[arg(long, value_name = "NODES")]
    pub mem_nodes: Option<String>,
    /// Copy sizes: a list (64K,1M,64M) and/or doubling ranges (1K-512M is
    /// SHOC's range).
    #[arg(long, value_name = "SIZES", default_value = DEFAULT_SIZES)]
    pub sizes: String,
    /// Timed copies per size and direction after one warm-up copy; the best
    /// is reported, every copy is kept in the results document (1 to 1000).
    #[arg(short = 'r', long = "tries", value_name = "N", default_value_t = 10)]
    pub tries: usize,
    /// Phi, the theoretical one-direction bandwidth of the GPU's link, in
    /// MB/s, for every GPU [default: from the PCIe link speed and width in
    /// sysfs]. The thesis uses 12800 for PCIe 2.0 x16.
    #[arg(long, value_name = "MB/S")]
    pub phi: Option<f64>,
    /// Memory nodes whose best bandwidths are within PCT percent of a
    /// class's best share that class.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    pub tolerance: f64,
    /// Also a table of every size per GPU and direction.
    #[arg(long)]
    pub per_size: bool,
    /// One line per figure as CSV.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// The results document (JSON) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the results document to FILE.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Show each measurement on stderr as it starts.
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

/// Sizes as `--sizes` takes them: a comma-separated list of sizes
/// (`64K,1M,64M`) and doubling ranges (`1K-512M`: 1 KiB, 2 KiB, ... up to
/// 512 MiB; an end that is not on the doubling ladder stops it below).
/// Returned ascending without repeats. The error is the reason only,
/// without the flag.
pub fn parse_sizes(text: &str) -> Result<Vec<usize>, String> {
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

/// The checked flags that do not need the driver.
#[derive(Debug)]
struct Checked {
    mem_nodes: Vec<usize>,
    sizes: Vec<usize>,
    opts: ClassOptions,
}

fn check(args: &PcieArgs, topo: &Topology) -> Result<Checked> {
    super::units::tries(args.tries, "--tries", "timed copy")?;
    if args.per_size && (args.json || args.csv) {
        return Err(usage(format!(
            "--per-size adds tables to the text output; {} already holds every size: leave --per-size out",
            if args.json { "--json" } else { "--csv" }
        )));
    }
    if let Some(p) = args.phi {
        super::units::peak(p, "--phi")?;
    }
    if !(0.0..=100.0).contains(&args.tolerance) {
        return Err(usage(format!(
            "--tolerance {}: give a percentage from 0 to 100",
            args.tolerance
        )));
    }
    let sizes =
        parse_sizes(&args.sizes).map_err(|e| usage(format!("--sizes {}: {e}", args.sizes)))?;
    let mem_nodes: Vec<usize> = match &args.mem_nodes {
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
    // One pinned host buffer of the largest size on each node in turn.
    let largest = sizes.last().copied().unwrap_or(0);
    crate::memory::admission::admit_each(
        topo,
        largest as u64,
        &mem_nodes,
        &format!("--sizes {} (the largest)", args.sizes),
        "give smaller --sizes",
    )?;
    if let Some(path) = &args.save {
        super::check_output_path(path, "--save")?;
    }
    Ok(Checked {
        mem_nodes,
        sizes,
        opts: ClassOptions {
            tolerance: args.tolerance / 100.0,
        },
    })
}

/// The GPUs `--gpu` names, each checked against the driver's list.
fn pick_gpus(args: &PcieArgs, gpus: &[GpuInfo]) -> Result<Vec<usize>> {
    if args.gpu.is_empty() {
        return Ok(gpus.iter().map(|g| g.ordinal).collect());
    }
    let mut out = Vec::new();
    for &g in &args.gpu {
        if !gpus.iter().any(|x| x.ordinal == g) {
            return Err(usage(format!(
                "--gpu {g}: GPU {g} does not exist (CUDA devices: {})",
                NodeSet::from_ids(gpus.iter().map(|x| x.ordinal))
            )));
        }
        if !out.contains(&g) {
            out.push(g);
        }
    }
    Ok(out)
}

pub fn run(args: PcieArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    let checked = check(&args, &topo)?;
    let driver = match Driver::load() {
        Ok(d) => d,
        Err(e) if e.is_absent() => {
            return nothing_to_measure(
                &args,
                &topo,
                &format!("numabench pcie: no CUDA driver ({e}); nothing to measure"),
            );
        }
        Err(e) => return Err(e.into()),
    };
    let gpus = match pcie::discover(&driver)? {
        Found::NoDevice(why) => {
            return nothing_to_measure(
                &args,
                &topo,
                &format!(
                    "numabench pcie: the CUDA driver ({}) finds no GPU ({why}); nothing to measure",
                    driver.library()
                ),
            );
        }
        Found::Gpus(g) => g,
    };
    let cfg = PcieConfig {
        gpus: pick_gpus(&args, &gpus)?,
        mem_nodes: checked.mem_nodes,
        sizes: checked.sizes,
        tries: args.tries,
        phi_mb_s: args.phi,
    };
    let interactive = std::io::stderr().is_terminal();
    let verbose = args.verbose;
    let mut progress = move |what: &str| {
        if verbose {
            eprintln!("numabench: measuring {what}");
        } else if interactive {
            eprint!("\r\x1b[K{what} ...");
        }
    };
    let mut doc = Document::new(&topo);
    let result = pcie::measure(&topo, &cfg, &driver, &gpus, &mut progress);
    if interactive && !verbose {
        eprint!("\r\x1b[K");
    }
    doc.records = result?;
    let summaries = pcie::summarise(&doc.records, args.phi, &checked.opts);
    doc.records.extend(pcie::best_records(&summaries));
    let interrupted = crate::interrupt::requested();
    match interrupted {
        None => doc.finish(),
        Some(sig) => super::mark_interrupted(&mut doc, "pcie", sig),
    }
    if let Some(path) = &args.save {
        doc.save(path)?;
    }
    let text = if args.json {
        String::from_utf8(doc.to_json()?)?
    } else if args.csv {
        csv(&doc.records, &summaries)
    } else {
        text(&doc, &summaries, &cfg, args.per_size)
    };
    let text = match interrupted {
        Some(sig) => super::with_stop_line(
            text,
            sig,
            "the sizes and nodes measured before the stop",
            !(args.json || args.csv),
        ),
        None => text,
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if let Some(sig) = interrupted {
        super::exit_interrupted(sig);
    }
    Ok(())
}

/// The document as JSON with a top-level `notes` list (readers of the
/// results document ignore keys they do not know).
fn json_with_notes(doc: &Document, notes: &[String]) -> Result<Vec<u8>> {
    let mut value = serde_json::to_value(doc)?;
    if let Some(obj) = value.as_object_mut() {
        obj.insert("notes".into(), notes.into());
    }
    let mut out = serde_json::to_vec_pretty(&value)?;
    out.push(b'\n');
    Ok(out)
}

/// No driver or no GPU: the one line on stderr, an empty document where
/// one was asked for, exit 0.
fn nothing_to_measure(args: &PcieArgs, topo: &Topology, message: &str) -> Result<()> {
    eprintln!("{message}");
    let mut doc = Document::new(topo);
    doc.finish();
    let json = json_with_notes(&doc, &[message.to_string()])?;
    if let Some(path) = &args.save {
        crate::results::write_output(path, &json)?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        out.write_all(&json)?;
    } else if args.csv {
        out.write_all(CSV_HEADER.as_bytes())?;
    }
    Ok(())
}

const CSV_HEADER: &str = "gpu,gpu_name,pci_bus_id,gpu_node,mem_node,cpu,cpu_node,direction,kind,size_bytes,bandwidth_mb_s,phi_mb_s,alpha_p,class\n";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A parameter as a CSV cell: numbers and strings as they are, null empty.
fn cell(rec: &Record, key: &str) -> String {
    match rec.params.get(key) {
        Some(Value::String(s)) => csv_field(s),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// One line per size and per best figure, with Phi and alpha_p where known.
fn csv(records: &[Record], summaries: &[GpuSummary]) -> String {
    let mut out = String::from(CSV_HEADER);
    let phi_of = |rec: &Record| {
        let g = rec.params.get("gpu").and_then(Value::as_u64)?;
        summaries
            .iter()
            .find(|s| s.gpu as u64 == g)?
            .phi
            .as_ref()
            .map(|p| p.mb_s)
    };
    for rec in records.iter().filter(|r| r.probe == pcie::PROBE) {
        let kind = rec.params.get("kind").and_then(Value::as_str);
        if !matches!(kind, Some(KIND_SIZE) | Some(KIND_BEST)) {
            continue;
        }
        let bw = rec.metrics.get("bandwidth_mb_s").map(|m| m.value);
        let phi = phi_of(rec);
        let alpha_p = bw.zip(phi).map(|(b, p)| b / p);
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            cell(rec, "gpu"),
            cell(rec, "gpu_name"),
            cell(rec, "pci_bus_id"),
            cell(rec, "gpu_node"),
            cell(rec, "mem_node"),
            cell(rec, "cpu"),
            cell(rec, "cpu_node"),
            cell(rec, "direction"),
            cell(rec, "kind"),
            cell(rec, "size_bytes"),
            bw.map_or(String::new(), |b| format!("{b:.1}")),
            phi.map_or(String::new(), |p| format!("{p:.1}")),
            alpha_p.map_or(String::new(), |a| format!("{a:.4}")),
            cell(rec, "class"),
        ));
    }
    out
}

fn opt_text<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// The table of one GPU: a row per memory node, best download and
/// readback with % of Phi and class; then the classes and notes.
fn gpu_section(s: &GpuSummary, topo: &Topology) -> Section {
    let mut sec = Section::new(format!(
        "GPU {}: {} ({}), attached to {}",
        s.gpu,
        s.name,
        s.pci_bus_id,
        s.gpu_node
            .map_or("an unknown node".into(), |n| format!("node {n}"))
    ));
    sec.header = [
        "mem node",
        "cpu",
        "SLIT to GPU",
        "download MB/s",
        "% Phi",
        "class",
        "readback MB/s",
        "% Phi",
        "class",
    ]
    .map(String::from)
    .to_vec();
    for (i, row) in s.rows.iter().enumerate() {
        let mut cells = vec![
            row.mem_node.to_string(),
            match (row.cpu, row.cpu_node) {
                (Some(c), Some(n)) if n != row.mem_node => format!("{c} (node {n})"),
                (c, _) => opt_text(c),
            },
            opt_text(s.gpu_node.and_then(|g| topo.distance(row.mem_node, g))),
        ];
        for dir in Direction::BOTH {
            cells.push(opt_text(row.best(dir).map(|b| format!("{:.0}", b.mb_s))));
            cells.push(opt_text(
                s.alpha_p(i, dir).map(|a| format!("{:.1}%", 100.0 * a)),
            ));
            cells.push(opt_text(s.classes(dir).class_of(i)));
        }
        sec.rows.push(cells);
    }
    sec.lines.push(match &s.phi {
        Some(p) => p.describe(),
        None => "Phi unknown, so no alpha_p (give --phi)".into(),
    });
    for dir in Direction::BOTH {
        let classes = s.classes(dir);
        if classes.is_empty() {
            continue;
        }
        let parts: Vec<String> = classes
            .classes
            .iter()
            .map(|c| {
                let nodes = NodeSet::from_ids(c.members.iter().map(|&i| s.rows[i].mem_node));
                let alpha = s.phi.as_ref().map_or(String::new(), |p| {
                    format!(" (alpha_p {:.4})", c.max / p.mb_s)
                });
                format!(
                    "class {}: <= {:.0} MB/s{alpha}, nodes {nodes}",
                    c.index, c.max
                )
            })
            .collect();
        sec.lines
            .push(format!("{} classes: {}", dir.name(), parts.join("; ")));
    }
    for n in &s.notes {
        sec.lines.push(format!("note: {n}"));
    }
    sec
}

/// Every size of one GPU and direction: a row per size, a column per
/// memory node.
fn per_size_section(records: &[Record], s: &GpuSummary, dir: Direction) -> Section {
    let mut cells: BTreeMap<usize, BTreeMap<usize, f64>> = BTreeMap::new();
    for rec in records.iter().filter(|r| {
        r.probe == pcie::PROBE
            && r.params.get("kind").and_then(Value::as_str) == Some(KIND_SIZE)
            && r.params.get("gpu").and_then(Value::as_u64) == Some(s.gpu as u64)
            && r.params.get("direction").and_then(Value::as_str) == Some(dir.name())
    }) {
        let num = |k: &str| {
            rec.params
                .get(k)
                .and_then(Value::as_u64)
                .map(|v| v as usize)
        };
        if let (Some(size), Some(node), Some(m)) = (
            num("size_bytes"),
            num("mem_node"),
            rec.metrics.get("bandwidth_mb_s"),
        ) {
            cells.entry(size).or_default().insert(node, m.value);
        }
    }
    let mut sec = Section::new(format!("GPU {} {} MB/s by size", s.gpu, dir.name()));
    sec.header = std::iter::once("size".to_string())
        .chain(s.rows.iter().map(|r| format!("node {}", r.mem_node)))
        .collect();
    for (size, by_node) in &cells {
        let mut row = vec![bytes(*size as u64)];
        row.extend(
            s.rows
                .iter()
                .map(|r| opt_text(by_node.get(&r.mem_node).map(|v| format!("{v:.0}")))),
        );
        sec.rows.push(row);
    }
    sec
}

fn text(doc: &Document, summaries: &[GpuSummary], cfg: &PcieConfig, per_size: bool) -> String {
    let topo = &doc.host.topology;
    let range = match (cfg.sizes.first(), cfg.sizes.last()) {
        (Some(a), Some(b)) if a != b => format!("{} to {}", bytes(*a as u64), bytes(*b as u64)),
        (Some(a), _) => bytes(*a as u64),
        _ => "-".into(),
    };
    let mut secs = Vec::new();
    let mut about = Section::new("what was measured");
    about.lines.push(format!(
        "copies from page-locked host memory bound to each memory node: download = host to GPU, readback = GPU to host; MB/s = 10^6 bytes/s; sizes {range} ({} sizes), each the best of {} timed copies; a node's figure is the best of the largest sizes (at least 1/{} of the largest)",
        cfg.sizes.len(),
        cfg.tries,
        pcie::LARGE_SIZES
    ));
    about.lines.push(
        "% Phi is alpha_p = bandwidth / Phi (Braithwaite, eq. 4.3); classes group memory nodes whose best figures are close".into(),
    );
    secs.push(about);
    for s in summaries {
        secs.push(gpu_section(s, topo));
        if per_size {
            for dir in Direction::BOTH {
                secs.push(per_size_section(&doc.records, s, dir));
            }
        }
    }
    let notes: Vec<String> = {
        let mut n: Vec<String> = doc
            .records
            .iter()
            .filter(|r| {
                r.probe == pcie::PROBE
                    && r.params.get("kind").and_then(Value::as_str) == Some(KIND_SIZE)
            })
            .flat_map(|r| r.notes.iter().cloned())
            .collect();
        n.sort();
        n.dedup();
        n
    };
    if !notes.is_empty() {
        let mut sec = Section::new("notes");
        sec.lines = notes;
        secs.push(sec);
    }
    sections::text_titled(
        Some(&format!(
            "numabench pcie: {} ({}), {}",
            doc.host.hostname, doc.host.cpu_model, doc.started
        )),
        &secs,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::pcie::{CpuChoice, Phi, gpu_record, size_record, summarise};
    use crate::topology::fixture;

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

    #[test]
    fn flags_are_checked_before_anything_runs() {
        let t = fixture("cxl-memonly");
        let c = check(&args(&[]), &t).unwrap();
        assert_eq!(c.mem_nodes, [0, 1, 2]);
        assert_eq!(c.sizes.len(), 19);
        assert_eq!(c.opts.tolerance, 0.10);
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
            "--sizes 0: '0' is out of range (1 byte to 64 PiB)"
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
        assert_eq!(pick_gpus(&args(&[]), &gpus).unwrap(), [0, 1]);
        assert_eq!(
            pick_gpus(&args(&["--gpu", "1,1", "--gpu", "0"]), &gpus).unwrap(),
            [1, 0]
        );
        assert_eq!(
            pick_gpus(&args(&["--gpu", "5"]), &gpus)
                .unwrap_err()
                .to_string(),
            "--gpu 5: GPU 5 does not exist (CUDA devices: 0-1)"
        );
    }

    /// A measured-looking document of the two-node fixture: its GPU on node
    /// 1 is faster from node 1.
    fn measured() -> (Document, Vec<GpuSummary>, PcieConfig) {
        let t = fixture("two-node");
        let gpu = GpuInfo {
            ordinal: 0,
            name: "Tesla, \"test\"".into(),
            pci_bus_id: "0000:3B:00.0".into(),
        };
        let acc = pcie::find_accelerator(&t, &gpu.pci_bus_id).cloned();
        let phi = acc.as_ref().and_then(Phi::of_link);
        let mut doc = Document::new(&t);
        doc.records
            .push(gpu_record(&gpu, acc.as_ref(), phi.as_ref()));
        for dir in Direction::BOTH {
            for node in [0usize, 1] {
                let choice = CpuChoice {
                    cpu: node * 8,
                    cpu_node: node,
                };
                for size in [1 << 20, 64 << 20] {
                    let gb_s =
                        if node == 1 { 25.0 } else { 20.0 } * size as f64 / (64 << 20) as f64;
                    let t = size as f64 / (gb_s * 1e9);
                    doc.records.push(size_record(
                        &gpu,
                        acc.as_ref(),
                        node,
                        choice,
                        dir,
                        size,
                        &[t * 1.2, t],
                    ));
                }
            }
        }
        let s = summarise(&doc.records, None, &ClassOptions::default());
        doc.records.extend(pcie::best_records(&s));
        let cfg = PcieConfig {
            gpus: vec![0],
            mem_nodes: vec![0, 1],
            sizes: vec![1 << 20, 64 << 20],
            tries: 2,
            phi_mb_s: None,
        };
        (doc, s, cfg)
    }

    #[test]
    fn the_table_shows_phi_alpha_p_and_classes() {
        let (doc, s, cfg) = measured();
        let out = text(&doc, &s, &cfg, true);
        assert!(
            out.contains("GPU 0: Tesla, \"test\" (0000:3B:00.0), attached to node 1"),
            "{out}"
        );
        assert!(out.contains("Phi = 31508 MB/s per direction"), "{out}");
        // Node 1: 25000 MB/s = 79.3% of Phi, class 0; node 0 class 1.
        let row1 = out
            .lines()
            .find(|l| l.trim_start().starts_with("1  "))
            .unwrap();
        assert!(row1.contains("25000  79.3%      0"), "{row1}");
        let row0 = out
            .lines()
            .find(|l| l.trim_start().starts_with("0  "))
            .unwrap();
        assert!(row0.contains("20000  63.5%      1"), "{row0}");
        assert!(
            out.contains("download classes: class 0: <= 25000 MB/s (alpha_p 0.7935), nodes 1; class 1: <= 20000 MB/s (alpha_p 0.6348), nodes 0"),
            "{out}"
        );
        assert!(out.contains("GPU 0 readback MB/s by size"), "{out}");
        assert!(out.contains("64 MiB   20000   25000"), "{out}");
    }

    #[test]
    fn csv_has_every_size_and_best_with_alpha_p() {
        let (doc, s, _) = measured();
        let out = csv(&doc.records, &s);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], CSV_HEADER.trim_end());
        // 2 directions x 2 nodes x (2 sizes + best).
        assert_eq!(lines.len(), 1 + 12);
        assert!(
            lines.contains(
                &"0,\"Tesla, \"\"test\"\"\",0000:3B:00.0,1,1,8,1,download,best,67108864,25000.0,31507.7,0.7935,0"
            ),
            "{out}"
        );
        assert!(
            lines.contains(
                &"0,\"Tesla, \"\"test\"\"\",0000:3B:00.0,1,0,0,0,readback,size,1048576,312.5,31507.7,0.0099,"
            ),
            "{out}"
        );
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
