//! How AutoNUMA records are shown in every format, from the records alone:
//! the benchmark's text, its tables (Markdown, LaTeX, HTML), a CSV line per
//! run; the report charts every series of a run (memory and threads per
//! node over time) with its moment of convergence marked, and `--out` gets
//! the benchmark's convergence chart.

use super::facts::{self, Header, Run};
use super::text;
use crate::results::names::autonuma::{metric as am, param as ap, series as an};
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::view::chart::{Chart, Marker, lines_of};
use crate::view::{Csv, Section, View};

pub(crate) struct AutonumaView;

/// A test's plan and its runs, from its run records.
struct TestRuns {
    plan: super::bench::Plan,
    runs: Vec<Run>,
}

/// Every test of `records` with its runs; `None` where a test is one this
/// numabench does not know.
fn tests(records: &[&Record]) -> Option<Vec<TestRuns>> {
    facts::by_test(records)
        .into_iter()
        .map(|(_, recs)| {
            Some(TestRuns {
                plan: facts::plan_of(recs[0])?,
                runs: recs.iter().map(|r| Run::of(r)).collect(),
            })
        })
        .collect()
}

fn named(tests: &[TestRuns]) -> Vec<(String, Vec<Run>)> {
    tests
        .iter()
        .map(|t| (t.plan.label(), t.runs.clone()))
        .collect()
}

impl View for AutonumaView {
    fn probe(&self) -> &'static str {
        probe::AUTONUMA
    }

    fn heading(&self) -> String {
        "AutoNUMA".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "The AutoNUMA benchmark: every test starts with all its memory on one node, and the kernel's balancing has to bring threads and memory together; seconds per test (lower is better), where the memory was over time, when it converged, and each result's position between the best (hard bind) and worst (inverse bind) placements.",
        )
    }

    fn sections(&self, doc: &Document, records: &[&Record]) -> Vec<Section> {
        let Some(first) = records.iter().find(|r| facts::is_run(r)) else {
            return Vec::new();
        };
        let mut setup = Section::new("how the runs were watched");
        setup.lines = text::header(&Header::of(doc, first))
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        let mut out = vec![setup];
        let tests = tests(records).unwrap_or_default();
        let named = named(&tests);
        for t in &tests {
            let table = text::runs(&t.plan, &t.runs);
            let position = text::position_line(&t.plan.label(), &named);
            out.push(Section {
                title: text::intro_line(&t.plan),
                header: table.header,
                rows: table.rows,
                lines: t
                    .plan
                    .notes
                    .iter()
                    .cloned()
                    .chain(table.lines)
                    .chain(position.map(|p| p.trim_end().to_string()))
                    .collect(),
                ..Default::default()
            });
        }
        if text::wants_summary(&named) {
            let mut s = Section::new(text::SUMMARY_TITLE);
            s.header = text::summary_header(&named);
            s.rows = text::summary_rows(&named);
            out.push(s);
        }
        out
    }

    fn text(&self, doc: &Document, records: &[&Record]) -> Option<String> {
        let first = records.iter().find(|r| facts::is_run(r))?;
        let tests = tests(records)?;
        let mut out = text::header(&Header::of(doc, first));
        let named = named(&tests);
        for t in &tests {
            out.push_str(&text::intro(&t.plan));
            out.push_str(&text::runs_text(&t.plan, &t.runs));
            if let Some(line) = text::position_line(&t.plan.label(), &named) {
                out.push_str(&line);
            }
        }
        if text::wants_summary(&named) {
            out.push_str(&text::summary(&named));
        }
        Some(out)
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        Some(csv(records))
    }
}

/// A run's memory per node over time, MiB over seconds, the moment of
/// convergence marked: the benchmark's convergence chart.
pub(crate) fn memory_chart(r: &Record) -> Option<Chart> {
    let series = r.series.iter().find(|s| s.name == an::MEMORY_PER_NODE)?;
    let markers = r
        .value(metric::CONVERGENCE_S)
        .filter(|c| c.is_finite())
        .map(|c| Marker {
            x: c,
            label: format!("converged {c:.1} s"),
        })
        .into_iter()
        .collect();
    Some(Chart {
        title: format!("{}: memory per node", r.name),
        x_label: "time (s)".into(),
        y_label: "memory (MiB)".into(),
        lines: lines_of(series),
        markers,
        ..Default::default()
    })
}

/// One line per run: its test, figures and each node's share at the end.
fn csv(records: &[&Record]) -> Csv {
    let runs: Vec<(&Record, Run)> = records
        .iter()
        .filter(|r| facts::is_run(r))
        .map(|r| (*r, Run::of(r)))
        .collect();
    let mut nodes: Vec<String> = Vec::new();
    for (_, run) in &runs {
        for (n, _) in &run.shares {
            if !nodes.contains(n) {
                nodes.push(n.clone());
            }
        }
    }
    let mut header: Vec<String> = [param::TEST, ap::RUN, "end", metric::RUNTIME_S, "gb_s"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.push(metric::CONVERGENCE_S.into());
    header.extend(
        nodes
            .iter()
            .map(|n| format!("{}_end_pct", n.replace(' ', ""))),
    );
    header.extend(
        [
            metric::NUMA_PAGES_MIGRATED,
            metric::NUMA_HINT_FAULTS,
            am::USER_S,
            am::SYSTEM_S,
            am::SAMPLING_OVERHEAD_PCT,
        ]
        .map(String::from),
    );
    let mut out = Csv {
        header,
        ..Default::default()
    };
    for (r, run) in &runs {
        out.rows.push(csv_row(r, run, &nodes));
        for n in &r.notes {
            out.notes.push(format!("{}: {n}", r.name));
        }
    }
    out
}

fn csv_row(r: &Record, run: &Run, nodes: &[String]) -> Vec<String> {
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let mut row = vec![
        facts::label_of(r),
        r.param_shown(ap::RUN).unwrap_or_default(),
        match run.end {
            facts::End::Whole => "whole",
            facts::End::Interrupted => "interrupted",
            facts::End::Failed => "failed",
        }
        .to_string(),
        run.runtime_s.to_string(),
        run.gb_s.to_string(),
        opt(run.convergence_s),
    ];
    row.extend(
        nodes
            .iter()
            .map(|n| opt(run.shares.iter().find(|(m, _)| m == n).map(|s| s.1))),
    );
    row.extend([
        opt(run.migrated),
        opt(run.hint_faults),
        run.user_s.to_string(),
        run.system_s.to_string(),
        run.overhead_pct.to_string(),
    ]);
    row
}
