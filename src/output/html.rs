//! One self-contained HTML report from one or more results documents:
//! inline CSS and SVG (no font, no network), every string from a results
//! file escaped. Its one script, [`SORTER`], lets a reader sort a table by a
//! column; the report reads in full without it.

use super::svg::{self, escape, escape_text};
use crate::results::{Document, Record};
use crate::view::chart::{Chart, Marker, lines_of};
use crate::view::{Block, Heatmap, Probe, Section, View, records_of};
use std::collections::BTreeMap;
use std::fmt::Write;

pub(crate) const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
h3{font-size:1.1em;margin-top:1.5em}table{border-collapse:collapse;margin:.5em 0}\
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}th{background:#f4f4f4}\
td.l,th.l{text-align:left}pre{background:#f8f8f8;padding:.8em;overflow-x:auto;font-size:.85em}\
.note{color:#555;font-size:.9em}.intro{margin:.3em 0 1em}\
@media print{body{margin:0;max-width:none}.part,table,svg{break-inside:avoid}th{cursor:auto}}\
.findings{background:#f6f8fa;border:1px solid #d0d7de;padding:.4em 1em;margin:1em 0}\
.findings li{margin:.25em 0}.findings li.flag{color:#9a3412;font-weight:bold}\
.toc ul{margin:.2em 0;padding-left:1.4em}.toc li{margin:.1em 0}svg{max-width:100%;height:auto;display:block;margin:.5em 0}";

/// Clicking a column heading sorts the table's rows by it (numbers by the
/// number they start with, sizes in KiB/MiB/GiB/TiB as bytes, text as
/// text), again to reverse. Fixed text:
/// nothing from a results file is ever in a script.
pub(crate) const SORTER: &str = "<script>document.querySelectorAll('table').forEach(function(t){\
var h=t.rows[0];if(!h||t.rows.length<3)return;\
Array.prototype.forEach.call(h.cells,function(th,i){th.style.cursor='pointer';th.title='sort by this column';\
th.addEventListener('click',function(){var rows=Array.prototype.slice.call(t.rows,1);\
var num=function(s){var m=/^\\s*(-?[0-9.]+(?:e[-+]?[0-9]+)?)\\s*([KMGT]iB)?/i.exec(s);if(!m)return null;\
return parseFloat(m[1])*(m[2]?Math.pow(1024,'KMGT'.indexOf(m[2][0].toUpperCase())+1):1);};var up=th.dataset.up!=='1';th.dataset.up=up?'1':'0';\
rows.sort(function(a,b){var x=a.cells[i]?a.cells[i].textContent:'',y=b.cells[i]?b.cells[i].textContent:'';\
var p=num(x),q=num(y);var c=(p!==null&&q!==null)?p-q:x.localeCompare(y);return up?c:-c;});\
rows.forEach(function(r){r.parentNode.appendChild(r);});});});});</script>";

/// A run to show, with the name its columns and headings get.
pub(crate) struct Run<'a> {
    pub label: String,
    pub doc: &'a Document,
}

fn table(s: &Section) -> String {
    let mut out = String::new();
    if !s.header.is_empty() {
        out.push_str("<table><tr>");
        for (i, h) in s.header.iter().enumerate() {
            let class = if i == 0 { " class=\"l\"" } else { "" };
            let _ = write!(out, "<th{class}>{}</th>", escape(h));
        }
        out.push_str("</tr>");
        for (ri, r) in s.rows.iter().enumerate() {
            out.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let class = if i == 0 { " class=\"l\"" } else { "" };
                if s.is_best(ri, i) {
                    let _ = write!(out, "<td{class}><strong>{}</strong></td>", escape(c));
                } else {
                    let _ = write!(out, "<td{class}>{}</td>", escape(c));
                }
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
    }
    for l in &s.lines {
        let _ = write!(out, "<p class=\"note\">{}</p>", escape(l));
    }
    out
}

/// The kind of a run's own heading: not a probe's name, so that the part of
/// run's own records (probe `run`) keeps an id of its own.
const RUN_ANCHOR: &str = "host";

/// An id usable in a URL fragment: `matrix-base`, `matrix-run-2`, ...
pub(crate) fn anchor(kind: &str, label: &str) -> String {
    format!("{kind}-{label}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A section; one without a title continues what came before.
fn section(s: &Section) -> String {
    if s.title.is_empty() {
        return table(s);
    }
    format!("<h3>{}</h3>{}", escape(&s.title), table(s))
}

/// Background from red (low) through yellow to green (100% and above).
fn heat(pct: f64) -> String {
    let p = (pct / 100.0).clamp(0.0, 1.0);
    let hue = 120.0 * p.powi(2);
    format!("hsl({hue:.0},70%,80%)")
}

/// `v` as a percentage of the row's reference `b` (inverted where lower is
/// better); `None` where it is not a finite positive figure, e.g. 1e308
/// against 1e-300, which then gets no colour.
fn share_pct(v: f64, b: f64, lower_better: bool) -> Option<f64> {
    let ratio = if lower_better { b / v } else { v / b };
    Some(100.0 * ratio).filter(|p| b > 0.0 && v > 0.0 && p.is_finite())
}

/// Records no dedicated part shows, as one table per probe, and their
/// time series as charts.
fn other_part(run: &Run<'_>, views: &[&dyn Probe]) -> String {
    let mut by_probe: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for r in &run.doc.records {
        if !views.iter().any(|v| v.probe() == r.probe) {
            by_probe.entry(&r.probe).or_default().push(r);
        }
    }
    let mut out = String::new();
    for (probe, records) in by_probe {
        let _ = write!(
            out,
            "<div class=\"part\" id=\"{}\"><h2>{}</h2>",
            anchor(probe, &run.label),
            escape(probe)
        );
        let s = crate::view::section::metrics_table("", &records);
        out.push_str(&table(&s));
        for r in &records {
            for series in &r.series {
                out.push_str(&svg::render(&Chart {
                    title: format!("{}: {}", r.name, series.name),
                    x_label: format!("{} ({})", series.x_label, series.x_unit),
                    y_label: format!("{} ({})", series.y_label, series.y_unit),
                    lines: lines_of(series),
                    markers: convergence_marker(r, series),
                    ..Default::default()
                }));
            }
            for n in &r.notes {
                let _ = write!(
                    out,
                    "<p class=\"note\">{}: {}</p>",
                    escape(&r.name),
                    escape(n)
                );
            }
        }
        out.push_str("</div>");
    }
    out
}

/// A record's moment of convergence (`convergence_s`) as a marker on its
/// series over time.
fn convergence_marker(r: &Record, series: &crate::results::Series) -> Vec<Marker> {
    match r.measured(crate::results::names::metric::CONVERGENCE_S) {
        Some(m) if series.x_unit == "s" && m.value.is_finite() => vec![Marker {
            x: m.value,
            label: format!("converged {:.1} s", m.value),
        }],
        _ => Vec::new(),
    }
}

/// `content` in a part of its own that a link or a test can address.
fn part(id: &str, content: String) -> String {
    if content.is_empty() {
        content
    } else {
        format!("<div class=\"part\" id=\"{id}\">{content}</div>")
    }
}

/// A view's block as HTML.
fn block(b: &Block) -> String {
    match b {
        Block::Section(s) => section(s),
        Block::Heatmap(h) => heatmap_block(h),
        Block::Chart(c) => svg::render(c),
        Block::Bars(b) => super::bars::render(b),
        Block::Note(n) => format!("<p class=\"note\">{}</p>", escape(n)),
        Block::Caption(n) => format!("<p class=\"note\">{}</p>", escape_text(n)),
    }
}

/// The best finite figure of each column, where there are two rows or more
/// to compare.
fn column_best(h: &Heatmap) -> Vec<Option<f64>> {
    let width = h.rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
    (0..width)
        .map(|j| {
            if h.rows.len() < 2 {
                return None;
            }
            h.rows
                .iter()
                .filter_map(|r| r.cells.get(j).copied().flatten())
                .filter(|v| v.is_finite())
                .reduce(|a, b| if h.lower_better { a.min(b) } else { a.max(b) })
        })
        .collect()
}

/// A heatmap block: each cell coloured by its share of its row's reference
/// (or by its place in the grid's range, `by_range`).
fn heatmap_block(h: &Heatmap) -> String {
    if h.rows.is_empty() {
        return String::new();
    }
    if h.compact {
        return compact_heatmap(h);
    }
    let range = grid_range(h);
    let digits = h.digits;
    let mut out = format!("<h3>{}</h3><table><tr>", escape(&h.title));
    for (i, c) in h.header.iter().enumerate() {
        let class = if i == 0 { " class=\"l\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(c));
    }
    out.push_str("</tr>");
    let best = column_best(h);
    for row in &h.rows {
        let _ = write!(out, "<tr><th class=\"l\">{}</th>", escape(&row.label));
        for (j, v) in row.cells.iter().enumerate() {
            // The best of a column in bold, as the thesis' tables have it.
            // Compared as shown, so that every cell reading as the best is.
            let (b, eb) = match (v, best.get(j).copied().flatten()) {
                (Some(v), Some(b)) if format!("{v:.digits$}") == format!("{b:.digits$}") => {
                    ("<strong>", "</strong>")
                }
                _ => ("", ""),
            };
            let pct = cell_pct(h, *v, row.reference, range);
            match (v, pct) {
                (Some(v), Some(pct)) => {
                    let _ = write!(
                        out,
                        "<td style=\"background:{}\" title=\"{pct:.0}%\">{b}{v:.digits$}{eb}</td>",
                        heat(pct)
                    );
                }
                (Some(v), _) => {
                    let _ = write!(out, "<td>{b}{v:.digits$}{eb}</td>");
                }
                _ => out.push_str("<td>-</td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// The finite positive extremes of a grid coloured `by_range`.
fn grid_range(h: &Heatmap) -> Option<(f64, f64)> {
    if !h.by_range {
        return None;
    }
    let vals = || {
        h.rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten().copied())
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    Some((vals().reduce(f64::min)?, vals().reduce(f64::max)?))
}

/// The percentage [`heat`] colours a cell by: its share of the row's
/// reference; or, `by_range`, where it sits between the grid's best and
/// worst cell on a log scale (100 best, 0 worst; square-rooted, so that the
/// hue runs evenly along the log scale).
fn cell_pct(
    h: &Heatmap,
    v: Option<f64>,
    reference: Option<f64>,
    range: Option<(f64, f64)>,
) -> Option<f64> {
    let v = v?;
    if !h.by_range {
        return share_pct(v, reference?, h.lower_better);
    }
    let (lo, hi) = range?;
    if !(v > 0.0 && v.is_finite()) {
        return None;
    }
    let span = (hi / lo).ln();
    let up = if span > 0.0 {
        (v / lo).ln() / span
    } else {
        0.0
    };
    let good = if h.lower_better { 1.0 - up } else { up };
    Some(100.0 * good.clamp(0.0, 1.0).sqrt())
}

/// A heatmap of small squares, each figure in its tooltip; a column
/// label every 8 columns.
fn compact_heatmap(h: &Heatmap) -> String {
    let range = grid_range(h);
    let mut out = format!(
        "<h3>{}</h3><table style=\"font-size:9px\"><tr>",
        escape(&h.title)
    );
    for (i, c) in h.header.iter().enumerate() {
        let label = if i == 0 || (i - 1) % 8 == 0 {
            c.as_str()
        } else {
            ""
        };
        let _ = write!(out, "<th style=\"padding:0 1px\">{}</th>", escape(label));
    }
    out.push_str("</tr>");
    for row in &h.rows {
        let _ = write!(
            out,
            "<tr><th style=\"padding:0 2px\">{}</th>",
            escape(&row.label)
        );
        for (j, v) in row.cells.iter().enumerate() {
            let col = h.header.get(j + 1).map_or("", String::as_str);
            match (v, cell_pct(h, *v, row.reference, range)) {
                (Some(v), pct) => {
                    let bg = pct.map_or(String::new(), |p| format!("background:{};", heat(p)));
                    let _ = write!(
                        out,
                        "<td style=\"{bg}padding:0;width:10px;height:10px\" title=\"{} / {}: {v:.d$}\"></td>",
                        escape(&row.label),
                        escape(col),
                        d = h.digits
                    );
                }
                (None, _) => out.push_str("<td style=\"padding:0\"></td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// One view's part of a run: its heading and blocks, empty where the run
/// has no record of its probe.
fn view_part(run: &Run<'_>, view: &dyn View) -> String {
    let records = records_of(run.doc, view.probe());
    if records.is_empty() {
        return String::new();
    }
    let mut out = format!("<h2>{}</h2>", escape(&view.heading()));
    if let Some(intro) = view.intro() {
        let _ = write!(out, "<p class=\"intro\">{}</p>", escape(intro));
    }
    for b in view.blocks(run.doc, &records) {
        out.push_str(&block(&b));
    }
    part(&anchor(view.probe(), &run.label), out)
}

/// What the run found, first of all (flags marked), where there is anything.
fn findings_part(run: &Run<'_>, views: &[&dyn Probe]) -> String {
    let found = crate::analysis::findings::findings(run.doc, views);
    if found.is_empty() {
        return String::new();
    }
    let mut out = String::from("<div class=\"findings\"><h3>findings</h3><ul>");
    for f in &found {
        let class = if f.flag { " class=\"flag\"" } else { "" };
        let _ = write!(out, "<li{class}>{}</li>", escape(&f.text));
    }
    out.push_str("</ul></div>");
    part(&anchor("findings", &run.label), out)
}

/// The table of contents: for each run, a link to each of its parts that
/// the page holds, in the page's order.
fn contents(runs: &[Run<'_>], views: &[&dyn Probe]) -> String {
    let mut out = String::from("<nav class=\"toc\"><h3>contents</h3><ul>");
    for r in runs {
        let link = |kind: &str, text: &str| {
            format!(
                "<li><a href=\"#{}\">{}</a></li>",
                anchor(kind, &r.label),
                escape(text)
            )
        };
        let _ = write!(
            out,
            "<li><a href=\"#{}\">{}: {}</a><ul>",
            anchor(RUN_ANCHOR, &r.label),
            escape(&r.label),
            escape(&r.doc.host.hostname)
        );
        if !crate::analysis::findings::findings(r.doc, views).is_empty() {
            out.push_str(&link("findings", "findings"));
        }
        out.push_str(&link("topology", "topology"));
        for v in views {
            if !records_of(r.doc, v.probe()).is_empty() {
                out.push_str(&link(v.probe(), &v.heading()));
            }
        }
        let mut others: Vec<&str> = r
            .doc
            .records
            .iter()
            .map(|rec| rec.probe.as_str())
            .filter(|p| !views.iter().any(|v| v.probe() == *p))
            .collect();
        others.sort_unstable();
        others.dedup();
        for p in others {
            out.push_str(&link(p, p));
        }
        out.push_str("</ul></li>");
    }
    out.push_str("</ul></nav>");
    out
}

/// One page of titled tables (a command whose output is not a results
/// document: topology, placement, comparison).
pub(crate) fn page(title: &str, sections: &[Section]) -> String {
    let mut out = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title><style>{STYLE}</style></head><body><h1>{0}</h1>",
        escape(title)
    );
    for s in sections {
        out.push_str(&section(s));
    }
    out.push_str("</body></html>\n");
    out
}

/// The report of `runs`, each probe's part drawn by its view in `views`
/// (the registry).
pub(crate) fn report(runs: &[Run<'_>], views: &[&dyn Probe]) -> String {
    let mut out = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>numabench report</title><style>{STYLE}</style></head><body><h1>numabench report</h1>"
    );
    out.push_str("<table><tr><th class=\"l\">run</th><th class=\"l\">host</th><th class=\"l\">kernel</th><th class=\"l\">started</th><th class=\"l\">command</th></tr>");
    for r in runs {
        let h = &r.doc.host;
        let _ = write!(
            out,
            "<tr><td class=\"l\"><a href=\"#{}\">{}</a></td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            anchor(RUN_ANCHOR, &r.label),
            escape(&r.label),
            escape(&h.hostname),
            escape(&h.kernel),
            escape(&r.doc.started),
            escape(&r.doc.command.join(" "))
        );
    }
    out.push_str("</table>");
    out.push_str(&contents(runs, views));
    for r in runs {
        let _ = write!(
            out,
            "<section id=\"{}\"><h2>{}: {} ({})</h2>",
            anchor(RUN_ANCHOR, &r.label),
            escape(&r.label),
            escape(&r.doc.host.hostname),
            escape(&r.doc.host.cpu_model)
        );
        out.push_str(&findings_part(r, views));
        let topology: String = super::topo_tables::sections(&r.doc.host.topology)
            .iter()
            .map(|s| {
                section(&Section {
                    title: format!("topology: {}", s.title),
                    ..s.clone()
                })
            })
            .collect();
        out.push_str(&part(&anchor("topology", &r.label), topology));
        for v in views {
            out.push_str(&view_part(r, *v));
        }
        out.push_str(&other_part(r, views));
        if !r.doc.complete {
            out.push_str("<p class=\"note\">this run did not finish: its results are partial</p>");
        }
        out.push_str("</section>");
    }
    out.push_str(SORTER);
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "html_compact_tests.rs"]
mod compact_tests;
