//! How latency records are shown: a node x node grid per (pattern, page
//! kind) with each cell's CV (text, Markdown, LaTeX; heatmaps in HTML), a
//! chart of latency over stride where a stride sweep was measured, the
//! placement, and one CSV line per record.

use crate::kernels::pattern::Pattern;
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::view::{Block, Chart, Csv, HeatRow, Heatmap, Line, Section, View};
use std::collections::{BTreeSet, HashMap};

/// The latency probe's view (registered in `probes::REGISTRY`).
pub(crate) struct LatencyView;

use crate::analysis::atlas::pattern_label as pattern_of;

/// (pattern, pages asked) groups in the order first met; stride chases
/// are one group per page kind (their sweep is a chart).
fn groups(records: &[&Record]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.str_param(param::PATTERN).unwrap_or("?") != Pattern::STRIDE)
    {
        let g = (
            pattern_of(r),
            r.str_param(param::PAGES_ASKED).unwrap_or("?").to_string(),
        );
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

fn in_group<'a>(records: &[&'a Record], g: &(String, String)) -> Vec<&'a Record> {
    records
        .iter()
        .copied()
        .filter(|r| pattern_of(r) == g.0 && r.str_param(param::PAGES_ASKED).unwrap_or("?") == g.1)
        .collect()
}

fn axes(records: &[&Record]) -> (Vec<u64>, Vec<u64>) {
    let set = |k| -> BTreeSet<u64> { records.iter().filter_map(|r| r.u64_param(k)).collect() };
    (
        set(param::CPU_NODE).into_iter().collect(),
        set(param::MEM_NODE).into_iter().collect(),
    )
}

/// Each (cpu node, mem node)'s record, the first where a pair repeats:
/// looked up once per cell of a grid, so an index, not a scan.
fn cells<'a>(records: &[&'a Record]) -> HashMap<(u64, u64), &'a Record> {
    let mut by_pair = HashMap::new();
    for r in records {
        if let (Some(c), Some(m)) = (r.u64_param(param::CPU_NODE), r.u64_param(param::MEM_NODE)) {
            by_pair.entry((c, m)).or_insert(*r);
        }
    }
    by_pair
}

/// What the pages of a group really were, where not what was asked.
fn got(records: &[&Record]) -> String {
    let kinds: BTreeSet<&str> = records
        .iter()
        .map(|r| r.str_param(param::PAGE_SIZE).unwrap_or("?"))
        .collect();
    kinds.into_iter().collect::<Vec<_>>().join("/")
}

fn title(g: &(String, String), records: &[&Record]) -> String {
    let got = got(records);
    let pages = if got == g.1 {
        g.1.clone()
    } else {
        format!("{} asked, {got} got", g.1)
    };
    let size = records
        .first()
        .and_then(|r| r.u64_param(param::SIZE_BYTES))
        .map_or(String::new(), |b| {
            format!(", {} buffer", crate::units::bytes(b))
        });
    format!(
        "idle latency, {}, {pages} pages{size}: ns per load (CV %)",
        g.0
    )
}

fn grid(g: &(String, String), records: &[&Record]) -> Section {
    let (cpus, mems) = axes(records);
    let at = cells(records);
    let mut s = Section::new(title(g, records));
    s.header = std::iter::once("cpu\\mem".to_string())
        .chain(mems.iter().map(|m| m.to_string()))
        .collect();
    for &c in &cpus {
        let mut row = vec![c.to_string()];
        for &m in &mems {
            // A record from a file may lack either figure: "-" for what
            // is missing, never NaN.
            let shown = at.get(&(c, m)).and_then(|r| {
                let ns = r.value(metric::LATENCY_NS)?;
                Some(match r.value(metric::CV_PCT) {
                    Some(cv) => format!("{ns:.1} ({cv:.1}%)"),
                    None => format!("{ns:.1}"),
                })
            });
            row.push(shown.unwrap_or_else(|| "-".into()));
        }
        s.rows.push(row);
    }
    s.mark_column_best(true);
    s
}

