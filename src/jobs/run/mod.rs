//! The `run` job: characterises this machine end to end (topology, the
//! node-to-node matrix, a cache-aware sweep, the short probes of the
//! default profile and, with the full profile, the workload parts), and
//! leaves a results folder with the results document, an HTML report and
//! CSVs.

#[cfg(test)]
mod findings_tests;
mod folder;
#[cfg(test)]
mod golden_tests;
mod headline;
mod parts;
pub(crate) mod plan;
mod probe_lines;
#[cfg(test)]
mod scale_tests;
mod summary;
#[cfg(test)]
mod toy_probe_tests;

use crate::output::html::{Run, report};
use crate::probes::REGISTRY;
use crate::progress::Progress;
use crate::results::names::{probe, run::NOT_COMPLETE};
use crate::results::{Document, Record, write_output};
use crate::topology::{SysfsRoot, Topology, read_topology};
use crate::view::{FolderFile, Scope, Trim};
use anyhow::Result;

pub(crate) use crate::view::Profile;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What to run and where the folder goes.
pub(crate) struct Options {
    /// Where results folders go.
    pub dir: PathBuf,
    pub profile: Profile,
    /// The time the run must fit in.
    pub budget: Budget,
    /// Every node pair in the per-pair parts, however many nodes.
    pub all_pairs: bool,
}

/// The time a run must fit in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Budget {
    /// [`DEFAULT_BUDGET_S`]: the parts are trimmed until the plan fits;
    /// where none fits, the most trimmed run goes ahead, said so.
    Default,
    /// `--budget`: trimmed until it fits, refused before measuring where
    /// it cannot.
    Given(f64),
    /// `--budget none`: as the profile has it.
    None,
}

/// A run's budget unless one is given: a big server's default run must
/// not hold it for hours.
pub(crate) const DEFAULT_BUDGET_S: f64 = 15.0 * 60.0;

/// What a run leaves for the command to print: the summary, the document,
/// and the stop signal if one ended it early.
pub(crate) struct Outcome {
    pub text: String,
    /// The results document the folder holds.
    pub doc: Document,
    pub interrupted: Option<i32>,
    /// The parts whose child failed, by probe name.
    pub failed: Vec<&'static str>,
    /// What could not be written, if anything.
    pub unwritten: Option<Unwritten>,
}

