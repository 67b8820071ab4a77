//! How sweep records are shown: the human table with summary and scores,
//! sc-membench-compatible CSV (its nine columns in its order, then
//! numabench's own), Markdown and LaTeX tables, and the report's charts
//! against buffer size. All from the records alone.

use super::records::{self, Row};
use crate::analysis::sweep_summary::{Summary, summarize};
use crate::kernels;
use crate::results::names::sweep::csv::{OWN_COLUMNS, SC_MEMBENCH_COLUMNS};
use crate::results::names::{metric, param, probe, sweep as own};
use crate::results::{Document, Record};
use crate::view::table::{Align, Table};
use crate::view::{Block, Chart, Csv, Line, Marker, Section, View};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The sweep's view, registered in `probes::REGISTRY`.
pub(crate) struct SweepView;

const TABLE_HEADER: [&str; 10] = [
    "size",
    "op",
    "bandwidth",
    "STREAM-style",
    crate::results::names::sweep::LATENCY,
    "cv",
    "threads",
    "variant",
    "on node",
    "huge",
];

const TABLE_ALIGN: [Align; 10] = [
    Align::Right,
    Align::Left,
    Align::Right,
    Align::Right,
    Align::Right,
    Align::Right,
    Align::Right,
    Align::Left,
    Align::Right,
    Align::Right,
];

const SUMMARY_HEADER: [&str; 3] = ["bandwidth MB/s", "peak", "weighted avg"];

const NO_SUMMARY: &str = "no summary: the sweep was stopped before its end";

const WARNING: &str = "WARNING: scores may not be comparable due to non-default options:";

const FOR_COMPARABLE: &str = "For comparable scores, run without -t, -p or -s.";

impl View for SweepView {
    fn probe(&self) -> &'static str {
        probe::SWEEP
    }

    fn heading(&self) -> String {
        "Cache-aware sweep".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "Bandwidth and latency against the per-thread buffer size, both on log axes, with the caches marked: the plateaus are the cache levels, and the figures right of the last dashed line are memory's. Bandwidth counts the buffer once, as sc-membench does.",
        )
    }

    fn sections(&self, doc: &Document, records: &[&Record]) -> Vec<Section> {
        let rows = records::rows(records);
        let mut table = Section::new("bandwidth and latency by per-thread buffer size");
        table.header = TABLE_HEADER.iter().map(|h| h.to_string()).collect();
        table.rows = rows.iter().map(table_row).collect();
        table.lines = records::notes(records)
            .iter()
            .map(|n| format!("note: {n}"))
            .collect();
        let mut summary = Section::new("summary");
        if records::stopped(doc) {
            summary.lines.push(NO_SUMMARY.into());
        } else {
            let s = summarize(&rows);
            (summary.header, summary.rows) = summary_table(&s);
            summary.lines = summary_lines(&s);
        }
        let warnings = records::warnings(records);
        if !warnings.is_empty() {
            summary.lines.extend(
                warnings
                    .iter()
                    .map(|w| format!("scores may not be comparable: {w}")),
            );
            summary.lines.push(FOR_COMPARABLE.into());
        }
        vec![table, summary]
    }

    fn text(&self, doc: &Document, records: &[&Record]) -> Option<String> {
        Some(text(
            &records::rows(records),
            &records::warnings(records),
            &records::notes(records),
            records::stopped(doc),
        ))
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        Some(csv(&records::rows(records), records::notes(records)))
    }

    fn blocks(&self, doc: &Document, records: &[&Record]) -> Vec<Block> {
        charts(doc, records)
    }
}

/// The CSV: sc-membench's columns, numabench's, and the notes after the
/// rows.
pub(crate) fn csv(rows: &[Row], notes: Vec<String>) -> Csv {
    Csv {
        header: SC_MEMBENCH_COLUMNS
            .iter()
            .chain(&OWN_COLUMNS)
            .map(|c| c.to_string())
            .collect(),
        rows: rows.iter().map(csv_row).collect(),
        notes,
    }
}

fn csv_row(r: &Row) -> Vec<String> {
    // Files written before records kept the count: a latency row's
    // iterations are its samples, a bandwidth row's are unknown.
    let iterations = match r.iterations {
        Some(n) => n.to_string(),
        None if r.is_latency() => r.latency_samples.to_string(),
        None => String::new(),
    };
    vec![
        r.size_kb.to_string(),
        r.operation.clone(),
        format!("{:.2}", r.bandwidth_mb_s),
        format!("{:.2}", r.latency_ns),
        format!("{:.2}", r.latency_stddev_ns),
        r.latency_samples.to_string(),
        r.threads.to_string(),
        iterations,
        format!("{:.6}", r.elapsed_s),
        r.variant.clone(),
        r.bytes_per_element.to_string(),
        format!("{:.2}", r.stream_bandwidth_mb_s),
        format!("{:.1}", r.placement_verified_pct),
        format!("{:.1}", r.huge_pct),
    ]
}