fn heatmap(g: &(String, String), records: &[&Record]) -> Heatmap {
    let (cpus, mems) = axes(records);
    let at = cells(records);
    Heatmap {
        title: title(g, records).replace(" (CV %)", ""),
        header: std::iter::once("cpu \\ mem".to_string())
            .chain(mems.iter().map(|m| m.to_string()))
            .collect(),
        rows: cpus
            .iter()
            .map(|&c| {
                let cells: Vec<Option<f64>> = mems
                    .iter()
                    .map(|&m| at.get(&(c, m)).and_then(|r| r.value(metric::LATENCY_NS)))
                    .collect();
                HeatRow {
                    label: c.to_string(),
                    reference: cells.iter().flatten().copied().reduce(f64::min),
                    cells,
                }
            })
            .collect(),
        lower_better: true,
        digits: 1,
        compact: false,
        by_range: false,
    }
}

/// Latency over stride, a line per (pair, pages asked).
fn stride_chart(records: &[&Record]) -> Option<Chart> {
    let strides: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.str_param(param::PATTERN).unwrap_or("?") == Pattern::STRIDE)
        .collect();
    let mut lines: Vec<Line> = Vec::new();
    for r in &strides {
        let label = format!(
            "cpu {} -> mem {}, {}",
            r.u64_param(param::CPU_NODE).unwrap_or(0),
            r.u64_param(param::MEM_NODE).unwrap_or(0),
            r.str_param(param::PAGES_ASKED).unwrap_or("?")
        );
        let (Some(x), Some(y)) = (
            r.u64_param(param::STRIDE_BYTES),
            r.value(metric::LATENCY_NS),
        ) else {
            continue;
        };
        match lines.iter_mut().find(|l| l.label == label) {
            Some(l) => l.points.push((x as f64, y)),
            None => lines.push(Line {
                label,
                points: vec![(x as f64, y)],
            }),
        }
    }
    (!lines.is_empty()).then(|| Chart {
        title: "latency over stride (lat_mem_rd style)".into(),
        x_label: "stride (bytes)".into(),
        y_label: "ns per load".into(),
        x_log2: true,
        lines,
        ..Default::default()
    })
}

fn stride_section(records: &[&Record]) -> Option<Section> {
    let chart = stride_chart(records)?;
    let mut s = Section::new("latency over stride, ns per load (lat_mem_rd style)");
    let mut xs: Vec<f64> = chart
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    s.header = std::iter::once("stride (bytes)".to_string())
        .chain(chart.lines.iter().map(|l| l.label.clone()))
        .collect();
    for x in xs {
        let mut row = vec![format!("{x:.0}")];
        for l in &chart.lines {
            row.push(
                l.points
                    .iter()
                    .find(|p| p.0 == x)
                    .map_or("-".into(), |p| format!("{:.1}", p.1)),
            );
        }
        s.rows.push(row);
    }
    Some(s)
}

/// Placement and the run's notes.
fn placement(records: &[&Record]) -> Section {
    let mut s = Section::new("placement");
    s.lines.push(match crate::view::lowest_verified_pct(records) {
        Some(p) if p >= 99.95 => "every buffer's pages were checked on its memory node (100% verified), every chase ran on its CPU".into(),
        Some(p) => format!("lowest verified placement: {p:.1}% of pages on the intended node"),
        None => "placement was not verified".into(),
    });
    s.lines
        .extend(crate::probes::node_chase::builds_line(records));
    s.lines.push("page-local: random order within each window, each window done before the next, the windows in random order (multichase -T); full-random: one random cycle through the whole buffer, page walks included; the median of ~10 ms samples is shown".into());
    s.lines
        .extend(records.iter().flat_map(|r| r.notes.iter().cloned()));
    s
}