/// What was measured: the document and the logs of the parts.
struct Measured {
    doc: Document,
    logs: Vec<(&'static str, String)>,
}

fn stopped() -> bool {
    crate::interrupt::requested().is_some()
}

/// Runs every part, writes the folder and returns the summary.
pub(crate) fn run(opts: &Options) -> Result<Outcome> {
    crate::results::check_output_dir(&opts.dir, "--dir")?;
    let topo = read_topology(&SysfsRoot::live())?;
    let scope = fitted(&topo, opts)?;
    let started = Instant::now();
    let mut m = measure(&topo, opts, scope)?;
    let interrupted = crate::interrupt::requested();
    match interrupted {
        None => m.doc.finish(),
        Some(sig) => super::mark_interrupted(&mut m.doc, probe::RUN, sig),
    }
    let failed = failed_parts(&m);
    // A run without one of its parts is not the run asked for: a fleet
    // submits such a machine again.
    if !failed.is_empty() {
        m.doc.complete = false;
    }
    let written = folder::new_folder(&opts.dir, &topo.hostname, &m.doc.started)
        .map_err(|e| Unwritten::Document(e.context("cannot make the results folder")))
        .and_then(|folder| write_folder(&folder, &m).map(|()| folder));
    let (folder, unwritten) = match written {
        Ok(folder) => (Some(folder), None),
        Err(u) => (u.folder().map(Path::to_path_buf), Some(u)),
    };
    let mut text = String::new();
    if let Some(sig) = interrupted {
        text.push_str(&super::interrupted_line(
            sig,
            "the folder holds what was measured before the stop",
        ));
        text.push('\n');
    }
    // The document's own times, so that its summary rendered again later
    // reads the same; the clock here only where they are missing.
    let secs = m
        .doc
        .elapsed_s()
        .unwrap_or_else(|| started.elapsed().as_secs_f64());
    text.push_str(&summary::summary(&m.doc, secs, REGISTRY));
    if let Some(folder) = folder.filter(|_| unwritten.is_none()) {
        text.push_str(&format!(
            "report: {}\n",
            folder.join("report.html").display()
        ));
    }
    Ok(Outcome {
        text,
        doc: m.doc,
        interrupted,
        failed,
        unwritten,
    })
}

/// What of the results folder could not be written (a full disk, a
/// folder removed under the run).
pub(crate) enum Unwritten {
    /// Not even results.json: the folder, if made, is removed again and the
    /// document must go elsewhere.
    Document(anyhow::Error),
    /// results.json is in `folder`; the files named with their errors are
    /// not.
    Others {
        folder: PathBuf,
        errors: Vec<String>,
    },
}

impl Unwritten {
    fn folder(&self) -> Option<&Path> {
        match self {
            Unwritten::Document(_) => None,
            Unwritten::Others { folder, .. } => Some(folder),
        }
    }
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

/// The run of `opts.profile` trimmed to fit its budget; refused (exit 2)
/// before anything is measured where no trim fits a budget given; with
/// the default budget, the most trimmed run and a warning.
pub(crate) fn fitted(topo: &Topology, opts: &Options) -> Result<Scope> {
    let budget_s = match opts.budget {
        Budget::Default => Some(DEFAULT_BUDGET_S),
        Budget::Given(s) => Some(s),
        Budget::None => None,
    };
    let asked = (opts.profile, opts.all_pairs);
    match plan::fit(topo, asked, budget_s, REGISTRY) {
        Ok((scope, _)) => Ok(scope),
        Err(least) if opts.budget == Budget::Default => {
            eprintln!(
                "numabench: warning: even trimmed, the run takes about {}, over the default budget of {}; give --budget to set one, or --profile quick",
                plan::duration(least),
                plan::duration(DEFAULT_BUDGET_S)
            );
            Ok(Scope {
                profile: opts.profile,
                trim: Trim::LADDER[Trim::LADDER.len() - 1],
                all_pairs: opts.all_pairs,
            })
        }
        Err(least) => Err(crate::error::usage(format!(
            "the run cannot fit a budget of {}: trimmed as far as it goes it takes about {} \
             (numabench run --plan shows each part); give a longer --budget or --profile quick",
            plan::duration(budget_s.unwrap_or(0.0)),
            plan::duration(least)
        ))),
    }
}

/// The parts of the profile, in order, until a stop: each in this process
/// or as a child, as its registry line says.
fn measure(topo: &Topology, opts: &Options, scope: Scope) -> Result<Measured> {
    let mut doc = Document::new(topo);
    let parts = parts::of(opts.profile, REGISTRY);
    let estimates: Vec<f64> = parts
        .iter()
        .map(|p| (p.part.plan)(topo, scope).seconds)
        .collect();
    let estimate: f64 = estimates.iter().sum();
    let trimmed = if scope.trim == Trim::None {
        String::new()
    } else {
        format!("; trimmed to fit the budget: {}", scope.trim.dropped())
    };
    eprintln!(
        "numabench: {} part(s), about {} (numabench run --plan shows each){trimmed}",
        parts.len(),
        plan::duration(estimate)
    );
    let progress = Progress::new(false);
    let steps = parts.len();
    let begun = Instant::now();
    let mut logs = Vec::new();
    for (i, planned) in parts.iter().enumerate() {
        if stopped() {
            break;
        }
        let part_begun = Instant::now();
        let show = |what: &str| {
            progress.step(&format!(
                "[{}/{steps}] {what} ({} of about {})",
                i + 1,
                plan::duration(begun.elapsed().as_secs_f64()),
                plan::duration(estimate)
            ))
        };
        match planned.part.in_process {
            Some(measure) => {
                let name = planned.probe;
                let steps = std::cell::RefCell::new(String::new());
                let ended = measure(topo, scope, &|w| {
                    steps
                        .borrow_mut()
                        .push_str(&format!("numabench: measuring {w}\n"));
                    show(&format!("{name}: {w}"))
                });
                let mut part = Document::new(topo);
                let ended = ended.map(|ran| {
                    part.records = ran.records;
                    ran.failed
                });
                doc.records.extend(part.records.iter().cloned());
                let why = keep_going(name, ended, &mut doc)?;
                let said = steps.into_inner() + &why.unwrap_or_default();
                let how = format!("numabench run: {name}, measured in the run's own process");
                logs.push((name, parts::log_text(&how, &said, Some(&part))));
            }
            None => {
                show(planned.probe);
                let ran = parts::run_part(planned, topo, scope, stopped);
                doc.records.extend(ran.records);
                logs.push((planned.probe, ran.log));
            }
        }
        doc.records.push(part_time(
            planned.probe,
            scope.trim,
            estimates[i],
            part_begun.elapsed().as_secs_f64(),
        ));
    }
    Ok(Measured { doc, logs })
}

/// The record of one part's planned and actual seconds.
fn part_time(probe_name: &str, trim: Trim, planned_s: f64, actual_s: f64) -> Record {
    use crate::results::Better;
    use crate::results::names::run::{PART_TIME, part_time};
    Record::new(probe::RUN, PART_TIME)
        .param(part_time::PART, probe_name)
        .param(part_time::TRIM, format!("{trim:?}").to_lowercase())
        .metric(part_time::PLANNED_S, planned_s, "s", Better::Lower)
        .metric(part_time::ACTUAL_S, actual_s, "s", Better::Lower)
}

/// How an in-process part (the matrix, the sweep) ended: `Ok(None)` when it
/// measured all it was asked to, `Ok(Some(why))` when it failed after
/// measuring some of it.
type Inline = Result<Option<String>>;

/// Goes on after an in-process part that failed at run time, as after a
/// child part that failed: a `NOT_COMPLETE` record says why, and the other
/// parts still run; the line for its log is returned. Bad input (exit 2:
/// options, admission) is found before anything is measured and ends the
/// run.
fn keep_going(name: &'static str, ended: Inline, doc: &mut Document) -> Result<Option<String>> {
    let why = match ended {
        Ok(None) => return Ok(None),
        Ok(Some(why)) => why,
        Err(e) if crate::error::exit_code(&e) == crate::error::EXIT_USAGE => return Err(e),
        Err(e) => format!("{e:#}"),
    };
    let why = crate::text::escape(&why).into_owned();
    eprintln!("numabench: warning: {name}: {why}; the other parts go on");
    let mut note = Record::new(name, NOT_COMPLETE);
    note.notes.push(format!("{name}: {why} (see {name}.log)"));
    doc.records.push(note);
    Ok(Some(format!("{name}: {why}\n")))
}

/// results.json first, then the parts' logs, the probes' own files
/// (matrix.csv, sweep.csv, the AutoNUMA series as CSV) and report.html. Each file is tried even when one
/// before it failed: whatever fits on the disk is kept.
fn write_folder(folder: &Path, m: &Measured) -> Result<(), Unwritten> {
    let doc = &m.doc;
    if let Err(e) = doc.save(&folder.join("results.json")) {
        // Nothing of this run is in the folder: it goes, so no empty folder
        // stands for a run.
        let _ = std::fs::remove_dir(folder);
        return Err(Unwritten::Document(e));
    }
    let mut files: Vec<(String, Result<String>)> = Vec::new();
    for (name, log) in &m.logs {
        files.push((format!("{name}.log"), Ok(log.clone())));
    }
    for p in REGISTRY {
        let records = crate::view::records_of(doc, p.probe());
        for (name, file) in p.folder_files(doc, &records) {
            let text = match &file {
                FolderFile::Table(table) => crate::output::render::csv_text(table),
                FolderFile::Series(series) => folder::series_csv(series),
            };
            files.push((folder::file_name_safe(&name), text));
        }
    }
    let html = report(
        &[Run {
            label: probe::RUN.into(),
            doc,
        }],
        REGISTRY,
    );
    files.push(("report.html".into(), Ok(html)));
    let errors: Vec<String> = files
        .into_iter()
        .filter_map(|(name, text)| {
            let path = folder.join(&name);
            text.and_then(|t| write_output(&path, t.as_bytes()))
                .err()
                .map(|e| format!("{name} ({e:#})"))
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Unwritten::Others {
            folder: folder.to_path_buf(),
            errors,
        })
    }
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
        };
        assert_eq!(failed_parts(&m), [probe::PEAK]);
    }

