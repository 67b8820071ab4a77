//! How matrix records are shown: the grids with the firmware's figures
//! beside them, the bandwidth classes and the model's parameters (text,
//! Markdown, LaTeX), heatmaps and the scaling chart (HTML), one CSV line per
//! cell; or the per-core table where the records are a `--per-core` run
//! (with `--runs`: a row per core with the spread of its runs).

use super::grids;
use crate::analysis::atlas::Atlas;
use crate::results::names::matrix::{self as mx, kind};
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::view::{Block, Chart, Csv, Line, Section, View};

/// The matrix's view (registered in `probes::REGISTRY`).
pub(crate) struct MatrixView;

fn atlas(records: &[&Record]) -> Atlas {
    Atlas::from_records(records.iter().copied())
}

/// The model's figures under a matrix: Gamma as recorded, else the best
/// cell.
fn class_sections(doc: &Document, a: &Atlas) -> Vec<Section> {
    crate::analysis::placement::peak(a, None, a.peak.clone())
        .map(|g| crate::probes::model::view::class_sections(a, &doc.host.topology, &g))
        .unwrap_or_default()
}

impl View for MatrixView {
    fn probe(&self) -> &'static str {
        probe::MATRIX
    }

    fn heading(&self) -> String {
        "Node-to-node matrix".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "What a thread on each CPU node (row) gets from the memory of each node (column): one thread's bandwidth, the bandwidth with every thread of the node, and the idle latency. Colours compare a cell with its row's local cell; green is as fast as local, red far slower. The bandwidth classes below group the columns a program can treat as one speed.",
        )
    }

    fn sections(&self, doc: &Document, records: &[&Record]) -> Vec<Section> {
        let mut out = Vec::new();
        let per_core: Vec<&Record> = records
            .iter()
            .copied()
            .filter(|r| r.name.starts_with(kind::PER_CORE))
            .collect();
        if !per_core.is_empty() {
            out.push(per_core_section(&per_core));
        }
        let a = atlas(records);
        if !a.is_empty() {
            out.push(about(&a));
            out.extend(grids::measured_sections(&a));
            out.extend(grids::firmware_sections(&a, &doc.host.topology));
            out.push(grids::placement_section(&a));
            out.extend(class_sections(doc, &a));
        }
        out
    }

    fn csv(&self, doc: &Document, records: &[&Record]) -> Option<Csv> {
        let a = atlas(records);
        Some(if a.is_empty() {
            per_core_csv(records)
        } else {
            grids::csv(&a, &doc.host.topology)
        })
    }

    fn blocks(&self, doc: &Document, records: &[&Record]) -> Vec<Block> {
        let a = atlas(records);
        if a.is_empty() {
            return self
                .sections(doc, records)
                .into_iter()
                .map(Block::Section)
                .collect();
        }
        let mut out = vec![Block::Caption(format!(
            "rows: CPU nodes, columns: memory nodes; kernel {}; MB/s = 10^6 bytes/s, STREAM convention; colour: % of the row's local value (latency: of the row's best)",
            a.kernel.as_deref().unwrap_or("?")
        ))];
        let latency_title = format!(
            "idle latency, {}{}, ns per load",
            a.latency_chase(),
            a.latency_buffer()
        );
        for (title, grid, lower, digits) in [
            ("single-thread bandwidth, MB/s", &a.single, false, 0),
            ("saturated bandwidth, MB/s", &a.saturated, false, 0),
            (
                "peak bandwidth, all cores, best read/write mix and store kind (named in the table below), MB/s",
                &a.peak_mix,
                false,
                0,
            ),
            (latency_title.as_str(), &a.latency, true, 1),
        ] {
            if !grid.is_empty() {
                out.push(Block::Heatmap(grids::heatmap(
                    &a, title, grid, lower, digits,
                )));
            }
        }
        out.extend(grids::peak_section(&a).map(Block::Section));
        let sections = grids::firmware_sections(&a, &doc.host.topology)
            .into_iter()
            .chain(std::iter::once(grids::placement_section(&a)))
            .chain(class_sections(doc, &a));
        out.extend(sections.map(Block::Section));
        out.extend(scaling_chart(&a).map(Block::Chart));
        out
    }
}

fn about(a: &Atlas) -> Section {
    let mut s = Section::new("what was measured");
    s.lines.push(format!(
        "rows: CPU nodes {:?}; columns: memory nodes {:?}; kernel {} ({}); MB/s = 10^6 bytes/s, STREAM convention (bytes read + bytes written)",
        a.cpu_nodes,
        a.mem_nodes,
        a.kernel.as_deref().unwrap_or("?"),
        a.variant.as_deref().unwrap_or("?"),
    ));
    s
}