impl View for LatencyView {
    fn probe(&self) -> &'static str {
        probe::LATENCY
    }

    fn heading(&self) -> String {
        "Idle latency by access pattern".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "One thread on each CPU node (row) chases a pointer chain through a buffer on each memory node (column). Page-local keeps the chase inside a 256 KiB window at a time, so it is memory latency without page walks (the figure multichase and MLC quote); full-random adds the TLB misses of a load anywhere in the buffer. Colours compare a cell with its row's best.",
        )
    }

    fn sections(&self, _doc: &Document, records: &[&Record]) -> Vec<Section> {
        let mut out: Vec<Section> = groups(records)
            .iter()
            .map(|g| grid(g, &in_group(records, g)))
            .collect();
        out.extend(stride_section(records));
        out.push(placement(records));
        out
    }

    fn blocks(&self, _doc: &Document, records: &[&Record]) -> Vec<Block> {
        let mut out: Vec<Block> = groups(records)
            .iter()
            .map(|g| Block::Heatmap(heatmap(g, &in_group(records, g))))
            .collect();
        out.extend(stride_chart(records).map(Block::Chart));
        out.push(Block::Section(placement(records)));
        out
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        let header = [
            param::CPU_NODE,
            param::MEM_NODE,
            param::PATTERN,
            param::WINDOW_BYTES,
            param::STRIDE_BYTES,
            param::PAGES_ASKED,
            param::PAGE_SIZE,
            param::SIZE_BYTES,
            metric::LATENCY_NS,
            metric::CV_PCT,
            crate::results::names::column::PLACEMENT_VERIFIED_PCT,
        ];
        let rows = records
            .iter()
            .map(|r| {
                let n = |k| r.u64_param(k).map_or(String::new(), |v| v.to_string());
                let v = |k| r.value(k).map_or(String::new(), |v| format!("{v:.2}"));
                vec![
                    n(param::CPU_NODE),
                    n(param::MEM_NODE),
                    r.str_param(param::PATTERN).unwrap_or("?").to_string(),
                    n(param::WINDOW_BYTES),
                    n(param::STRIDE_BYTES),
                    r.str_param(param::PAGES_ASKED).unwrap_or("?").to_string(),
                    r.str_param(param::PAGE_SIZE).unwrap_or("?").to_string(),
                    n(param::SIZE_BYTES),
                    v(metric::LATENCY_NS),
                    v(metric::CV_PCT),
                    r.placement
                        .as_ref()
                        .and_then(|p| p.on_target_pct)
                        .map_or(String::new(), |p| format!("{p:.1}")),
                ]
            })
            .collect();
        Some(Csv {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
            notes: records
                .iter()
                .flat_map(|r| r.notes.iter().cloned())
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Better;

    fn at(c: u64, m: u64) -> Record {
        Record::new(probe::LATENCY, &format!("chase {c}->{m}"))
            .param(param::CPU_NODE, c)
            .param(param::MEM_NODE, m)
            .param(param::PATTERN, Pattern::FULL_RANDOM)
            .param(param::PAGES_ASKED, "thp")
    }

    #[test]
    fn the_grid_shows_a_missing_figure_as_a_dash_and_the_first_of_a_repeated_pair() {
        let full = at(0, 0)
            .metric(metric::LATENCY_NS, 100.0, "ns", Better::Lower)
            .metric(metric::CV_PCT, 2.0, "%", Better::Lower);
        let no_cv = at(0, 1).metric(metric::LATENCY_NS, 150.0, "ns", Better::Lower);
        let empty = at(1, 0);
        let again = at(0, 0).metric(metric::LATENCY_NS, 999.0, "ns", Better::Lower);
        let records = [&full, &no_cv, &empty, &again];
        let g = &groups(&records)[0];
        let s = grid(g, &records);
        assert_eq!(s.rows[0][1..], ["100.0 (2.0%)", "150.0"]);
        assert_eq!(s.rows[1][1..], ["-", "-"]);
    }
}
