//! The `run` job: characterises this machine end to end (topology, the
//! node-to-node matrix, a cache-aware sweep, the short probes of the
//! default profile and, with the full profile, the workload parts), and
//! leaves a results folder with the results document, an HTML report and
//! CSVs.

mod folder;
mod levels;
mod parts;
mod probe_lines;
mod summary;

use crate::analysis::classes::ClassOptions;
use crate::output::html::{Run, report};
use crate::probes::matrix::MatrixView;
use crate::probes::matrix::{self, MatrixConfig};
use crate::probes::sweep;
use crate::probes::sweep::view::SweepView;
use crate::progress::Progress;
use crate::results::names::{probe, run::NOT_COMPLETE};
use crate::results::{Document, Record, write_output};
use crate::topology::{SysfsRoot, Topology, read_topology};
use crate::view::View;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What to run and where the folder goes.
pub struct Options {
    /// Where results folders go.
    pub dir: PathBuf,
    pub profile: Profile,
}

/// How much a run measures; each profile holds the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Profile {
    /// The matrix on 8 MiB buffers with one timed run: seconds, and cache
    /// figures, not memory's (hidden; for tests of what carries the
    /// results, such as `fleet submit`).
    Smoke,
    /// The matrix alone: what `fleet report` compares.
    Quick,
    /// The matrix, the sweep and the short probes (latency by pattern,
    /// memory-level parallelism, loaded latency, peak injection,
    /// core-to-core latency).
    Default,
    /// Also the workload parts (perf's suite, AutoNUMA, numa_test).
    Full,
}

impl Profile {
    /// The profile `--profile NAME` names.
    pub fn from_name(name: &str) -> Option<Profile> {
        Some(match name {
            "smoke" => Profile::Smoke,
            "quick" => Profile::Quick,
            "default" => Profile::Default,
            "full" => Profile::Full,
            _ => return None,
        })
    }
}

/// What a run leaves for the command to print: the summary, the document,
/// and the stop signal if one ended it early.
pub struct Outcome {
    pub text: String,
    /// The results document the folder holds.
    pub doc: Document,
    pub interrupted: Option<i32>,
    /// The parts whose child failed, by probe name.
    pub failed: Vec<&'static str>,
    /// A measurement of this process (matrix, sweep) that failed after
    /// others were made, which ended the run.
    pub cut: Option<String>,
}

/// What was measured: the document and the logs of the parts.
struct Measured {
    doc: Document,
    logs: Vec<(&'static str, String)>,
    /// Why the run ended early, where a measurement of this process failed.
    cut: Option<String>,
}

fn stopped() -> bool {
    crate::interrupt::requested().is_some()
}

/// Runs every part, writes the folder and returns the summary.
pub fn run(opts: &Options) -> Result<Outcome> {
    crate::results::check_output_dir(&opts.dir, "--dir")?;
    let topo = read_topology(&SysfsRoot::live())?;
    let started = Instant::now();
    let mut m = measure(&topo, opts)?;
    let interrupted = crate::interrupt::requested();
    match (interrupted, &m.cut) {
        (Some(sig), _) => super::mark_interrupted(&mut m.doc, probe::RUN, sig),
        (None, Some(why)) => super::mark_failed(&mut m.doc, probe::RUN, why),
        (None, None) => m.doc.finish(),
    }
    let failed = failed_parts(&m);
    // A run without one of its parts is not the run asked for: a fleet
    // submits such a machine again.
    if !failed.is_empty() {
        m.doc.complete = false;
    }
    let folder = folder::new_folder(&opts.dir, &topo.hostname, &m.doc.started)?;
    write_folder(&folder, &m)?;
    let mut text = String::new();
    if let Some(sig) = interrupted {
        text.push_str(&super::interrupted_line(
            sig,
            "the folder holds what was measured before the stop",
        ));
        text.push('\n');
    }
    text.push_str(&summary::summary(&m.doc, started.elapsed().as_secs_f64()));
    text.push_str(&format!(
        "report: {}\n",
        folder.join("report.html").display()
    ));
    Ok(Outcome {
        text,
        doc: m.doc,
        interrupted,
        failed,
        cut: m.cut,
    })
}

/// The parts that ran and left a `NOT_COMPLETE` record, in run order.
fn failed_parts(m: &Measured) -> Vec<&'static str> {
    m.logs
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| {
            m.doc
                .records
                .iter()
                .any(|r| r.probe == *name && r.name == NOT_COMPLETE)
        })
        .collect()
}

/// The matrix, the sweep and the parts of the profile, one after the
/// other until a stop.
fn measure(topo: &Topology, opts: &Options) -> Result<Measured> {
    let mut doc = Document::new(topo);
    let progress = Progress::new(false);
    let parts = parts::of(opts.profile);
    let steps = if opts.profile >= Profile::Default {
        2
    } else {
        1
    } + parts.len();
    let show = |step: usize, what: &str| progress.step(&format!("[{}/{steps}] {what}", step + 1));
    let cfg = if opts.profile == Profile::Smoke {
        smoke_config()?
    } else {
        MatrixConfig::new()?
    };
    let mut logs = Vec::new();
    if let Some(why) = measure_matrix(topo, &mut doc, cfg, &|w| show(0, &format!("matrix: {w}")))? {
        return Ok(Measured {
            doc,
            logs,
            cut: Some(why),
        });
    }
    // The parts that chase a buffer past the L3 run right after the
    // matrix's latency cells, back to back, and the sweep after them: each
    // then maps about as much memory as the one before it has just freed. A
    // virtual machine may hand freed memory back to its host within
    // seconds, and faulting it in again is slow: in one, a 7.5 GiB chase
    // buffer took 17 s of system time after 30 s idle, 2 s right after
    // another was freed. The document keeps the sweep before the parts.
    let (chasing, others) = parts.split_at(parts.iter().take_while(|p| p.chases).count());
    let sweep_at = doc.records.len();
    measure_parts(topo, chasing, 1, &show, &mut doc, &mut logs);
    if opts.profile >= Profile::Default {
        let step = 1 + chasing.len();
        match measure_sweep(topo, &|w| show(step, &format!("sweep: {w}"))) {
            Ok(rows) => drop(doc.records.splice(sweep_at..sweep_at, rows)),
            Err(e) => {
                return Ok(Measured {
                    doc,
                    logs,
                    cut: Some(format!("sweep: {e:#}")),
                });
            }
        }
    }
    measure_parts(
        topo,
        others,
        steps - others.len(),
        &show,
        &mut doc,
        &mut logs,
    );
    Ok(Measured {
        doc,
        logs,
        cut: None,
    })
}

