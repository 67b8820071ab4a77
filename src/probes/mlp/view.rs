//! How MLP records are shown: a table per node pair (chases, ns per
//! access, per-chase latency, concurrency, line bandwidth, CV), and in
//! HTML two charts over the chase count: ns per access, and concurrency
//! beside the ideal (concurrency = chases).

use crate::results::names::mlp as ml;
use crate::results::names::{metric, param, probe};
use crate::results::{Document, Record};
use crate::view::{Block, Chart, Csv, Line, Section, View};

/// The mlp probe's view (registered in `probes::REGISTRY`).
pub(crate) struct MlpView;

/// Node pairs in the order first met, with their records.
fn pairs<'a>(records: &[&'a Record]) -> Vec<((u64, u64), Vec<&'a Record>)> {
    let mut out: Vec<((u64, u64), Vec<&Record>)> = Vec::new();
    for r in records {
        let key = (
            r.u64_param(param::CPU_NODE).unwrap_or(0),
            r.u64_param(param::MEM_NODE).unwrap_or(0),
        );
        match out.iter_mut().find(|p| p.0 == key) {
            Some(p) => p.1.push(r),
            None => out.push((key, vec![r])),
        }
    }
    out
}

fn about(r: &Record) -> String {
    let window = r.u64_param(param::WINDOW_BYTES).map_or(String::new(), |w| {
        format!(" ({} windows)", crate::units::bytes(w))
    });
    format!(
        "{}{window}, {} buffer, {} pages",
        r.str_param(param::PATTERN).unwrap_or("?"),
        r.u64_param(param::SIZE_BYTES)
            .map_or("?".into(), crate::units::bytes),
        r.str_param(param::PAGE_SIZE).unwrap_or("?")
    )
}

fn chart(records: &[&Record], title: &str, key: &str, y: &str, ideal: bool) -> Chart {
    let mut lines: Vec<Line> = pairs(records)
        .into_iter()
        .map(|((c, m), rs)| Line {
            label: format!("cpu {c} -> mem {m}"),
            points: rs
                .iter()
                .filter_map(|r| {
                    Some((
                        r.u64_param(ml::param::CHASES)? as f64,
                        r.value(key).unwrap_or(f64::NAN),
                    ))
                })
                .collect(),
        })
        .collect();
    if ideal {
        let mut xs: Vec<f64> = records
            .iter()
            .filter_map(|r| r.u64_param(ml::param::CHASES))
            .map(|n| n as f64)
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        lines.push(Line {
            label: "ideal (= chases)".into(),
            points: xs.iter().map(|&x| (x, x)).collect(),
        });
    }
    Chart {
        title: title.into(),
        x_label: "independent chases per thread".into(),
        y_label: y.into(),
        x_log2: true,
        lines,
        ..Default::default()
    }
}

fn notes(records: &[&Record]) -> Section {
    let mut s = Section::new("how to read");
    s.lines.push("ns/access: wall time / all loads of all chases (multichase -c parallelN prints this); chase latency: chases x ns/access, each chase's wait from one load to its next; concurrency: ns/access with 1 chase / ns/access with N = bandwidth x idle latency / 64 B line, the idle-latency misses the core and memory overlap".into());
    s.lines
        .push(match crate::view::lowest_verified_pct(records) {
            Some(p) if p >= 99.95 => {
                "placement: every buffer's pages checked on its memory node (100% verified)".into()
            }
            Some(p) => format!("placement: lowest verified {p:.1}% of pages on the intended node"),
            None => "placement was not verified".into(),
        });
    s.lines
        .extend(crate::probes::node_chase::builds_line(records));
    s.lines
        .extend(records.iter().flat_map(|r| r.notes.iter().cloned()));
    s
}

impl View for MlpView {
    fn probe(&self) -> &'static str {
        probe::MLP
    }

    fn heading(&self) -> String {
        "Memory-level parallelism".into()
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "One thread follows N independent pointer chases at once. While the memory system overlaps the misses, the time per access falls as N grows and the concurrency (misses overlapped, in idle latencies) climbs with the ideal line; where it flattens is the most outstanding misses one core gets from that memory.",
        )
    }

    fn sections(&self, _doc: &Document, records: &[&Record]) -> Vec<Section> {
        let mut out = Vec::new();
        for ((c, m), rs) in pairs(records) {
            let mut s = Section::new(format!("cpu node {c} -> mem node {m}: {}", about(rs[0])));
            s.header = [
                "chases",
                "ns/access",
                "chase latency ns",
                "in flight",
                "MB/s (lines)",
                "CV %",
            ]
            .map(String::from)
            .to_vec();
            for r in rs {
                s.rows.push(vec![
                    r.u64_param(ml::param::CHASES)
                        .map_or("?".into(), |n| n.to_string()),
                    format!(
                        "{:.2}",
                        r.value(ml::metric::NS_PER_ACCESS).unwrap_or(f64::NAN)
                    ),
                    format!(
                        "{:.1}",
                        r.value(ml::metric::CHASE_LATENCY_NS).unwrap_or(f64::NAN)
                    ),
                    match r.value(ml::metric::CONCURRENCY).unwrap_or(f64::NAN) {
                        c if c.is_nan() => "-".into(),
                        c => format!("{c:.2}"),
                    },
                    format!("{:.0}", r.value(ml::metric::LINE_MB_S).unwrap_or(f64::NAN)),
                    format!("{:.1}", r.value(metric::CV_PCT).unwrap_or(f64::NAN)),
                ]);
            }
            out.push(s);
        }
        out.push(notes(records));
        out
    }

    fn blocks(&self, doc: &Document, records: &[&Record]) -> Vec<Block> {
        let mut out: Vec<Block> = vec![
            Block::Chart(chart(
                records,
                "ns per access over chases",
                ml::metric::NS_PER_ACCESS,
                "ns per access",
                false,
            )),
            Block::Chart(chart(
                records,
                "achieved concurrency over chases",
                ml::metric::CONCURRENCY,
                "misses in flight (idle latencies)",
                true,
            )),
        ];
        out.extend(self.sections(doc, records).into_iter().map(Block::Section));
        out
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        let header = [
            param::CPU_NODE,
            param::MEM_NODE,
            param::PATTERN,
            param::PAGE_SIZE,
            ml::param::CHASES,
            ml::metric::NS_PER_ACCESS,
            ml::metric::CHASE_LATENCY_NS,
            ml::metric::CONCURRENCY,
            ml::metric::LINE_MB_S,
            metric::CV_PCT,
        ];
        let rows = records
            .iter()
            .map(|r| {
                let n = |k| r.u64_param(k).map_or(String::new(), |v| v.to_string());
                let v = |k| format!("{:.3}", r.value(k).unwrap_or(f64::NAN));
                vec![
                    n(param::CPU_NODE),
                    n(param::MEM_NODE),
                    r.str_param(param::PATTERN).unwrap_or("?").to_string(),
                    r.str_param(param::PAGE_SIZE).unwrap_or("?").to_string(),
                    n(ml::param::CHASES),
                    v(ml::metric::NS_PER_ACCESS),
                    v(ml::metric::CHASE_LATENCY_NS),
                    v(ml::metric::CONCURRENCY),
                    v(ml::metric::LINE_MB_S),
                    v(metric::CV_PCT),
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
