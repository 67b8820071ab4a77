//! `numabench model`: the data-access performance model of a measured
//! matrix: bandwidth classes, alpha_i = class bandwidth / Gamma, and
//! D = sum(alpha_i * theta_i) for a given access mix, a running process, or
//! a mixed placement measured now.

use super::matrix::pick_kernel;
use super::select;
use crate::analysis::atlas::Atlas;
use crate::analysis::model as m;
use crate::analysis::placement::{self, Prediction};
use crate::error::usage;
use crate::output::sections::{self, Section};
use crate::placement::{numa_maps, procstat};
use crate::probes::matrix::MatrixConfig;
use crate::probes::measure::Timing;
use crate::probes::validate;
use crate::results::{Better, Document, Record};
use crate::topology::{SysfsRoot, Topology, read_topology};
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Apply the data-access performance model (Braithwaite 2012) to a matrix
/// results file: bandwidth classes with their alpha values, D for an
/// access mix (--theta) or for a running process (--pid); or measure a
/// mixed placement now and compare it with the prediction (--validate).
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// A results file from `numabench matrix --save FILE` (or `numabench
    /// run`).
    #[arg(value_name = "RESULTS")]
    pub results: Option<PathBuf>,
    /// Fractions of accesses per bandwidth class, class 0 (fastest) first,
    /// e.g. 0.5,0.25,0.25 or 50%,25%,25%; prints D = sum(alpha_i *
    /// theta_i) and its loss against alpha_0.
    #[arg(long, value_name = "LIST")]
    pub theta: Option<String>,
    /// Classes as seen from this CPU node for --theta [default: the
    /// system-wide classes].
    #[arg(long, value_name = "NODE")]
    pub cpu_node: Option<usize>,
    /// Read where process PID's pages are (/proc/PID/numa_maps) and
    /// predict D for running it on each CPU node, with numactl advice.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Theoretical peak bandwidth Gamma of one node's memory, MB/s
    /// [default: the figure recorded with the matrix (DMI), else the best
    /// measured bandwidth].
    #[arg(long, value_name = "MB/S")]
    pub peak: Option<f64>,
    /// Measure now: one thread on --cpu-node (default: the first) streams
    /// over memory split across --mem-nodes by --weights, and the measured
    /// bandwidth is compared with the predictions from the pure placements.
    #[arg(long)]
    pub validate: bool,
    /// Weights of the memory nodes for --validate, e.g. 1:1 or 3:1
    /// [default: equal].
    #[arg(long, value_name = "W:W...")]
    pub weights: Option<String>,
    /// Memory nodes for --validate [default: every usable memory node].
    #[arg(long, value_name = "NODES")]
    pub mem_nodes: Option<String>,
    /// Working set for --validate, e.g. 512M [default: as `matrix`].
    #[arg(short = 's', long, value_name = "SIZE")]
    pub size: Option<String>,
    /// The results document (JSON) on stdout: Gamma, every class with its
    /// alpha, D for --theta, predictions for --pid, or the --validate
    /// measurement.
    #[arg(long)]
    pub json: bool,
    /// Also write the results document to FILE.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
}

