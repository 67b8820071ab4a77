//! How tier records are shown, from the records alone: the kernel's view
//! of its tiers, a table per test (its baselines and itself), the position
//! between the baselines; the report charts each test's memory per region
//! and tier over time with the 90% mark, its promotions and demotions per
//! second and its throughput.

use super::records::MARK_PCT;
use crate::results::names::tier::{metric as tm, param as tp, series as ts};
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::view::chart::{Chart, Marker, lines_of};
use crate::view::{Block, Section, View};

pub(crate) struct TierView;

fn text(r: &Record, key: &str) -> String {
    r.param_shown(key)
        .map_or("?".into(), |s| crate::text::escape(&s).into_owned())
}

fn is_test(r: &Record) -> bool {
    !r.has_param(tp::BIND)
}

/// The kernel's view of its tiers and the settings the runs had.
fn kernel_section(r: &Record) -> Section {
    let mut s = Section::new("the kernel's tiers");
    s.lines.push(format!(
        "fast: node {} (memory tier {}), slow: node {} (memory tier {}); workers on node {}'s CPUs",
        text(r, tp::FAST_NODE),
        text(r, tp::FAST_TIER),
        text(r, tp::SLOW_NODE),
        text(r, tp::SLOW_TIER),
        text(r, param::CPU_NODE)
    ));
    if let Some(m) = r.map_param(tp::KERNEL_SETTINGS) {
        let kv: Vec<String> = m
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    crate::text::escape(k),
                    crate::text::escape(v.as_str().unwrap_or("?"))
                )
            })
            .collect();
        s.lines.push(format!(
            "kernel settings during the runs: {}",
            kv.join(", ")
        ));
    }
    s
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}%"))
}

fn count(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{}", v as u64))
}

fn row(r: &Record) -> Vec<String> {
    let demoted: Option<f64> = [
        tm::PGDEMOTE_KSWAPD,
        tm::PGDEMOTE_DIRECT,
        tm::PGDEMOTE_KHUGEPAGED,
    ]
    .iter()
    .filter_map(|k| r.value(k))
    .reduce(|a, b| a + b);
    vec![
        r.str_param(tp::BIND).unwrap_or("test").to_string(),
        r.value(metric::BANDWIDTH_MB_S)
            .map_or("-".into(), |v| format!("{:.2}", v / 1000.0)),
        pct(r.value(tm::HOT_FAST_END_PCT)),
        pct(r.value(tm::WARM_FAST_END_PCT)),
        pct(r.value(tm::COLD_FAST_END_PCT)),
        if r.has_param(tp::BIND) {
            "-".into()
        } else {
            r.value(tm::HOT_90_S)
                .map_or("never".into(), |v| format!("{v:.1} s"))
        },
        count(r.value(tm::PGPROMOTE_SUCCESS)),
        count(demoted),
        r.value(tm::THRASH_PAGES_S)
            .map_or("-".into(), |v| format!("{v:.0}")),
        pct(r.value(tm::SLOWEST_INTERVAL_PCT)),
        r.value(tm::SAMPLING_OVERHEAD_PCT)
            .map_or("-".into(), |v| format!("{v:.2}%")),
    ]
}

const HEADER: [&str; 11] = [
    "run",
    "GB/s",
    "hot on fast",
    "warm on fast",
    "cold on fast",
    "hot 90% fast at",
    "promoted",
    "demoted",
    "(pro+de)/s",
    "slowest interval",
    "sampling",
];

/// Where the test lies between its baselines, in a line.
fn position_line(r: &Record) -> Option<String> {
    let (f, s) = (r.f64_param(tp::FAST_GB_S)?, r.f64_param(tp::SLOW_GB_S)?);
    let v = r.value(metric::BANDWIDTH_MB_S)? / 1000.0;
    Some(match r.value(tm::POSITION_PCT) {
        Some(p) => format!(
            "position: {p:.0}% of the way from all-slow ({s:.2} GB/s) to all-fast ({f:.2} GB/s) at {v:.2} GB/s"
        ),
        None => format!(
            "no position: all-fast ({f:.2} GB/s) is not above all-slow ({s:.2} GB/s) by more than 1%, so there is nothing to place {v:.2} GB/s between"
        ),
    })
}

