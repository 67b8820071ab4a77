//! The terminal and the report must never disagree: a run document with
//! planted noise goes through run's summary and the HTML report, and the
//! findings each shows are the same sentences in the same order.

use crate::output::html::{Run, report};
use crate::probes::REGISTRY;
use crate::results::names::sweep::param as sw;
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Document, Record};
use std::path::Path;

fn planted() -> Document {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cases/run.json");
    let mut d = Document::load(&path).unwrap().document;
    d.records.push(
        Record::new(probe::LATENCY, "chase stride:128 0->0")
            .param(param::PATTERN, "stride:128")
            .param(param::CPU_NODE, 0)
            .param(param::MEM_NODE, 0)
            .metric(metric::LATENCY_NS, 90.0, "ns", Better::Lower)
            .metric(metric::CV_PCT, 20.0, "%", Better::Lower),
    );
    for (op, mb) in [("read", 10_000.0), ("write", 30_000.0)] {
        d.records.push(
            Record::new(probe::SWEEP, &format!("{op} 4G"))
                .param(sw::OPERATION, op)
                .param(param::SIZE_BYTES, 4u64 << 30)
                .metric(metric::BANDWIDTH_MB_S, mb, "MB/s", Better::Higher)
                .metric(metric::CV_PCT, 1.0, "%", Better::Lower),
        );
    }
    d
}

/// The findings of the summary, each with its flag mark.
fn from_terminal(summary: &str) -> Vec<(bool, String)> {
    let (_, list) = summary.split_once("findings:\n").expect("no findings");
    list.lines()
        .map(|l| match l.strip_prefix("  ! warning: ") {
            Some(t) => (true, t.to_string()),
            None => (false, l.strip_prefix("  - ").expect(l).to_string()),
        })
        .collect()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The findings of the report's panel, each with its flag mark.
fn from_report(html: &str) -> Vec<(bool, String)> {
    let start = html.find("<div class=\"findings\">").expect("no panel");
    let panel = &html[start..start + html[start..].find("</div>").unwrap()];
    panel
        .split("<li")
        .skip(1)
        .map(|item| {
            let (attrs, rest) = item.split_once('>').unwrap();
            let text = rest.split("</li>").next().unwrap();
            (attrs.contains("flag"), unescape(text))
        })
        .collect()
}

#[test]
fn the_terminal_shows_every_finding_of_the_report_in_its_order() {
    let d = planted();
    let terminal = from_terminal(&super::summary::summary(&d, 25.0, REGISTRY));
    let html = report(
        &[Run {
            label: "run".into(),
            doc: &d,
        }],
        REGISTRY,
    );
    assert_eq!(terminal, from_report(&html));
    let flagged = |needle: &str| terminal.iter().any(|(f, t)| *f && t.contains(needle));
    assert!(
        flagged("latency by pattern: CV above 5%") && flagged("up to 20.0% (stride:128 0->0)"),
        "{terminal:?}"
    );
    assert!(
        flagged("sweep: write at 4 GiB at 30000 MB/s is 3.00x the read"),
        "{terminal:?}"
    );
}
