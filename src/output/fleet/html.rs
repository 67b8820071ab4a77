//! The fleet report as one self-contained page: the outliers first, then
//! per kind its figures' table, a distribution chart per figure naming its
//! outliers, the rare-kind and drift findings, and every machine in a
//! table sortable by any column (the report's one script, the sorter every
//! numabench report has; nothing from a document is ever in it).

use super::{chart, num, report_sections};
use crate::analysis::fleet::group::{FleetReport, KindReport};
use crate::output::html::{SORTER, STYLE};
use crate::output::svg::escape;
use std::fmt::Write;

const EXTRA_STYLE: &str =
    "td.out{background:#fde2e1;font-weight:bold}p.flag{color:#9a3412;font-weight:bold}";

fn table(header: &[String], rows: &[Vec<String>], marked: &dyn Fn(usize, usize) -> bool) -> String {
    let mut out = String::from("<table><tr>");
    for (i, h) in header.iter().enumerate() {
        let class = if i == 0 { " class=\"l\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr>");
    for (ri, r) in rows.iter().enumerate() {
        out.push_str("<tr>");
        for (ci, c) in r.iter().enumerate() {
            let class = match (ci == 0, marked(ri, ci)) {
                (true, _) => " class=\"l\"",
                (false, true) => " class=\"out\"",
                (false, false) => "",
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// Every machine of a kind with its figures, outlying cells marked.
fn machines_table(r: &FleetReport, k: &KindReport) -> String {
    let shown: Vec<usize> = (0..k.figures.len())
        .filter(|&fi| k.figures[fi].spread.is_some())
        .collect();
    let mut header = vec!["machine".to_string()];
    header.extend(shown.iter().map(|&fi| {
        let f = &k.figures[fi];
        if f.unit.is_empty() {
            f.title.to_string()
        } else {
            format!("{} ({})", f.title, f.unit)
        }
    }));
    header.push("hostname".into());
    header.push("kernel".into());
    let mut rows = Vec::new();
    let mut out_cells = Vec::new();
    for (ri, &i) in k.machines.iter().enumerate() {
        let m = &r.machines[i];
        let mut row = vec![m.name.clone()];
        for (ci, &fi) in shown.iter().enumerate() {
            row.push(m.figure(fi).map_or("-".into(), |f| num(f.value)));
            if k.figures[fi].outliers.iter().any(|o| o.machine == m.name) {
                out_cells.push((ri, ci + 1));
            }
        }
        row.push(m.hostname.clone());
        row.push(
            m.setting(crate::results::names::fleet::config::KERNEL)
                .unwrap_or("-")
                .to_string(),
        );
        rows.push(row);
    }
    table(&header, &rows, &|r, c| out_cells.contains(&(r, c)))
}

fn kind_part(r: &FleetReport, k: &KindReport, summary: &crate::view::Section) -> String {
    let mut out = format!(
        "<section><h2>{} ({} machine(s))</h2>",
        escape(&k.label),
        k.machines.len()
    );
    let flagged: Vec<usize> = summary
        .rows
        .iter()
        .enumerate()
        .filter(|(_, row)| row.last().is_some_and(|c| c != "-"))
        .map(|(i, _)| i)
        .collect();
    out.push_str(&table(&summary.header, &summary.rows, &|ri, ci| {
        ci + 1 == summary.header.len() && flagged.contains(&ri)
    }));
    for l in &summary.lines {
        let _ = write!(out, "<p class=\"flag\">{}</p>", escape(l));
    }
    out.push_str("<h3>distributions</h3>");
    for (fi, f) in k.figures.iter().enumerate() {
        let values: Vec<f64> = k
            .machines
            .iter()
            .filter_map(|&i| r.machines[i].figure(fi).map(|x| x.value))
            .collect();
        if let Some(svg) = chart::histogram(f, &values, &r.rule.cut) {
            out.push_str(&svg);
        }
    }
    out.push_str("<h3>machines</h3><p class=\"note\">Click a heading to sort; outlying figures are marked.</p>");
    out.push_str(&machines_table(r, k));
    out.push_str("</section>");
    out
}

pub(super) fn page(r: &FleetReport, notes: &[String]) -> String {
    let mut out = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>numabench fleet report</title><style>{STYLE}{EXTRA_STYLE}</style></head><body><h1>numabench fleet report</h1><p class=\"intro\">{}</p>",
        escape(&super::headline(r))
    );
    let sections = report_sections(r, notes);
    let outliers = &sections[0];
    out.push_str("<h2>outliers</h2>");
    if outliers.header.is_empty() {
        out.push_str("<p>none</p>");
    } else {
        out.push_str(&table(&outliers.header, &outliers.rows, &|_, _| false));
    }
    for (k, s) in r.kinds.iter().zip(&sections[1..]) {
        out.push_str(&kind_part(r, k, s));
    }
    if !notes.is_empty() {
        out.push_str("<h2>notes</h2>");
        for n in notes {
            let _ = write!(out, "<p class=\"note\">{}</p>", escape(n));
        }
    }
    out.push_str(SORTER);
    out.push_str("</body></html>\n");
    out
}