/// The node-to-node matrix (one thread, saturated, latency) with the best
/// triad kernel, and the theoretical peak where DMI gives one; why it
/// ended early where a cell failed after others were measured.
fn measure_matrix(
    topo: &Topology,
    doc: &mut Document,
    cfg: MatrixConfig,
    show: &dyn Fn(&str),
) -> Result<Option<String>> {
    let m = matrix::run(topo, &cfg, &mut |w| show(w))?;
    doc.records.extend(m.records());
    if let Some(why) = m.failed {
        return Ok(Some(format!("matrix: {why}")));
    }
    matrix::add_peak(&mut doc.records, topo);
    doc.records
        .push(matrix::class_rule_record(&ClassOptions::default()));
    Ok(None)
}

/// The smoke profile's matrix: 8 MiB buffers, one timed run of 5 ms.
fn smoke_config() -> Result<MatrixConfig> {
    let mut cfg = MatrixConfig::new()?.working_set(Some(8 << 20));
    cfg.latency_bytes = Some(8 << 20);
    cfg.timing = crate::probes::measure::Timing {
        tries: 1,
        min_run: std::time::Duration::from_millis(5),
    };
    Ok(cfg)
}

/// The default sweep's records, none after a stop; its notes go on its
/// first record.
fn measure_sweep(topo: &Topology, show: &dyn Fn(&str)) -> Result<Vec<Record>> {
    if stopped() {
        return Ok(Vec::new());
    }
    let (cfg, note) = levels::sweep_config(topo);
    let (rows, mut notes) = sweep::run(topo, &cfg, &mut |w| show(w))?;
    notes.extend(note);
    let mut records: Vec<Record> = rows.iter().map(sweep::records::record).collect();
    if let Some(r) = records.first_mut() {
        r.notes.extend(notes);
    }
    Ok(records)
}

/// Runs `parts` as children until a stop, numbering their steps from
/// `first_step`; their records go into `doc`, their logs into `logs`.
fn measure_parts(
    topo: &Topology,
    parts: &[&'static parts::Part],
    first_step: usize,
    show: &dyn Fn(usize, &str),
    doc: &mut Document,
    logs: &mut Vec<(&'static str, String)>,
) {
    for (i, part) in parts.iter().enumerate() {
        if stopped() {
            break;
        }
        show(first_step + i, part.probe);
        let ran = parts::run_part(part, topo, stopped);
        doc.records.extend(ran.records);
        logs.push((part.probe, ran.log));
    }
}

/// One probe's records as that probe's own CSV (the matrix's grids,
/// sc-membench's columns), drawn by its view from the document.
fn probe_csv(doc: &Document, view: &dyn View) -> Result<String> {
    let records = crate::view::records_of(doc, view.probe());
    let table = view.csv(doc, &records).unwrap_or_default();
    crate::output::render::csv_text(&table)
}

/// results.json, the parts' logs, the AutoNUMA series as CSV, matrix.csv,
/// sweep.csv and report.html.
fn write_folder(folder: &Path, m: &Measured) -> Result<()> {
    let doc = &m.doc;
    doc.save(&folder.join("results.json"))?;
    for (name, log) in &m.logs {
        write_output(&folder.join(format!("{name}.log")), log.as_bytes())?;
    }
    for r in doc.records.iter().filter(|r| r.probe == probe::AUTONUMA) {
        for s in &r.series {
            let file = folder::file_name_safe(&format!("autonuma-{}-{}.csv", r.name, s.name));
            write_output(&folder.join(file), folder::series_csv(s)?.as_bytes())?;
        }
    }
    write_output(
        &folder.join("matrix.csv"),
        probe_csv(doc, &MatrixView)?.as_bytes(),
    )?;
    write_output(
        &folder.join("sweep.csv"),
        probe_csv(doc, &SweepView)?.as_bytes(),
    )?;
    let html = report(
        &[Run {
            label: probe::RUN.into(),
            doc,
        }],
        crate::probes::VIEWS,
    );
    write_output(&folder.join("report.html"), html.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Record;

    #[test]
    fn a_part_with_a_not_complete_record_is_failed_and_only_it() {
        let mut doc = Document::new(&crate::topology::fixture("two-node"));
        doc.records.push(Record::new(probe::LATENCY, "chase 0->0"));
        doc.records.push(Record::new(probe::PEAK, NOT_COMPLETE));
        let m = Measured {
            doc,
            logs: vec![
                (probe::LATENCY, String::new()),
                (probe::PEAK, String::new()),
            ],
            cut: None,
        };
        assert_eq!(failed_parts(&m), [probe::PEAK]);
    }
}
