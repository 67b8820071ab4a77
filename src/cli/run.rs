//! `numabench run`: the main job. Characterises this machine end to end
//! and leaves a results folder with the results document, an HTML report
//! and CSVs.

use crate::kernels::{self, Op, Store};
use crate::output::html::{Run, report};
use crate::probes::matrix::{self, MatrixConfig};
use crate::probes::measure::Timing;
use crate::probes::sweep::{self, SweepConfig};
use crate::results::{Document, write_atomic};
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
    /// small machine).
    #[arg(long, value_name = "NAME", default_value = "default", value_parser = ["default"])]
    pub profile: String,
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
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
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
    let topo = read_topology(&SysfsRoot::live())?;
    let mut doc = Document::new(&topo);
    let progress = Progress {
        interactive: std::io::stderr().is_terminal(),
        started: Instant::now(),
    };
    let steps = 2;
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
    let (rows, notes) = sweep::run(&topo, &SweepConfig::default(), &mut |w| {
        progress.show(1, steps, &format!("sweep: {w}"))
    })?;
    let first_sweep = doc.records.len();
    doc.records.extend(rows.iter().map(super::sweep::record));
    if let Some(r) = doc.records.get_mut(first_sweep) {
        r.notes.extend(notes);
    }
    progress.done();
    doc.finish();
    let folder = new_folder(&args.dir, &topo.hostname, &doc.started)?;
    doc.save(&folder.join("results.json"))?;
    let view = crate::output::matrix::View::new(&doc, None);
    write_atomic(&folder.join("matrix.csv"), view.csv().as_bytes())?;
    write_atomic(
        &folder.join("sweep.csv"),
        crate::output::sweep::csv(&rows).as_bytes(),
    )?;
    let html = report(&[Run {
        label: "run".into(),
        doc: &doc,
    }]);
    write_atomic(&folder.join("report.html"), html.as_bytes())?;
    print!(
        "{}",
        summary(&doc, &rows, progress.started.elapsed().as_secs_f64())
    );
    println!("report: {}", folder.join("report.html").display());
    Ok(())
}

fn summary(doc: &Document, rows: &[crate::probes::sweep::SweepRow], secs: f64) -> String {
    let a = crate::analysis::atlas::Atlas::from_records(&doc.records);
    let h = &doc.host;
    let mut out = format!(
        "{} ({}), {} node(s) with memory, {} CPU(s); measured in {secs:.0} s\n",
        h.hostname,
        h.cpu_model,
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
    out
}

#[cfg(test)]
mod tests {
    use super::new_folder;

    #[test]
    fn folders_are_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = new_folder(dir.path(), "host/x", "2026-11-22T19:12:42Z").unwrap();
        let b = new_folder(dir.path(), "host/x", "2026-11-22T19:12:42Z").unwrap();
        assert_eq!(a.file_name().unwrap(), "host_x-20261122-191242");
        assert_eq!(b.file_name().unwrap(), "host_x-20261122-191242-2");
    }
}