/// MB/s (10^6 bytes/s) as `12.3 GB/s` or `850.1 MB/s`.
pub(crate) fn rate(mb_s: f64) -> String {
    if mb_s >= 1e6 {
        format!("{:.1} TB/s", mb_s / 1e6)
    } else if mb_s >= 1e3 {
        format!("{:.1} GB/s", mb_s / 1e3)
    } else {
        format!("{mb_s:.1} MB/s")
    }
}

fn size(kb: u64) -> String {
    if kb >= 1024 * 1024 && kb.is_multiple_of(1024 * 1024) {
        format!("{} GiB", kb >> 20)
    } else if kb >= 1024 && kb.is_multiple_of(1024) {
        format!("{} MiB", kb >> 10)
    } else {
        format!("{kb} KiB")
    }
}

fn table_row(r: &Row) -> Vec<String> {
    let lat = r.is_latency();
    let dash = || "-".to_string();
    vec![
        size(r.size_kb),
        r.operation.clone(),
        if lat { dash() } else { rate(r.bandwidth_mb_s) },
        if lat || r.stream_bandwidth_mb_s == r.bandwidth_mb_s {
            dash()
        } else {
            rate(r.stream_bandwidth_mb_s)
        },
        if lat {
            format!("{:.2} ns", r.latency_ns)
        } else {
            dash()
        },
        format!("{:.1}%", r.cv_pct),
        r.threads.to_string(),
        r.variant.clone(),
        format!("{:.0}%", r.placement_verified_pct),
        format!("{:.0}%", r.huge_pct),
    ]
}

/// The human view: one line per measurement, then the summary.
/// `stopped`: a stop cut the sweep short, so the summary (peaks, averages
/// over sizes, RAM latency at the largest size) would describe a different
/// sweep and is left out.
fn text(rows: &[Row], warnings: &[String], notes: &[String], stopped: bool) -> String {
    let mut t = Table::new(&TABLE_HEADER, &TABLE_ALIGN);
    for r in rows {
        t.row(table_row(r));
    }
    let mut out = t.render();
    out.push('\n');
    if stopped {
        let _ = writeln!(out, "{NO_SUMMARY}");
    } else {
        out.push_str(&summary_text(&summarize(rows)));
    }
    // Notes and warnings are strings from the document: a hand-edited one
    // may carry terminal escapes.
    for n in notes {
        let _ = writeln!(out, "note: {}", crate::text::escape(n));
    }
    if !warnings.is_empty() {
        let _ = writeln!(out, "\n{WARNING}");
        for w in warnings {
            let _ = writeln!(out, "  - {}", crate::text::escape(w));
        }
        let _ = writeln!(out, "{FOR_COMPARABLE}");
    }
    out
}

fn summary_table(s: &Summary) -> (Vec<String>, Vec<Vec<String>>) {
    if s.ops.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let rows = s
        .ops
        .iter()
        .map(|o| {
            vec![
                o.operation.clone(),
                format!("{:.0}", o.peak_mb_s),
                format!("{:.0}", o.weighted_avg_mb_s),
            ]
        })
        .collect();
    (SUMMARY_HEADER.iter().map(|h| h.to_string()).collect(), rows)
}

/// RAM latency and the scores, a line each.
fn summary_lines(s: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((lat, kb)) = s.ram_latency {
        out.push(format!("RAM latency: {lat:.1} ns (at {})", size(kb)));
    }
    out.push(match &s.scores {
        Some(sc) => format!(
            "scores: bandwidth {:.1} (mean of read, write, copy peaks in GB/s), latency {:.1} (1000 / ns), combined {:.0} (sqrt(bandwidth x latency) x 100)",
            sc.bandwidth, sc.latency, sc.combined
        ),
        None => "scores: not computed (they need read, write, copy and latency)".into(),
    });
    out
}

fn summary_text(s: &Summary) -> String {
    let mut out = String::new();
    let (header, rows) = summary_table(s);
    if !header.is_empty() {
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Table::new(&header, &[Align::Left, Align::Right, Align::Right]);
        for r in rows {
            t.row(r);
        }
        out.push_str(&t.render());
    }
    for l in summary_lines(s) {
        let _ = writeln!(out, "{l}");
    }
    out
}

fn size_label(bytes: f64) -> String {
    crate::units::bytes(bytes as u64)
}

