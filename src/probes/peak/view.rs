//! How peak records are shown: the best mix per CPU node and target, then a
//! table per CPU node and target (rows: mixes; columns: thread count x
//! store kind); in HTML a heatmap of the best figures and a bar chart per
//! target.

use crate::results::names::peak::{self as pk, kind};
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::view::{BarGroup, Bars, Block, Csv, HeatRow, Heatmap, Section, View};

/// The peak probe's view (registered in `probes::REGISTRY`).
pub(crate) struct PeakView;

fn of_kind<'a>(records: &[&'a Record], k: &str) -> Vec<&'a Record> {
    records
        .iter()
        .copied()
        .filter(|r| r.str_param(pk::param::KIND).unwrap_or("?") == k)
        .collect()
}

fn store_label(store: &str) -> &str {
    if store == "nontemporal" {
        "non-temporal"
    } else {
        store
    }
}

fn target_label(target: &str) -> String {
    if target == pk::INTERLEAVE {
        "interleaved memory".into()
    } else {
        format!("memory node {target}")
    }
}

/// (CPU node, target) in the order first measured.
fn pairs(records: &[&Record]) -> Vec<(u64, String)> {
    let mut out: Vec<(u64, String)> = Vec::new();
    for r in records {
        let key = (
            r.u64_param(param::CPU_NODE).unwrap_or(0),
            r.str_param(pk::param::TARGET).unwrap_or("?").to_string(),
        );
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

fn distinct<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The mix records of one CPU node and target.
fn of_pair<'a>(mixes: &[&'a Record], c: u64, t: &str) -> Vec<&'a Record> {
    mixes
        .iter()
        .copied()
        .filter(|r| {
            r.u64_param(param::CPU_NODE).unwrap_or(0) == c
                && r.str_param(pk::param::TARGET).unwrap_or("?") == t
        })
        .collect()
}

/// Columns of a pair's table: (threads, store kind).
fn columns(of: &[&Record]) -> Vec<(u64, String)> {
    distinct(of.iter().map(|r| {
        (
            r.u64_param(param::THREADS).unwrap_or(0),
            r.str_param(pk::param::STORE).unwrap_or("?").into(),
        )
    }))
}

fn cell<'a>(of: &[&'a Record], mix: &str, (n, store): &(u64, String)) -> Option<&'a Record> {
    of.iter().copied().find(|r| {
        r.str_param(pk::param::MIX).unwrap_or("?") == mix
            && r.u64_param(param::THREADS).unwrap_or(0) == *n
            && r.str_param(pk::param::STORE).unwrap_or("?") == store
    })
}

fn best_line(r: &Record) -> String {
    let mix = r.str_param(pk::param::MIX).unwrap_or("?");
    // A mix without stores (read): its store kind is the kind of its loads.
    let stores = mix
        .parse::<crate::kernels::Mix>()
        .map_or(true, |m| m.op().stores());
    let accesses = if stores { "stores" } else { "loads" };
    let variant = r.str_param(param::VARIANT).unwrap_or("?");
    let streams = crate::kernels::find(variant)
        .filter(|k| k.streams > 1)
        .map(|k| format!(" in {} streams", k.streams))
        .unwrap_or_default();
    format!(
        "best with {} thread(s): {mix} with {} {accesses}{streams} ({variant}), {} MB/s",
        r.u64_param(param::THREADS).unwrap_or(0),
        store_label(r.str_param(pk::param::STORE).unwrap_or("?")),
        r.value(metric::BANDWIDTH_MB_S)
            .map_or("-".into(), |v| format!("{v:.0}"))
    )
}

fn pair_section(records: &[&Record], c: u64, t: &str) -> Section {
    let of = of_pair(&of_kind(records, kind::MIX), c, t);
    let cols = columns(&of);
    let mut s = Section::new(format!("CPU node {c} -> {}, MB/s", target_label(t)));
    s.header = std::iter::once("mix".to_string())
        .chain(
            cols.iter()
                .map(|(n, st)| format!("{n}t {}", store_label(st))),
        )
        .collect();
    for mix in distinct(
        of.iter()
            .map(|r| r.str_param(pk::param::MIX).unwrap_or("?")),
    ) {
        let mut row = vec![mix.to_string()];
        for col in &cols {
            row.push(
                cell(&of, mix, col)
                    .and_then(|r| r.value(metric::BANDWIDTH_MB_S))
                    .map_or("-".into(), |v| format!("{v:.0}")),
            );
        }
        s.rows.push(row);
    }
    s.mark_column_best(false);
    for b in of_pair(&of_kind(records, kind::BEST), c, t) {
        s.lines.push(best_line(b));
    }
    if let Some(verified) = crate::view::lowest_verified_pct(&of) {
        s.lines.push(format!(
            "placement verified: at least {verified:.1}% of every team's pages on {}",
            if t == pk::INTERLEAVE {
                "the interleaved nodes"
            } else {
                "the target node"
            }
        ));
    }
    s
}

