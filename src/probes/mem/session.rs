//! A `mem` command from resolved options to a results document: one run
//! (perf's `main,`) or the suite, perf's text written live as each goes,
//! the memory admission check before anything is mapped, and the records.

use super::suite::{self, Planned, SuiteOptions};
use super::{Summary, records, text};
use crate::console::Sink;
use crate::probes::workload::outcome::Event;
use crate::probes::workload::params::{self, Params, RawOptions};
use crate::probes::workload::{memwatch, tasks};
use crate::results::names::mem::record;
use crate::results::{Document, Record};
use crate::topology::Topology;
use anyhow::{Result, anyhow};

/// What a command measured and how it ended.
pub(crate) struct Outcome {
    pub doc: Document,
    /// The stop signal, when one ended the command.
    pub interrupted: Option<i32>,
    /// Why a run failed (the first failure, in a suite).
    pub failed: Option<String>,
}

/// One run of `raw`, perf's text on `sink` as it goes; with
/// `memory_per_node`, where the memory is once a second.
pub(crate) fn single(
    raw: &RawOptions,
    topo: &Topology,
    command: &str,
    sink: Sink,
    memory_per_node: bool,
) -> Result<Outcome> {
    let p = params::resolve(raw, topo)?;
    admit(&p, topo)?;
    let mut doc = Document::new(topo);
    sink.put(&text::running("main,", command));
    let how = How {
        sink,
        memory_per_node,
    };
    let run = run_one("main,", record::MAIN, command, &p, topo, how)?;
    doc.records.push(run.record);
    Ok(Outcome {
        doc,
        interrupted: run.interrupted,
        failed: run.failed,
    })
}

/// A finished run: its record and how it ended.
struct Run {
    record: Record,
    interrupted: Option<i32>,
    failed: Option<String>,
}

/// Where a run's text goes, and whether it looks at the memory.
#[derive(Clone, Copy)]
struct How {
    sink: Sink,
    memory_per_node: bool,
}

/// One run: perf's text as it goes, then its metrics.
fn run_one(
    name: &str,
    record_name: &str,
    command: &str,
    p: &Params,
    topo: &Topology,
    how: How,
) -> Result<Run> {
    let sink = how.sink;
    sink.put(&text::header(p, topo, p.show_details < 0));
    let mut on_event = |ev: Event| live(p, sink, ev);
    let out = if how.memory_per_node {
        memwatch::run_watched(p, topo, &mut on_event)?
    } else {
        tasks::run(p, topo, &mut on_event)?
    };
    let summary = Summary::of(p, &out);
    if p.show_details >= 0 {
        sink.put(text::footer());
    }
    sink.put(&text::extras(p, &out, p.show_details < 0));
    if let Some(m) = &out.memory {
        sink.put(&text::memory_per_node(m));
        if p.show_convergence || p.measure_convergence {
            sink.put(&text::convergence_sides(out.tracker.since_s, m));
        }
    }
    sink.put(&text::results(name, &summary, p.quiet));
    Ok(Run {
        record: records::record(record_name, command, p, &out, &summary),
        interrupted: out.interrupted,
        failed: out.failed,
    })
}

/// perf's lines while the run goes on, as much as `-d` and `-q` ask for.
fn live(p: &Params, sink: Sink, ev: Event) {
    match ev {
        Event::StartupBegin if p.show_details >= 0 => sink.put(text::startup_begin()),
        Event::StartupDone { secs } if p.show_details >= 0 => {
            sink.put(&text::startup_done(secs));
        }
        Event::Forked { process, pid } if p.show_details >= 1 => {
            sink.put(&format!(" # process {process:2}: PID {pid}\n"));
        }
        Event::Tick(t) => sink.put(&text::tick(t)),
        Event::Signal { signal } => crate::console::err(&format!(
            "\nnumabench: signal {signal}: stopping the tasks (again to kill them)\n"
        )),
        _ => {}
    }
}

/// perf maps whatever it is asked for; numabench first checks that the
/// global, process and thread memory together fit in the free memory of
/// the nodes the tasks are bound to (all usable nodes when any task is not).
pub(crate) fn admit(p: &Params, topo: &Topology) -> Result<()> {
    let bound: Option<Vec<usize>> = p
        .node_bind
        .iter()
        .copied()
        .collect::<Option<Vec<usize>>>()
        .map(|mut ids| {
            ids.sort_unstable();
            ids.dedup();
            ids
        });
    crate::memory::admission::admit(
        topo,
        &crate::memory::admission::Footprint {
            bytes: p.total_bytes(),
            nodes: bound.as_deref(),
            what: footprint_terms(p),
            remedy: "give fewer processes or threads, or smaller -G/-P/-T",
        },
    )
}

