//! `numabench run`: the main job. Characterises this machine end to end
//! and leaves a results folder with the results document, an HTML report
//! and CSVs.

use crate::kernels::{self, Op, Store};
use crate::output::html::{Run, report};
use crate::probes::matrix::{self, MatrixConfig};
use crate::probes::measure::Timing;
use crate::probes::sweep::{self, SweepConfig};
use crate::results::{Document, write_output};
use crate::topology::{SysfsRoot, read_topology};
use anyhow::{Context, Result};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Characterise this machine: topology, the node-to-node matrix with
/// bandwidth classes and model parameters, a cache-aware sweep of
/// bandwidth and latency; writes results.json, report.html and CSVs into a
/// new folder and prints a summary.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Where results folders go; each run makes a new
    /// `<host>-<date>-<time>` folder there and never overwrites one.
    #[arg(long, value_name = "DIR", default_value = "numabench-results")]
    pub dir: PathBuf,
    /// What to run: `default` (topology, matrix, sweep; about a minute on a
    /// small machine) or `full` (also perf's mem suite at 5 s per test, the
    /// four AutoNUMA tests and numa_test with one task per CPU; minutes).
    #[arg(long, value_name = "NAME", default_value = "default", value_parser = ["default", "full"])]
    pub profile: String,
}