/// The best figure of each CPU node and thread count at each target.
fn summary(records: &[&Record]) -> Option<Section> {
    let best = of_kind(records, kind::BEST);
    if best.is_empty() {
        return None;
    }
    let targets = distinct(
        best.iter()
            .map(|r| r.str_param(pk::param::TARGET).unwrap_or("?")),
    );
    let mut s = Section::new("best mix and store kind, MB/s");
    s.header = std::iter::once("cpu node, threads".to_string())
        .chain(targets.iter().map(|t| target_label(t)))
        .collect();
    let rows = distinct(best.iter().map(|r| {
        (
            r.u64_param(param::CPU_NODE).unwrap_or(0),
            r.u64_param(param::THREADS).unwrap_or(0),
        )
    }));
    for (c, n) in rows {
        let mut row = vec![format!("{c}, {n}t")];
        for t in &targets {
            let r = best.iter().find(|r| {
                r.u64_param(param::CPU_NODE).unwrap_or(0) == c
                    && r.u64_param(param::THREADS).unwrap_or(0) == n
                    && r.str_param(pk::param::TARGET).unwrap_or("?") == *t
            });
            row.push(
                r.and_then(|r| Some((r, r.value(metric::BANDWIDTH_MB_S)?)))
                    .map_or("-".into(), |(r, v)| {
                        format!(
                            "{v:.0} {} {}",
                            r.str_param(pk::param::MIX).unwrap_or("?"),
                            if r.str_param(pk::param::STORE).unwrap_or("?") == "nontemporal" {
                                "nt"
                            } else {
                                "regular"
                            }
                        )
                    }),
            );
        }
        s.rows.push(row);
    }
    s.lines.push(
        "MB/s = 10^6 bytes/s, STREAM convention (bytes read + bytes written, no write-allocate); mixes R:W: read, 3:1 (add3), 2:1 (add), 1:1 (copy), write, triad (a = b + q*c); nt = non-temporal stores (read: non-temporal loads)".into(),
    );
    Some(s)
}

/// The best figure with the most threads of each CPU node at each target,
/// coloured by its share of the row's best.
fn heatmap(records: &[&Record]) -> Option<Heatmap> {
    let best = of_kind(records, kind::BEST);
    let rows = distinct(
        best.iter()
            .map(|r| r.u64_param(param::CPU_NODE).unwrap_or(0)),
    );
    let targets = distinct(
        best.iter()
            .map(|r| r.str_param(pk::param::TARGET).unwrap_or("?")),
    );
    if rows.is_empty() {
        return None;
    }
    let top = |c: u64, t: &str| -> Option<f64> {
        best.iter()
            .filter(|r| {
                r.u64_param(param::CPU_NODE).unwrap_or(0) == c
                    && r.str_param(pk::param::TARGET).unwrap_or("?") == t
            })
            .max_by_key(|r| r.u64_param(param::THREADS).unwrap_or(0))
            .and_then(|r| r.value(metric::BANDWIDTH_MB_S))
    };
    Some(Heatmap {
        title: "peak injection bandwidth, all threads of the CPU node, best mix, MB/s".into(),
        header: std::iter::once("cpu node \\ target".to_string())
            .chain(targets.iter().map(|t| target_label(t)))
            .collect(),
        rows: rows
            .iter()
            .map(|&c| {
                let cells: Vec<Option<f64>> = targets.iter().map(|t| top(c, t)).collect();
                let reference = cells.iter().flatten().copied().reduce(f64::max);
                HeatRow {
                    label: format!("node {c}"),
                    cells,
                    reference,
                }
            })
            .collect(),
        lower_better: false,
        digits: 0,
        compact: false,
        by_range: false,
    })
}