    #[test]
    fn the_folder_holds_each_probes_own_files_drawn_by_its_view() {
        use crate::results::{Line, Series};
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/cases/run.json");
        let mut doc = Document::load(Path::new(path)).unwrap().document;
        let mut auto = Record::new(probe::AUTONUMA, "numa01 x/y");
        auto.series.push(Series {
            name: "memory".into(),
            x_label: "time".into(),
            x_unit: "s".into(),
            y_label: "memory".into(),
            y_unit: "MiB".into(),
            x: vec![0.0, 1.0],
            lines: vec![Line {
                label: "node 0".into(),
                y: vec![10.0, 20.0],
            }],
        });
        doc.records.push(auto);
        let dir = tempfile::tempdir().unwrap();
        let m = Measured {
            doc,
            logs: Vec::new(),
        };
        assert!(write_folder(dir.path(), &m).is_ok());
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        let matrix = crate::view::records_of(&m.doc, probe::MATRIX);
        let table =
            crate::view::View::csv(&crate::probes::matrix::MatrixView, &m.doc, &matrix).unwrap();
        assert_eq!(
            read("matrix.csv"),
            crate::output::render::csv_text(&table).unwrap()
        );
        assert!(read("sweep.csv").lines().count() > 1);
        // The series' name made safe for a file system.
        assert_eq!(
            read("autonuma-numa01_x_y-memory.csv"),
            "time (s),node 0 memory (MiB)\n0,10\n1,20\n"
        );
    }
}