/// `s` with every character but ASCII letters, digits, `-` and `.` made
/// `_`, so a host or record name becomes part of one plain file name: no
/// `/`, no space, nothing a shell would read specially.
fn file_name_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A new folder under `dir` named after the host and `started`, with a
/// numeric suffix if one of that name exists (created atomically, so two
/// runs never share one).
fn new_folder(dir: &Path, host: &str, started: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let stamp: String = started
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect::<String>()
        .replace('T', "-");
    let host = file_name_safe(host);
    for n in 1..1000 {
        let name = if n == 1 {
            format!("{host}-{stamp}")
        } else {
            format!("{host}-{stamp}-{n}")
        };
        let path = dir.join(name);
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    anyhow::bail!(
        "too many results folders for {host}-{stamp} in {}",
        dir.display()
    )
}

/// Progress on stderr: one rewritten line on a terminal, nothing otherwise.
struct Progress {
    interactive: bool,
    started: Instant,
}

impl Progress {
    fn show(&self, step: usize, steps: usize, what: &str) {
        if self.interactive {
            let filled = step * 20 / steps;
            eprint!(
                "\r\x1b[K[{}{}] {:>4.0} s  {what}",
                "#".repeat(filled),
                ".".repeat(20 - filled),
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    fn done(&self) {
        if self.interactive {
            eprint!("\r\x1b[K");
        }
    }
}

pub fn run(args: RunArgs) -> Result<()> {
    crate::results::check_output_dir(&args.dir, "--dir")?;
    let topo = read_topology(&SysfsRoot::live())?;
    let mut doc = Document::new(&topo);
    let progress = Progress {
        interactive: std::io::stderr().is_terminal(),
        started: Instant::now(),
    };
    let full = args.profile == "full";
    let steps = if full { 2 + FULL_STAGES.len() } else { 2 };
    let cfg = MatrixConfig {
        kernel: kernels::best(Op::Triad, Store::Regular).context("no triad kernel runs here")?,
        working_set: None,
        latency_bytes: None,
        timing: Timing::default(),
        single: true,
        saturated: true,
        latency: true,
        huge: false,
        time_limit: None,
        cpu_nodes: None,
        mem_nodes: None,
    };
    let stopped = || crate::interrupt::requested().is_some();
    let m = matrix::run(&topo, &cfg, &mut |w| {
        progress.show(0, steps, &format!("matrix: {w}"))
    })?;
    doc.records.extend(m.records());
    match matrix::peak_record(&topo) {
        Ok(rec) => doc.records.push(rec),
        Err(why) => {
            if let Some(first) = doc.records.first_mut() {
                first
                    .notes
                    .push(format!("no theoretical peak from DMI: {why}"));
            }
        }
    }
    let (rows, notes) = if stopped() {
        (Vec::new(), Vec::new())
    } else {
        sweep::run(&topo, &SweepConfig::default(), &mut |w| {
            progress.show(1, steps, &format!("sweep: {w}"))
        })?
    };
    let first_sweep = doc.records.len();
    doc.records.extend(rows.iter().map(super::sweep::record));
    if let Some(r) = doc.records.get_mut(first_sweep) {
        r.notes.extend(notes);
    }
    let mut logs = Vec::new();
    if full {
        for (i, (name, stage_args)) in FULL_STAGES.iter().enumerate() {
            if stopped() {
                break;
            }
            progress.show(2 + i, steps, name);
            let mut argv: Vec<String> = stage_args.iter().map(|a| a.to_string()).collect();
            if *name == "sched" {
                argv.insert(1, topo.allowed.cpus.len().max(2).to_string());
            }
            let (records, log, failure) = stage(&argv);
            // A stage the stop reached says so in its own records.
            if let Some(why) = failure.filter(|_| !stopped()) {
                eprintln!("numabench: warning: {name}: {why}; the other parts go on");
                let mut note = crate::results::Record::new(name, "not complete");
                note.notes.push(format!("{name}: {why} (see {name}.log)"));
                doc.records.push(note);
            }
            doc.records.extend(records);
            logs.push((*name, log));
        }
    }
    progress.done();
    let interrupted = crate::interrupt::requested();
    match interrupted {
        None => doc.finish(),
        Some(sig) => super::mark_interrupted(&mut doc, "run", sig),
    }
    let folder = new_folder(&args.dir, &topo.hostname, &doc.started)?;
    doc.save(&folder.join("results.json"))?;
    for (name, log) in &logs {
        write_output(&folder.join(format!("{name}.log")), log.as_bytes())?;
    }
    for r in doc.records.iter().filter(|r| r.probe == "autonuma") {
        for s in &r.series {
            let file = format!("autonuma-{}-{}.csv", r.name, s.name);
            let file = file_name_safe(&file);
            write_output(&folder.join(file), series_csv(s).as_bytes())?;
        }
    }
    let view = crate::output::matrix::View::new(&doc, None);
    write_output(&folder.join("matrix.csv"), view.csv().as_bytes())?;
    write_output(
        &folder.join("sweep.csv"),
        crate::output::sweep::csv(&rows).as_bytes(),
    )?;
    let html = report(&[Run {
        label: "run".into(),
        doc: &doc,
    }]);
    write_output(&folder.join("report.html"), html.as_bytes())?;
    let mut text = String::new();
    if let Some(sig) = interrupted {
        text.push_str(&super::interrupted_line(
            sig,
            "the folder holds what was measured before the stop",
        ));
        text.push('\n');
    }
    text.push_str(&summary(
        &doc,
        &rows,
        progress.started.elapsed().as_secs_f64(),
    ));
    text.push_str(&format!(
        "report: {}\n",
        folder.join("report.html").display()
    ));
    crate::console::out(&text);
    if let Some(sig) = interrupted {
        super::exit_interrupted(sig);
    }
    Ok(())
}

/// The parts `--profile full` adds, each run as a child numabench with
/// `--json`: the workload engines fork, which wants a single-threaded
/// parent, and a child keeps one part's failure from taking the others.
const FULL_STAGES: [(&str, &[&str]); 3] = [
    ("mem", &["mem", "--all", "--secs", "5", "--json"]),
    ("autonuma", &["autonuma", "all", "--json"]),
    // The task count (one per allowed CPU) goes after "sched"; 1000
    // passes keep the tasks busy past the burst at 3 s.
    ("sched", &["sched", "--passes", "1000", "--json"]),
];

/// Runs this binary with `args`; returns the records of the results
/// document it printed (those of a failed run too, when it printed one),
/// its stderr (its human output) and why it failed, if it did.
fn stage(args: &[String]) -> (Vec<crate::results::Record>, String, Option<String>) {
    let out = match std::env::current_exe().and_then(|exe| {
        use std::process::Stdio;
        let mut cmd = std::process::Command::new(exe);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        crate::interrupt::tie_child(&mut cmd);
        wait_passing_stops_on(cmd.spawn()?)
    }) {
        Ok(out) => out,
        Err(e) => {
            return (
                Vec::new(),
                String::new(),
                Some(format!("cannot start: {e}")),
            );
        }
    };
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    let doc = serde_json::from_slice::<Document>(&out.stdout);
    let failure = if !out.status.success() {
        let last = log
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Some(format!("failed ({}): {last}", out.status))
    } else {
        doc.as_ref()
            .err()
            .map(|e| format!("its results do not parse: {e}"))
    };
    (doc.map(|d| d.records).unwrap_or_default(), log, failure)
}

/// Waits for a stage, passing a stop signal this process receives on to it
/// once (it is in a process group of its own); a second signal kills it
/// with this process (see `interrupt`).
fn wait_passing_stops_on(child: std::process::Child) -> std::io::Result<std::process::Output> {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    let pid = child.id() as i32;
    crate::interrupt::set_child(pid);
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let mut passed_on = false;
    let out = loop {
        match rx.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(out) => break out,
            Err(RecvTimeoutError::Timeout) => {
                if let Some(sig) = crate::interrupt::requested()
                    && !passed_on
                {
                    crate::interrupt::pass_on(pid, sig);
                    passed_on = true;
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                break Err(std::io::Error::other("lost track of the stage"));
            }
        }
    };
    crate::interrupt::set_child(0);
    out
}

/// A series as CSV: the x column, then one column per line.
fn series_csv(s: &crate::results::Series) -> String {
    let field = |t: &str| {
        if t.contains([',', '"', '\n']) {
            format!("\"{}\"", t.replace('"', "\"\""))
        } else {
            t.to_string()
        }
    };
    let mut out = field(&format!("{} ({})", s.x_label, s.x_unit));
    for l in &s.lines {
        out.push(',');
        out.push_str(&field(&format!("{} {} ({})", l.label, s.y_label, s.y_unit)));
    }
    out.push('\n');
    for (i, x) in s.x.iter().enumerate() {
        out.push_str(&x.to_string());
        for l in &s.lines {
            out.push(',');
            if let Some(y) = l.y.get(i) {
                out.push_str(&y.to_string());
            }
        }
        out.push('\n');
    }
    out
}

fn summary(doc: &Document, rows: &[crate::probes::sweep::SweepRow], secs: f64) -> String {
    let a = crate::analysis::atlas::Atlas::from_records(&doc.records);
    let h = &doc.host;
    let mut out = format!(
        "{} ({}), {} node(s) with memory, {} CPU(s); measured in {secs:.0} s\n",
        crate::output::escape(&h.hostname),
        crate::output::escape(&h.cpu_model),
        h.topology.nodes.iter().filter(|n| n.has_memory).count(),
        h.topology.allowed.cpus.len()
    );
    let range = |g: &crate::analysis::atlas::Grid, local: bool| {
        let v: Vec<f64> = g
            .values
            .iter()
            .filter(|((c, m), _)| (c == m) == local)
            .map(|(_, v)| *v)
            .collect();
        let lo = v.iter().copied().reduce(f64::min)?;
        let hi = v.iter().copied().reduce(f64::max)?;
        Some((lo, hi))
    };
    let fmt = |r: Option<(f64, f64)>, unit: &str, d: usize| match r {
        Some((lo, hi)) if (hi - lo).abs() < 0.5 => format!("{lo:.d$} {unit}"),
        Some((lo, hi)) => format!("{lo:.d$}-{hi:.d$} {unit}"),
        None => "-".into(),
    };
    out.push_str(&format!(
        "  triad, one thread:  local {}, remote {}\n",
        fmt(range(&a.single, true), "MB/s", 0),
        fmt(range(&a.single, false), "MB/s", 0)
    ));
    out.push_str(&format!(
        "  triad, saturated:   local {}, remote {}\n",
        fmt(range(&a.saturated, true), "MB/s", 0),
        fmt(range(&a.saturated, false), "MB/s", 0)
    ));
    out.push_str(&format!(
        "  idle latency:       local {}, remote {}\n",
        fmt(range(&a.latency, true), "ns", 1),
        fmt(range(&a.latency, false), "ns", 1)
    ));
    let (_, classes) = crate::analysis::placement::system_classes(&a);
    out.push_str(&format!(
        "  bandwidth classes:  {}\n",
        classes
            .classes
            .iter()
            .map(|c| format!("<= {:.0} MB/s", c.max))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let s = crate::analysis::sweep_summary::summarize(rows);
    for o in &s.ops {
        out.push_str(&format!(
            "  sweep {:<6}        peak {:.0} MB/s, log2-weighted average {:.0} MB/s\n",
            o.operation, o.peak_mb_s, o.weighted_avg_mb_s
        ));
    }
    if let Some((ns, kb)) = s.ram_latency {
        out.push_str(&format!("  RAM latency:        {ns:.1} ns at {kb} KiB\n"));
    }
    for (probe, what) in [
        ("mem", "perf's suite"),
        ("autonuma", "AutoNUMA"),
        ("sched", "numa_test"),
    ] {
        let recs: Vec<_> = doc.records.iter().filter(|r| r.probe == probe).collect();
        if recs.is_empty() {
            continue;
        }
        let skipped = recs
            .iter()
            .filter(|r| r.params.get("skipped") == Some(&serde_json::Value::Bool(true)))
            .count();
        let failed = recs.iter().filter(|r| r.name == "not complete").count();
        out.push_str(&format!(
            "  {probe:<8} {what:<11} {} record(s){}{}\n",
            recs.len() - skipped - failed,
            if skipped > 0 {
                format!(", {skipped} skipped")
            } else {
                String::new()
            },
            if failed > 0 {
                " - NOT COMPLETE, see its log".to_string()
            } else {
                String::new()
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{file_name_safe, new_folder, series_csv};

    #[test]
    fn names_become_plain_file_names() {
        assert_eq!(file_name_safe("node-1.lab"), "node-1.lab");
        assert_eq!(file_name_safe("a/../b c$(x)"), "a_.._b_c__x_");
        assert_eq!(file_name_safe("numa02 run 1"), "numa02_run_1");
    }

    #[test]
    fn folders_are_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = new_folder(dir.path(), "host/x", "2026-11-22T19:12:42Z").unwrap();
        let b = new_folder(dir.path(), "host/x", "2026-11-22T19:12:42Z").unwrap();
        assert_eq!(a.file_name().unwrap(), "host_x-20261122-191242");
        assert_eq!(b.file_name().unwrap(), "host_x-20261122-191242-2");
    }

    #[test]
    fn a_series_becomes_one_column_per_line() {
        let s = crate::results::Series {
            name: "memory".into(),
            x_label: "time".into(),
            x_unit: "s".into(),
            y_label: "memory".into(),
            y_unit: "MiB".into(),
            x: vec![0.0, 0.5],
            lines: vec![
                crate::results::Line {
                    label: "node 0".into(),
                    y: vec![256.0, 128.0],
                },
                crate::results::Line {
                    label: "node, 1".into(),
                    y: vec![0.0],
                },
            ],
        };
        assert_eq!(
            series_csv(&s),
            "time (s),node 0 memory (MiB),\"node, 1 memory (MiB)\"\n0,256,0\n0.5,128,\n"
        );
    }
}