/// The report's part: bandwidth and latency against buffer size on a log
/// axis, this CPU's cache sizes marked.
fn charts(doc: &Document, records: &[&Record]) -> Vec<Block> {
    let op = |r: &Record| {
        r.str_param(own::param::OPERATION)
            .unwrap_or("?")
            .to_string()
    };
    let mut bw: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut lat = Vec::new();
    for r in records {
        let Some(s) = r.f64_param(param::SIZE_BYTES) else {
            continue;
        };
        if let Some(v) = r.value(metric::LATENCY_NS) {
            lat.push((s, v));
        } else if let Some(v) = r.value(metric::BANDWIDTH_MB_S) {
            bw.entry(op(r)).or_default().push((s, v));
        }
    }
    let markers = cache_markers(doc);
    let mut out = vec![
        Block::Caption("per-thread buffer size and the figures on log axes; dashed lines: this CPU's cache sizes; bandwidth in the sc-membench convention (copy counts the buffer once)".into()),
        Block::Chart(Chart {
            title: "bandwidth against buffer size".into(),
            x_label: "per-thread buffer size".into(),
            y_label: "MB/s (log)".into(),
            x_log2: true,
            // L1 runs ten times memory's figure and more: on a linear axis
            // memory's plateau would lie flat on the floor.
            y_log10: true,
            lines: bw
                .into_iter()
                .map(|(label, points)| Line { label, points })
                .collect(),
            markers: markers.clone(),
            x_format: Some(size_label),
        }),
    ];
    if !lat.is_empty() {
        out.push(Block::Chart(Chart {
            title: "latency against buffer size".into(),
            x_label: "buffer size".into(),
            y_label: "ns per load (log)".into(),
            x_log2: true,
            y_log10: true,
            lines: vec![Line {
                label: own::LATENCY.into(),
                points: lat,
            }],
            markers,
            x_format: Some(size_label),
        }));
    }
    out
}

/// The data cache sizes of the first CPU the run could use.
fn cache_markers(doc: &Document) -> Vec<Marker> {
    let topo = &doc.host.topology;
    let cpu = topo.allowed.cpus.first().unwrap_or(0);
    topo.caches_of(cpu)
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| Marker {
            x: c.size_bytes as f64,
            label: format!("L{}", c.level),
        })
        .collect()
}

/// The kernel registry as a table: which kernels this CPU can run.
pub(crate) fn kernel_table() -> String {
    let mut t = Table::new(
        &[
            "kernel",
            "op",
            "isa",
            "accesses",
            "STREAM bytes/elem",
            "here",
        ],
        &[Align::Left; 6],
    );
    for k in kernels::KERNELS {
        t.row(vec![
            k.name.to_string(),
            k.op.to_string(),
            k.isa.to_string(),
            k.access().to_string(),
            k.op.stream_bytes_per_element().to_string(),
            if k.is_available() { "yes" } else { "no" }.into(),
        ]);
    }
    t.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escapes_in_warnings_and_notes_are_shown_not_sent() {
        let out = text(
            &[],
            &["\u{1b}[2J\u{1b}]0;owned\u{7}".into()],
            &["\u{9b}31mred".into()],
            true,
        );
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        assert!(
            out.contains("\\x1b[2J") && out.contains("\\x9b31m"),
            "{out}"
        );
    }

    #[test]
    fn csv_header_starts_with_sc_membench_columns_in_order() {
        assert_eq!(
            csv(&[], Vec::new()).header.join(","),
            "size_kb,operation,bandwidth_mb_s,latency_ns,latency_stddev_ns,latency_samples,threads,iterations,elapsed_s,\
             variant,bytes_per_element,stream_bandwidth_mb_s,placement_verified_pct,huge_pct"
        );
    }

    #[test]
    fn a_file_without_iterations_leaves_only_the_bandwidth_count_blank() {
        let mut r = Row {
            size_kb: 64,
            operation: own::LATENCY.into(),
            bandwidth_mb_s: 0.0,
            latency_ns: 5.0,
            latency_stddev_ns: 0.5,
            latency_samples: 7,
            threads: 1,
            iterations: None,
            elapsed_s: 0.1,
            variant: own::CHASE.into(),
            bytes_per_element: 0,
            stream_bandwidth_mb_s: 0.0,
            placement_verified_pct: 100.0,
            huge_pct: 0.0,
            cv_pct: 1.0,
        };
        assert_eq!(csv_row(&r)[7], "7");
        r.operation = "read".into();
        assert_eq!(csv_row(&r)[7], "");
        r.iterations = Some(42);
        assert_eq!(csv_row(&r)[7], "42");
    }

    #[test]
    fn rates_and_sizes() {
        assert_eq!(rate(850.14), "850.1 MB/s");
        assert_eq!(rate(12_345.0), "12.3 GB/s");
        assert_eq!(rate(2_612_561.0), "2.6 TB/s");
        assert_eq!(size(16), "16 KiB");
        assert_eq!(size(32768), "32 MiB");
        assert_eq!(size(1 << 20), "1 GiB");
    }
}