/// Every cell's thread-scaling curve on one chart.
fn scaling_chart(a: &Atlas) -> Option<Chart> {
    (!a.curves.is_empty()).then(|| Chart {
        title: "thread scaling (saturated bandwidth)".into(),
        x_label: "threads".into(),
        y_label: "MB/s".into(),
        lines: a
            .curves
            .iter()
            .map(|((c, m), pts)| Line {
                label: format!("cpu {c} -> mem {m}"),
                points: pts.iter().map(|(t, v)| (*t as f64, *v)).collect(),
            })
            .collect(),
        ..Default::default()
    })
}

fn per_core_rows<'a>(records: &'a [&'a Record]) -> impl Iterator<Item = (u64, f64)> + 'a {
    records
        .iter()
        .filter(|r| r.str_param(mx::param::KIND) == Some(kind::PER_CORE))
        .filter_map(|r| Some((r.u64_param(param::CPU)?, r.value(metric::BANDWIDTH_MB_S)?)))
}

fn per_core_csv(records: &[&Record]) -> Csv {
    if runs_asked(records).is_some() {
        return runs_csv(records);
    }
    Csv {
        header: vec![param::CPU.into(), metric::BANDWIDTH_MB_S.into()],
        rows: per_core_rows(records)
            .map(|(cpu, v)| vec![cpu.to_string(), format!("{v:.1}")])
            .collect(),
        notes: Vec::new(),
    }
}

/// The summary record of a per-core run, and its CPU and memory nodes.
fn per_core_summary<'a>(records: &[&'a Record]) -> (Option<&'a Record>, u64, u64) {
    let summary = records
        .iter()
        .copied()
        .find(|r| r.str_param(mx::param::KIND) == Some(kind::PER_CORE_SUMMARY));
    let (c, m) = summary.map_or((0, 0), |r| {
        (
            r.u64_param(param::CPU_NODE).unwrap_or(0),
            r.u64_param(param::MEM_NODE).unwrap_or(0),
        )
    });
    (summary, c, m)
}

fn per_core_section(records: &[&Record]) -> Section {
    if runs_asked(records).is_some() {
        return runs_section(records);
    }
    let (summary, c, m) = per_core_summary(records);
    let mut s = Section::new(format!(
        "single-thread bandwidth from each core of node {c} to memory node {m}, MB/s"
    ));
    s.header = vec!["cpu".into(), "MB/s".into(), "vs mean".into()];
    let mean = summary
        .and_then(|r| r.value(metric::BANDWIDTH_MB_S))
        .unwrap_or(0.0);
    for (cpu, v) in per_core_rows(records) {
        let dev = if mean > 0.0 {
            100.0 * (v - mean) / mean
        } else {
            0.0
        };
        s.rows.push(vec![
            cpu.to_string(),
            format!("{v:.0}"),
            format!("{dev:+.1}%"),
        ]);
    }
    if let Some(r) = summary {
        s.lines.extend(per_core_verdict(r, mean));
    }
    s
}

/// The spread of the per-core figures and whether one core stands for all.
fn per_core_verdict(r: &Record, mean: f64) -> [String; 2] {
    let sd = r.value(mx::metric::STDDEV_MB_S).unwrap_or(0.0);
    let (lo, hi) = (
        r.value(mx::metric::CI95_LOW_MB_S).unwrap_or(0.0),
        r.value(mx::metric::CI95_HIGH_MB_S).unwrap_or(0.0),
    );
    let dev = r.value(mx::metric::MAX_DEVIATION_PCT).unwrap_or(0.0);
    // Present and null: the runs could not tell.
    let equivalent = r
        .has_param(mx::param::EQUIVALENT)
        .then(|| r.bool_param(mx::param::EQUIVALENT));
    let bound = super::EQUIVALENT_PCT;
    [
        format!(
            "mean {mean:.0} MB/s, standard deviation {sd:.1} MB/s ({:.2}% of the mean), 95% confidence interval ({lo:.1}; {hi:.1})",
            if mean > 0.0 { 100.0 * sd / mean } else { 0.0 }
        ),
        match equivalent {
            Some(Some(true)) => format!(
                "verdict: the cores are equivalent (every core within {bound}% of the mean; largest deviation {dev:.1}%), so one core per node stands for all"
            ),
            Some(None) => format!(
                "verdict: cannot tell: a core's mean is known only to -/+{}% (95% CI), wider than the {bound}% bound; the runs spread too much (a busy machine, or too few runs)",
                fig(r, mx::metric::WIDEST_CI95_PCT, 1)
            ),
            _ => format!(
                "verdict: the cores are NOT equivalent (largest deviation {dev:.1}% of the mean, more than {bound}%): measure per core"
            ),
        },
    ]
}