/// "-P 15000 MB x 2 processes + -T 10 MB x 4 threads", zero terms left out.
fn footprint_terms(p: &Params) -> String {
    let mut terms = Vec::new();
    if p.bytes_global > 0 {
        terms.push(format!("-G {} MB", p.mb_global));
    }
    if p.bytes_process > 0 {
        terms.push(format!("-P {} MB x {} processes", p.mb_proc, p.nr_proc));
    }
    if p.bytes_thread > 0 {
        terms.push(format!("-T {} MB x {} threads", p.mb_thread, p.nr_tasks));
    }
    terms.join(" + ")
}

/// perf's `uname -a` line before the suite.
fn uname() -> String {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let line = format!(
        "{} {} {} {} {}",
        read("ostype"),
        read("hostname"),
        read("osrelease"),
        read("version"),
        std::env::consts::ARCH
    );
    // The host name is anyone's choice: no control character reaches the
    // terminal.
    crate::text::escape(&line).into_owned()
}

/// Reads one suite entry's arguments (after `mem`) as the command line's
/// would be read; the error says what is wrong with them.
pub(crate) type ParseEntry<'a> = dyn Fn(&[String]) -> std::result::Result<RawOptions, String> + 'a;

/// How a suite goes: its options, `-d` repeated `details` times on every
/// test, and how a test's arguments are read.
pub(crate) struct Suite<'a> {
    pub options: SuiteOptions,
    pub details: u8,
    pub parse: &'a ParseEntry<'a>,
    /// `--memory-per-node` on every test.
    pub memory_per_node: bool,
}

/// perf's suite mapped onto `topo`, test by test; a test this machine
/// cannot run is skipped with a record saying why, a failed test does not
/// stop the others, a stop signal does.
pub(crate) fn suite(s: &Suite<'_>, topo: &Topology, command: &str, sink: Sink) -> Result<Outcome> {
    let mut out = Outcome {
        doc: Document::new(topo),
        interrupted: None,
        failed: None,
    };
    sink.put(&format!(" #\n # Running test on: {}\n #\n", uname()));
    sink.put(&text::running("main,", command));
    for test in suite::tests() {
        let planned = suite::plan(&test, topo, &s.options);
        let run = suite_test(s, &planned, topo, sink)?;
        if let Some(why) = &run.failed {
            out.failed
                .get_or_insert(format!("{}: {why}", planned.short_name));
        }
        out.doc.records.push(run.record);
        if run.interrupted.is_some() {
            out.interrupted = run.interrupted;
            break;
        }
    }
    sink.put("\n");
    Ok(out)
}

/// One suite test: skipped, refused by the admission check, failed to
/// start, or run.
fn suite_test(s: &Suite<'_>, planned: &Planned, topo: &Topology, sink: Sink) -> Result<Run> {
    let cmd = format!("numabench mem {}", planned.args.join(" "));
    sink.put(&text::running(&planned.name, &cmd));
    for n in &planned.notes {
        sink.put(&format!(" # {n}\n"));
    }
    let skip = |why: &str, notes: &[String]| {
        sink.put(&format!(" # skipped: {why}\n"));
        Ok(ended(records::skipped(
            &planned.short_name,
            &cmd,
            why,
            notes,
        )))
    };
    if let Some(why) = &planned.skip {
        return skip(why, &planned.notes);
    }
    let p = params::resolve(&entry_options(s, planned)?, topo)?;
    if let Err(e) = admit(&p, topo) {
        return skip(&e.to_string(), &[]);
    }
    let how = How {
        sink,
        memory_per_node: s.memory_per_node,
    };
    match run_one(&planned.name, &planned.short_name, &cmd, &p, topo, how) {
        Ok(mut run) => {
            run.record = records::suite_test(run.record, &planned.short_name, &planned.notes);
            run.record
                .conditions
                .extend(planned.conditions.iter().cloned());
            // The suite goes on; the run as a whole failed.
            if let Some(why) = &run.failed {
                sink.put(&format!(" # failed: {why}\n"));
            }
            Ok(run)
        }
        Err(e) => {
            sink.put(&format!(" # failed: {e:#}\n"));
            let why = format!("{e:#}");
            Ok(ended(records::failed(&planned.short_name, &cmd, &why)))
        }
    }
}

/// A test that did not run: its record, nothing else to report.
fn ended(record: Record) -> Run {
    Run {
        record,
        interrupted: None,
        failed: None,
    }
}

/// A planned test's options, read as its command line would be.
fn entry_options(s: &Suite<'_>, planned: &Planned) -> Result<RawOptions> {
    let mut argv = planned.args.clone();
    argv.extend(std::iter::repeat_n("-d".to_string(), s.details.into()));
    (s.parse)(&argv).map_err(|e| anyhow!("suite entry {}: {e}", planned.short_name))
}