fn test_section(name: &str, runs: &[&Record]) -> Section {
    let mut s = Section::new(format!("{name}: {}", describe(runs)));
    s.header = HEADER.iter().map(|h| h.to_string()).collect();
    s.rows = runs.iter().map(|r| row(r)).collect();
    for r in runs {
        let who = r.str_param(tp::BIND).unwrap_or("test");
        for n in &r.notes {
            s.lines.push(format!("{who}: {}", crate::text::escape(n)));
        }
        if is_test(r)
            && let Some(p) = position_line(r)
        {
            s.lines.push(p);
        }
    }
    s
}

/// The test's regions in a few words: size and start node of each.
fn describe(runs: &[&Record]) -> String {
    let Some(r) = runs.iter().find(|r| is_test(r)).or(runs.first()) else {
        return String::new();
    };
    let Some(m) = r.map_param(tp::REGIONS) else {
        return String::new();
    };
    let parts: Vec<String> = m
        .iter()
        .map(|(heat, v)| {
            let mib = v
                .get(param::SIZE_BYTES)
                .and_then(|b| b.as_u64())
                .unwrap_or(0)
                >> 20;
            let node = v
                .get(tp::WRITTEN_ON_NODE)
                .map_or("?".into(), |n| n.to_string());
            format!("{} {mib} MiB from node {node}", crate::text::escape(heat))
        })
        .collect();
    format!("{}; {} s", parts.join(", "), text(r, tp::SECS))
}

/// The records by test, in order.
fn by_test<'a>(records: &[&'a Record]) -> Vec<(String, Vec<&'a Record>)> {
    let mut out: Vec<(String, Vec<&'a Record>)> = Vec::new();
    for r in records {
        let t = text(r, param::TEST);
        match out.iter_mut().find(|(n, _)| *n == t) {
            Some((_, v)) => v.push(r),
            None => out.push((t, vec![r])),
        }
    }
    out
}

/// A test record's series as charts; memory per tier with the 90% mark.
pub(crate) fn charts(r: &Record) -> Vec<Chart> {
    r.series
        .iter()
        .map(|s| {
            let markers = match r.value(tm::HOT_90_S) {
                Some(t) if s.name == ts::MEMORY_PER_TIER || s.name == ts::MIGRATIONS => {
                    vec![Marker {
                        x: t,
                        label: format!("{MARK_PCT:.0}% of hot set fast at {t:.1} s"),
                    }]
                }
                _ => Vec::new(),
            };
            Chart {
                title: format!("{}: {}", r.name, s.name.replace('_', " ")),
                x_label: format!("{} ({})", s.x_label, s.x_unit),
                y_label: format!("{} ({})", s.y_label, s.y_unit),
                lines: lines_of(s),
                markers,
                ..Default::default()
            }
        })
        .collect()
}

impl View for TierView {
    fn probe(&self) -> &'static str {
        probe::TIER
    }

    fn heading(&self) -> String {
        "Memory tiering".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "Tiered memory: a hot set starts on the slow (lower-tier) node and the kernel's NUMA balancing in tiering mode has to promote it, demoting cold memory where the fast node is full; where each region's memory was over time, when 90% of the hot set was on the fast tier, pages promoted and demoted per second, and each result's position between everything bound to the fast node (best) and to the slow node (worst).",
        )
    }

    fn sections(&self, _doc: &Document, records: &[&Record]) -> Vec<Section> {
        let Some(first) = records.first() else {
            return Vec::new();
        };
        let mut out = vec![kernel_section(first)];
        for (name, runs) in by_test(records) {
            out.push(test_section(&name, &runs));
        }
        out
    }

    fn blocks(&self, doc: &Document, records: &[&Record]) -> Vec<Block> {
        let mut out: Vec<Block> = self
            .sections(doc, records)
            .into_iter()
            .map(Block::Section)
            .collect();
        for r in records.iter().filter(|r| is_test(r)) {
            out.extend(charts(r).into_iter().map(Block::Chart));
        }
        out
    }
}

/// Shown in reports only: no part in `run`, no fleet figure.
impl crate::view::Probe for TierView {}
