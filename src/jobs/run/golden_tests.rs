//! Run's terminal summary and the repeat check of real run documents,
//! pinned byte for byte: `run.json` is the document of a default-profile
//! `numabench run` on a one-node machine (sweep and peak records trimmed,
//! one of each probe kept), `run-two-node.json` the same with a second
//! node and its remote records made up from the local ones (and no
//! sweep), so that every "remote" branch is drawn too. A missing golden
//! file is written from the code as it is, and the test fails until it
//! is checked in. `readme-run.json` is the whole document of the run
//! README shows (`numabench run`, its `results.json`): after a change to
//! the summary, run again, copy its document here and its output there.

use crate::probes::REGISTRY;
use crate::results::Document;
use std::path::{Path, PathBuf};

fn cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cases")
}

fn doc(name: &str) -> Document {
    Document::load(&cases().join(format!("{name}.json")))
        .unwrap()
        .document
}

fn assert_same(got: &str, file: &str) {
    let path = cases().join(file);
    let Ok(want) = std::fs::read_to_string(&path) else {
        std::fs::write(&path, got).unwrap();
        panic!("{} was missing: written, check it in", path.display());
    };
    if got != want {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(g, w)| g != w)
            .map_or("lengths differ".to_string(), |i| {
                format!(
                    "line {}:\n  got:  {:?}\n  want: {:?}",
                    i + 1,
                    got.lines().nth(i).unwrap(),
                    want.lines().nth(i).unwrap()
                )
            });
        panic!("{file} differs: {line}");
    }
}

/// The disagreements as a person reads them in the report's finding.
fn repeats(doc: &Document) -> String {
    use crate::analysis::repeats::{latency_disagreements, source};
    latency_disagreements(&doc.records, REGISTRY)
        .iter()
        .map(|d| {
            format!(
                "{}: {:.1} ns in {} ({}), {:.1} ns in {} ({}), ratio {:.3}\n",
                d.what,
                d.low.1,
                source(&d.low.0, REGISTRY),
                d.low.0,
                d.high.1,
                source(&d.high.0, REGISTRY),
                d.high.0,
                d.ratio()
            )
        })
        .collect()
}

#[test]
fn the_summary_of_a_run_is_unchanged() {
    for name in ["run", "run-two-node"] {
        let d = doc(name);
        assert_same(
            &super::summary::summary(&d, 25.0, REGISTRY),
            &format!("{name}.summary"),
        );
    }
}

/// The one-node run as the full profile leaves it when some parts fail:
/// peak's child and AutoNUMA's failed, one test of perf's suite skipped.
#[test]
fn the_summary_of_a_full_run_with_failed_parts_is_unchanged() {
    use crate::results::Record;
    use crate::results::names::{param, probe, run::NOT_COMPLETE};
    let mut d = doc("run");
    d.records.retain(|r| r.probe != probe::PEAK);
    d.records.push(Record::new(probe::PEAK, NOT_COMPLETE));
    d.records.push(Record::new(probe::MEM, "numa01"));
    d.records
        .push(Record::new(probe::MEM, "numa02").param(param::SKIPPED, true));
    d.records.push(Record::new(probe::MEM, "numa03"));
    d.records.push(Record::new(probe::AUTONUMA, NOT_COMPLETE));
    d.records.push(Record::new(probe::AUTONUMA, "numa01"));
    d.records.push(Record::new(probe::SCHED, "numa_test"));
    assert_same(
        &super::summary::summary(&d, 25.0, REGISTRY),
        "run-full.summary",
    );
}

#[test]
fn the_repeats_of_a_run_are_unchanged() {
    for name in ["run", "run-two-node"] {
        assert_same(&repeats(&doc(name)), &format!("{name}.repeats"));
    }
}

/// Every part of the full profile, in run order, with its command line on
/// two fixture machines.
#[test]
fn the_parts_of_a_run_are_unchanged() {
    let mut out = String::new();
    for fixture in ["two-node", "amd-4node"] {
        let topo = crate::topology::fixture(fixture);
        out.push_str(&format!("{fixture}:\n"));
        let children = super::parts::of(super::Profile::Full, REGISTRY)
            .into_iter()
            .filter(|p| p.part.in_process.is_none());
        for planned in children {
            let args =
                (planned.part.args)(&topo, crate::view::Scope::of(crate::view::Profile::Default))
                    .join(" ");
            out.push_str(&format!("  {}: {args}\n", planned.probe));
        }
    }
    assert_same(&out, "run-parts.txt");
}

/// README's example is this build's summary of the run it shows: the
/// lines between its `run-example` marks, less the command and the
/// report's path, rendered again from that run's document.
#[test]
fn the_readme_example_is_the_summary_of_its_saved_run() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let block = readme
        .split_once("<!-- run-example:start -->")
        .and_then(|(_, rest)| rest.split_once("<!-- run-example:end -->"))
        .map(|(block, _)| block)
        .expect("README marks its example with run-example:start and :end");
    let lines: Vec<&str> = block
        .lines()
        .filter(|l| !l.starts_with("```") && !l.trim().is_empty())
        .collect();
    assert!(lines[0].starts_with("$ numabench run"), "{}", lines[0]);
    assert!(lines.last().unwrap().starts_with("report: "));
    let shown = lines[1..lines.len() - 1].join("\n") + "\n";
    let d = doc("readme-run");
    let secs = d.elapsed_s().expect("the saved run has its start and end");
    let got = super::summary::summary(&d, secs, REGISTRY);
    assert_eq!(
        shown, got,
        "README's example is not this build's summary of tests/golden/cases/readme-run.json: \
         run it again (see the module's doc) and paste its output"
    );
}