/// Loads a results file; a missing or damaged file is the user's input
/// error, said in one line.
pub fn load(path: &std::path::Path) -> Result<Document> {
    let loaded = Document::load(path).map_err(|e| usage(format!("{e:#}")))?;
    for w in &loaded.warnings {
        eprintln!(
            "numabench: warning: {}: {}",
            crate::output::escape(&path.display().to_string()),
            crate::output::escape(w)
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
            (args.mem_nodes.is_some(), "--mem-nodes"),
            (args.size.is_some(), "--size"),
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
    if args.validate && args.peak.is_some() {
        return Err(usage(
            "--peak applies to a results file; --validate compares measured bandwidths only",
        ));
    }
    if let Some(p) = args.peak {
        super::units::peak(p, "--peak")?;
    }
    if let Some(path) = &args.save {
        super::check_output_path(path, "--save")?;
    }
    Ok(())
}

pub fn run(args: ModelArgs) -> Result<()> {
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
    let atlas = Atlas::from_records(&doc.records);
    if atlas.single.is_empty() {
        return Err(usage(format!(
            "{}: no single-thread matrix bandwidth in it (make one with 'numabench matrix --save FILE')",
            path.display()
        )));
    }
    if let Some(c) = args.cpu_node
        && !atlas.cpu_nodes.contains(&c)
    {
        return Err(usage(format!(
            "--cpu-node {c}: the matrix has rows for CPU nodes {:?} only",
            atlas.cpu_nodes
        )));
    }
    if let Some(c) = args.cpu_node
        && thetas.is_none()
    {
        // The class tables already show every CPU node; --pid predicts
        // for each of them.
        return Err(usage(format!(
            "--cpu-node {c} picks the classes --theta uses: add --theta, or leave --cpu-node out (the tables show every CPU node)"
        )));
    }
    let topo = &doc.host.topology;
    let gamma =
        placement::peak(&atlas, args.peak, atlas.peak.clone()).expect("the matrix has bandwidth");
    let mut out = crate::probes::model::view::class_sections(&atlas, topo, &gamma);
    let mut records = class_records(&atlas, &gamma);
    if let Some(thetas) = &thetas {
        let (s, r) = theta_section(&atlas, &gamma, args.cpu_node, thetas)?;
        out.push(s);
        records.push(r);
    }
    if let Some(pid) = args.pid {
        let (s, r) = pid_section(&atlas, topo, &gamma, pid)?;
        out.push(s);
        records.extend(r);
    }
    // The model's results keep the measured machine's host description.
    let mut result = doc.clone();
    result.command = std::env::args().collect();
    result.records = records;
    if let Some(path) = &args.save {
        result.save(path)?;
    }
    let text = if args.json {
        String::from_utf8(result.to_json()?)?
    } else {
        sections::text(&out)
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

/// Gamma and every class with its alpha, per CPU node and system-wide.
fn class_records(atlas: &Atlas, gamma: &m::Peak) -> Vec<Record> {
    let mut out = vec![
        Record::new("model", "gamma")
            .param("source", gamma.describe())
            .metric("peak_mb_s", gamma.mb_s, "MB/s", Better::Higher),
    ];
    let class = |name: String, k: usize, max: f64, nodes: Vec<String>| {
        Record::new("model", &name)
            .param("class", k)
            .param("members", nodes)
            .metric("bandwidth_mb_s", max, "MB/s", Better::Higher)
            .metric("alpha", m::alpha(max, gamma.mb_s), "", Better::Higher)
    };
    for &c in &atlas.cpu_nodes {
        let rc = placement::row_classes(atlas, c);
        for k in &rc.classes.classes {
            let members = rc.members(k.index).iter().map(|m| m.to_string()).collect();
            out.push(
                class(
                    format!("class {} from node {c}", k.index),
                    k.index,
                    k.max,
                    members,
                )
                .param("cpu_node", c),
            );
        }
    }
    let (cells, classes) = placement::system_classes(atlas);
    for k in &classes.classes {
        let members = k
            .members
            .iter()
            .map(|&i| format!("{}->{}", cells[i].0, cells[i].1))
            .collect();
        out.push(class(
            format!("class {} system-wide", k.index),
            k.index,
            k.max,
            members,
        ));
    }
    out
}

fn theta_section(
    atlas: &Atlas,
    gamma: &m::Peak,
    cpu_node: Option<usize>,
    thetas: &[f64],
) -> Result<(Section, Record)> {
    let (classes, from) = match cpu_node {
        Some(c) => (
            placement::row_classes(atlas, c).classes,
            format!("from CPU node {c}"),
        ),
        None => (
            placement::system_classes(atlas).1,
            "system-wide".to_string(),
        ),
    };
    let alphas: Vec<f64> = classes
        .classes
        .iter()
        .map(|c| m::alpha(c.max, gamma.mb_s))
        .collect();
    let d = m::performance(&alphas, thetas).map_err(|e| usage(format!("--theta: {e}")))?;
    let mut s = Section::new(format!("data-access performance D ({from} classes)"));
    let terms: Vec<String> = thetas
        .iter()
        .zip(&alphas)
        .map(|(t, a)| format!("{t:.4} x {a:.4}"))
        .collect();
    s.lines.push(format!("D = {} = {d:.4}", terms.join(" + ")));
    s.lines.push(format!(
        "predicted bandwidth D x Gamma = {:.0} MB/s",
        d * gamma.mb_s
    ));
    s.lines.push(format!(
        "loss against alpha_0: D - alpha_0 = {:+.4} ({:+.1}% of alpha_0)",
        m::loss(d, alphas[0]),
        100.0 * m::loss(d, alphas[0]) / alphas[0]
    ));
    let mut rec = Record::new("model", &format!("D {from}"))
        .param("theta", thetas.to_vec())
        .metric("d", d, "", Better::Higher)
        .metric("loss", m::loss(d, alphas[0]), "", Better::Higher)
        .metric("bandwidth_mb_s", d * gamma.mb_s, "MB/s", Better::Higher);
    if let Some(c) = cpu_node {
        rec = rec.param("cpu_node", c);
    }
    Ok((s, rec))
}

fn pid_section(
    atlas: &Atlas,
    topo: &Topology,
    gamma: &m::Peak,
    pid: u32,
) -> Result<(Section, Vec<Record>)> {
    let maps = numa_maps::read_numa_maps(pid).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => usage(format!("--pid {pid}: no such process")),
        std::io::ErrorKind::PermissionDenied => usage(format!(
            "--pid {pid}: cannot read its numa_maps (permission denied; run as its owner or root)"
        )),
        _ => anyhow::anyhow!("--pid {pid}: {e}"),
    })?;
    let bytes = numa_maps::bytes_by_node(&maps);
    let total: u64 = bytes.values().sum();
    let mut s = Section::new(format!("process {pid}: predicted D on each CPU node"));
    let shares: Vec<String> = bytes
        .iter()
        .map(|(n, b)| format!("node {n} {:.1}%", 100.0 * *b as f64 / total.max(1) as f64))
        .collect();
    s.lines.push(format!(
        "its {} are on {}",
        crate::view::table::bytes(total),
        if shares.is_empty() {
            "no node (nothing resident)".into()
        } else {
            shares.join(", ")
        }
    ));
    let (preds, unknown) = placement::predict_for_pages(atlas, &bytes, gamma);
    if !unknown.is_empty() {
        s.lines.push(format!(
            "memory on nodes {unknown:?} is not in the matrix and counts as nothing"
        ));
    }
    s.header = vec!["cpu node".into(), "D".into(), "predicted MB/s".into()];
    for p in &preds {
        s.rows.push(vec![
            p.cpu_node.to_string(),
            format!("{:.4}", p.d),
            format!("{:.0}", p.mb_s),
        ]);
    }
    let now = procstat::process_stat(pid as i32)
        .ok()
        .map(|s| s.cpu)
        .and_then(|c| topo.cpu(c))
        .and_then(|c| c.node);
    if let Some(best) = best_prediction(&preds) {
        if let Some(n) = now {
            s.lines.push(format!("it last ran on node {n}"));
        }
        if now == Some(best.cpu_node) {
            s.lines.push(format!(
                "advice: it already runs on the best node ({}); keep it there",
                best.cpu_node
            ));
        } else {
            s.lines.push(format!(
                "advice: run it on node {} (D {:.4}): numactl --cpunodebind={} <command>, or migratepages/taskset for the running process",
                best.cpu_node, best.d, best.cpu_node
            ));
        }
    }
    let records = preds
        .iter()
        .map(|p| {
            Record::new("model", &format!("pid {pid} on node {}", p.cpu_node))
                .param("pid", pid)
                .param("cpu_node", p.cpu_node)
                .metric("d", p.d, "", Better::Higher)
                .metric("bandwidth_mb_s", p.mb_s, "MB/s", Better::Higher)
        })
        .collect();
    Ok((s, records))
}

/// The CPU node with the highest D; ties go to the lowest node.
pub fn best_prediction(preds: &[Prediction]) -> Option<&Prediction> {
    preds
        .iter()
        .reduce(|a, b| if b.d > a.d + 1e-12 { b } else { a })
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

fn validate_now(args: &ModelArgs) -> Result<()> {
    let topo = read_topology(&SysfsRoot::live())?;
    let cpu_node = match args.cpu_node {
        Some(c) => {
            select::cpu_node(&topo, c, "--cpu-node")?;
            c
        }
        None => topo
            .usable_cpu_nodes()
            .first()
            .ok_or_else(|| anyhow::anyhow!("this process may run on no CPU"))?,
    };
    let mems: Vec<usize> = match &args.mem_nodes {
        Some(t) => {
            let set = crate::placement::NodeSet::parse_list(t)
                .map_err(|e| usage(format!("--mem-nodes {t}: {e} (write e.g. 0-1)")))?;
            if set.is_empty() {
                return Err(usage(format!(
                    "--mem-nodes '{t}': the list is empty; name at least one node (e.g. 0-1) or leave --mem-nodes out for all"
                )));
            }
            for n in set.iter() {
                select::memory_node(&topo, n, "--mem-nodes")?;
            }
            set.iter().collect()
        }
        None => topo.usable_memory_nodes().iter().collect(),
    };
    let weights = match &args.weights {
        Some(t) => parse_weights(t, mems.len())?,
        None => vec![1; mems.len()],
    };
    let cfg = MatrixConfig {
        kernel: pick_kernel("triad")?,
        working_set: args
            .size
            .as_deref()
            .map(|t| {
                super::units::size_at_least(t, 1 << 20)
                    .map_err(|e| usage(format!("--size {t}: {e}")))
            })
            .transpose()?,
        latency_bytes: None,
        timing: Timing::default(),
        single: true,
        saturated: false,
        latency: false,
        huge: false,
        time_limit: None,
        cpu_nodes: None,
        mem_nodes: None,
    };
    let pairs: Vec<(usize, u32)> = mems.iter().copied().zip(weights).collect();
    let interactive = std::io::stderr().is_terminal();
    let mut progress = |what: &str| {
        if interactive {
            eprint!("\r\x1b[K{what} ...");
        }
    };
    let outcome = validate::run(&topo, &cfg, cpu_node, &pairs, &mut progress)?;
    if interactive {
        eprint!("\r\x1b[K");
    }
    let v = match outcome {
        validate::Outcome::Done(v) => v,
        validate::Outcome::Stopped(pure) => {
            let sig = crate::interrupt::requested().unwrap_or(libc::SIGINT);
            return stopped_validation(args, &topo, cpu_node, &pure, pairs.len(), sig);
        }
    };
    let bws: Vec<f64> = v.pure.iter().map(|p| p.2.stream_mb_s()).collect();
    let thetas = v.thetas();
    let measured = v.mixed.stream_mb_s();
    let linear = m::predict_linear(&bws, &thetas)?;
    let harmonic = m::predict_harmonic(&bws, &thetas)?;
    let err = |p: f64| m::error_pct(p, measured).unwrap_or(f64::NAN);
    let mut rec = Record::new("model", &format!("validate {cpu_node}"))
        .param("cpu_node", cpu_node)
        .param("kernel", v.mixed.kernel.op.to_string())
        .param("variant", v.mixed.kernel.name)
        .param("size_bytes", v.mixed.array_bytes)
        .param(
            "weights",
            pairs
                .iter()
                .map(|(n, w)| format!("{n}:{w}"))
                .collect::<Vec<_>>()
                .join(","),
        )
        .metric("bandwidth_mb_s", measured, "MB/s", Better::Higher)
        .metric("predicted_linear_mb_s", linear, "MB/s", Better::Higher)
        .metric("predicted_harmonic_mb_s", harmonic, "MB/s", Better::Higher)
        .metric("error_linear_pct", err(linear), "%", Better::Lower)
        .metric("error_harmonic_pct", err(harmonic), "%", Better::Lower);
    rec.samples
        .insert("bandwidth_mb_s".into(), v.mixed.stream_samples());
    let mut doc = Document::new(&topo);
    doc.records.push(rec);
    doc.finish();
    if let Some(path) = &args.save {
        doc.save(path)?;
    }
    if args.json {
        std::io::stdout().lock().write_all(&doc.to_json()?)?;
        return Ok(());
    }
    let mut s = Section::new(format!(
        "model check: one thread on CPU node {cpu_node}, {} ({}), memory split by weight",
        v.mixed.kernel.op, v.mixed.kernel.name
    ));
    s.header = vec![
        "memory node".into(),
        "weight".into(),
        "theta asked".into(),
        "theta found".into(),
        "MB/s alone".into(),
    ];
    for (i, (n, w, _)) in v.pure.iter().enumerate() {
        s.rows.push(vec![
            n.to_string(),
            w.to_string(),
            format!("{:.3}", thetas[i]),
            format!("{:.3}", v.measured_thetas()[i]),
            format!("{:.0}", bws[i]),
        ]);
    }
    s.lines
        .push(format!("measured mixed placement: {measured:.0} MB/s"));
    s.lines.push(format!(
        "predicted, the thesis' linear model sum(theta_i x b_i): {linear:.0} MB/s, error {:+.1}%",
        err(linear)
    ));
    s.lines.push(format!(
        "predicted, time-weighted 1 / sum(theta_i / b_i): {harmonic:.0} MB/s, error {:+.1}%",
        err(harmonic)
    ));
    let mut by_node: BTreeMap<usize, u64> = BTreeMap::new();
    for (n, c) in &v.mixed.seen.pages_by_node {
        *by_node.entry(*n).or_default() += c;
    }
    s.lines.push(format!(
        "pages found per node in the mixed run: {}",
        by_node
            .iter()
            .map(|(n, c)| format!("node {n}: {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    std::io::stdout()
        .lock()
        .write_all(sections::text(&[s]).as_bytes())?;
    Ok(())
}

/// What a stop left of a validation: the pure placements measured, saved
/// and shown as such, with no prediction checked.
fn stopped_validation(
    args: &ModelArgs,
    topo: &crate::topology::Topology,
    cpu_node: usize,
    pure: &[(usize, u32, crate::probes::measure::Bandwidth)],
    nodes: usize,
    sig: i32,
) -> Result<()> {
    let mut doc = Document::new(topo);
    for (n, w, b) in pure {
        let rec = Record::new("model", &format!("validate {cpu_node} pure {n}"))
            .param("cpu_node", cpu_node)
            .param("mem_node", *n)
            .param("weight", *w)
            .param("size_bytes", b.array_bytes)
            .metric("bandwidth_mb_s", b.stream_mb_s(), "MB/s", Better::Higher);
        doc.records.push(rec);
    }
    super::mark_interrupted(&mut doc, "model", sig);
    if let Some(path) = &args.save {
        doc.save(path)?;
    }
    let kept = format!(
        "{} of {nodes} node(s) measured alone and not the mixed placement: no prediction checked",
        pure.len()
    );
    let line = super::interrupted_line(sig, &kept);
    if args.json {
        eprintln!("numabench: {line}");
        std::io::stdout().lock().write_all(&doc.to_json()?)?;
    } else {
        let mut text = format!("{line}\n");
        for (n, _, b) in pure {
            text.push_str(&format!(
                "memory node {n} alone: {:.0} MB/s\n",
                b.stream_mb_s()
            ));
        }
        std::io::stdout().lock().write_all(text.as_bytes())?;
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