/// The runs per core a `--per-core --runs N` run asked for (on its
/// summary record); `None` for one measurement per core.
fn runs_asked(records: &[&Record]) -> Option<u64> {
    per_core_summary(records)
        .0
        .and_then(|r| r.u64_param(mx::param::RUNS))
}

/// The per-core records of a `--runs` run, in the order measured.
fn core_records<'a>(records: &'a [&'a Record]) -> impl Iterator<Item = &'a Record> + 'a {
    records
        .iter()
        .copied()
        .filter(|r| r.str_param(mx::param::KIND) == Some(kind::PER_CORE))
}

/// A figure of a record with `digits` decimals, "-" where it has none.
fn fig(r: &Record, key: &str, digits: usize) -> String {
    r.value(key).map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// `--per-core --runs N` as the thesis' Table 3.2: a row per core with
/// the mean of its runs, their standard deviation, the 95% confidence
/// interval of the mean, the slowest and the fastest run; the spread
/// across the cores' means and the verdict under it.
fn runs_section(records: &[&Record]) -> Section {
    let (summary, c, m) = per_core_summary(records);
    let mut s = Section::new(format!(
        "single-thread bandwidth from each core of node {c} to memory node {m}, {} runs per core, MB/s",
        runs_asked(records).unwrap_or(0)
    ));
    s.header = [
        "cpu", "node", "runs", "mean", "stddev", "95% CI", "min", "max", "vs mean",
    ]
    .map(String::from)
    .to_vec();
    let mean = summary
        .and_then(|r| r.value(metric::BANDWIDTH_MB_S))
        .unwrap_or(0.0);
    for r in core_records(records) {
        let v = r.value(metric::BANDWIDTH_MB_S).unwrap_or(0.0);
        let sd = r.value(mx::metric::STDDEV_MB_S).unwrap_or(0.0);
        let ci = match (
            r.value(mx::metric::CI95_LOW_MB_S),
            r.value(mx::metric::CI95_HIGH_MB_S),
        ) {
            (Some(lo), Some(hi)) => format!("({lo:.1}; {hi:.1})"),
            _ => "-".into(),
        };
        let dev = if mean > 0.0 {
            100.0 * (v - mean) / mean
        } else {
            0.0
        };
        s.rows.push(vec![
            r.param_shown(param::CPU).unwrap_or_else(|| "-".into()),
            r.u64_param(param::CPU_NODE).unwrap_or(0).to_string(),
            r.param_shown(mx::param::RUNS).unwrap_or_else(|| "-".into()),
            format!("{v:.0}"),
            if v > 0.0 {
                format!("{sd:.1} ({:.2}%)", 100.0 * sd / v)
            } else {
                "-".into()
            },
            ci,
            fig(r, mx::metric::MIN_MB_S, 0),
            fig(r, mx::metric::MAX_MB_S, 0),
            format!("{dev:+.1}%"),
        ]);
    }
    s.lines.push(
        "each run: fresh arrays bound to the memory node, a warm-up, the best of the timed runs (STREAM convention); 95% CI of a core's mean = mean -/+ t(0.975, runs - 1) x stddev / sqrt(runs) (Braithwaite's Table 3.2 prints mean -/+ one stddev under that name)".into(),
    );
    if let Some(r) = summary {
        let [spread, verdict] = per_core_verdict(r, mean);
        s.lines.push(format!("across the cores' means: {spread}"));
        s.lines.push(verdict);
    }
    s
}

/// A line per core of a `--runs` run with its spread.
fn runs_csv(records: &[&Record]) -> Csv {
    let metrics = [
        metric::BANDWIDTH_MB_S,
        mx::metric::STDDEV_MB_S,
        mx::metric::CI95_LOW_MB_S,
        mx::metric::CI95_HIGH_MB_S,
        mx::metric::MIN_MB_S,
        mx::metric::MAX_MB_S,
    ];
    Csv {
        header: [
            param::CPU,
            param::CPU_NODE,
            param::MEM_NODE,
            mx::param::RUNS,
        ]
        .into_iter()
        .chain(metrics)
        .map(String::from)
        .collect(),
        rows: core_records(records)
            .map(|r| {
                [
                    param::CPU,
                    param::CPU_NODE,
                    param::MEM_NODE,
                    mx::param::RUNS,
                ]
                .iter()
                .map(|k| r.param_shown(k).unwrap_or_default())
                .chain(
                    metrics
                        .iter()
                        .map(|k| r.value(k).map_or(String::new(), |v| format!("{v:.1}"))),
                )
                .collect()
            })
            .collect(),
        notes: Vec::new(),
    }
}