fn bars(records: &[&Record], c: u64, t: &str) -> Bars {
    let of = of_pair(&of_kind(records, kind::MIX), c, t);
    let cols = columns(&of);
    Bars {
        title: format!("CPU node {c} -> {}", target_label(t)),
        y_label: "MB/s".into(),
        series: cols
            .iter()
            .map(|(n, st)| format!("{n}t {}", store_label(st)))
            .collect(),
        groups: distinct(
            of.iter()
                .map(|r| r.str_param(pk::param::MIX).unwrap_or("?")),
        )
        .into_iter()
        .map(|mix| BarGroup {
            label: mix.to_string(),
            values: cols
                .iter()
                .map(|col| cell(&of, mix, col).and_then(|r| r.value(metric::BANDWIDTH_MB_S)))
                .collect(),
        })
        .collect(),
    }
}

fn notes(records: &[&Record]) -> Vec<String> {
    distinct(
        records
            .iter()
            .filter(|r| r.str_param(pk::param::KIND).unwrap_or("?") == kind::MIX)
            .flat_map(|r| r.notes.iter().cloned()),
    )
}

impl View for PeakView {
    fn probe(&self) -> &'static str {
        probe::PEAK
    }

    fn heading(&self) -> String {
        "Peak injection bandwidth".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "Every core of a CPU node injecting one read/write mix into local, remote or interleaved memory, with regular and with non-temporal stores (for read, loads). The best mix and store kind is named for each target: a bandwidth that silently picks one store kind can be wrong by a third.",
        )
    }

    fn sections(&self, _doc: &Document, records: &[&Record]) -> Vec<Section> {
        let mut out: Vec<Section> = summary(records).into_iter().collect();
        for (c, t) in pairs(records) {
            out.push(pair_section(records, c, &t));
        }
        let notes = notes(records);
        if !notes.is_empty() {
            let mut s = Section::new("");
            s.lines = notes;
            out.push(s);
        }
        out
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        let header = [
            param::CPU_NODE,
            pk::param::TARGET,
            param::THREADS,
            pk::param::MIX,
            pk::param::STORE,
            param::VARIANT,
            metric::BANDWIDTH_MB_S,
            pk::csv::VERIFIED_PCT,
            kind::BEST,
        ];
        // One look-up per row: a scan of the best records for each would
        // take minutes on a document of tens of thousands of records.
        let key = |r: &Record| -> String {
            [
                param::CPU_NODE,
                pk::param::TARGET,
                param::THREADS,
                param::VARIANT,
            ]
            .iter()
            .map(|k| r.param_shown(k).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\u{1f}")
        };
        let best: std::collections::HashSet<String> =
            of_kind(records, kind::BEST).into_iter().map(key).collect();
        let is_best = |r: &Record| best.contains(&key(r));
        Some(Csv {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: of_kind(records, kind::MIX)
                .iter()
                .map(|r| {
                    vec![
                        r.u64_param(param::CPU_NODE).unwrap_or(0).to_string(),
                        r.str_param(pk::param::TARGET).unwrap_or("?").into(),
                        r.u64_param(param::THREADS).unwrap_or(0).to_string(),
                        r.str_param(pk::param::MIX).unwrap_or("?").into(),
                        r.str_param(pk::param::STORE).unwrap_or("?").into(),
                        r.str_param(param::VARIANT).unwrap_or("?").into(),
                        r.value(metric::BANDWIDTH_MB_S)
                            .map_or(String::new(), |v| format!("{v:.1}")),
                        r.placement
                            .as_ref()
                            .and_then(|p| p.on_target_pct)
                            .map_or(String::new(), |v| format!("{v:.1}")),
                        is_best(r).to_string(),
                    ]
                })
                .collect(),
            notes: notes(records),
        })
    }

    fn blocks(&self, _doc: &Document, records: &[&Record]) -> Vec<Block> {
        let mut out: Vec<Block> = heatmap(records).into_iter().map(Block::Heatmap).collect();
        out.extend(summary(records).map(Block::Section));
        for (c, t) in pairs(records) {
            out.push(Block::Bars(bars(records, c, &t)));
            out.push(Block::Section(pair_section(records, c, &t)));
        }
        out.extend(notes(records).into_iter().map(Block::Note));
        out
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
