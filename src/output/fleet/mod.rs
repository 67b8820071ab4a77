//! The fleet report and the fleet comparison in every format: tables per
//! machine kind for people (text, Markdown, LaTeX), one row per machine and
//! figure for programs (CSV), the report itself (JSON), and one HTML page
//! with a distribution chart per figure and tables a reader can sort.

mod chart;
pub(crate) mod compare;
mod html;

use super::render::Format;
use super::sections;
use crate::analysis::fleet::Machine;
use crate::analysis::fleet::group::{FigureReport, FleetReport, KindReport};
use crate::results::Better;
use crate::view::Section;
use anyhow::Result;

/// A figure as tables show it: counts without decimals, small values with
/// one.
pub(crate) fn num(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn with_unit(v: f64, unit: &str) -> String {
    if unit.is_empty() {
        num(v)
    } else {
        format!("{} {unit}", num(v))
    }
}

/// The first line: machines, kinds, what was flagged, by which rule.
pub(crate) fn headline(r: &FleetReport) -> String {
    let flagged = r.flagged();
    format!(
        "{} machine(s) in {} kind(s); {} flagged (outlier: modified z-score beyond {} and more than {}% from the kind's median; rare kind: under {}% of its CPU model's machines; drift: a setting unlike most of its kind's)",
        r.machines.len(),
        r.kinds.len(),
        flagged.len(),
        r.rule.cut.z,
        r.rule.cut.floor_pct,
        r.rule.rare_pct
    )
}

fn outlier_cell(f: &FigureReport) -> String {
    let shown: Vec<String> = f
        .outliers
        .iter()
        .take(5)
        .map(|o| format!("{} {} ({:+.1}%)", o.machine, num(o.value), o.deviation_pct))
        .collect();
    let more = f.outliers.len().saturating_sub(5);
    match (shown.is_empty(), more) {
        (true, _) => "-".into(),
        (false, 0) => shown.join(", "),
        (false, m) => format!("{} and {m} more", shown.join(", ")),
    }
}

/// A kind's figures: median, spread, range, outliers.
fn kind_section(r: &FleetReport, k: &KindReport) -> Section {
    let mut s = Section::new(format!("{} ({} machine(s))", k.label, k.machines.len()));
    s.header = [
        "figure",
        "machines",
        "median",
        "spread (robust CV)",
        "min",
        "max",
        "outliers",
    ]
    .map(String::from)
    .to_vec();
    for f in &k.figures {
        let Some(sp) = &f.spread else { continue };
        s.rows.push(vec![
            f.title.to_string(),
            sp.n.to_string(),
            with_unit(sp.median, f.unit),
            format!("{:.1}%", sp.robust_cv_pct),
            num(sp.min),
            num(sp.max),
            outlier_cell(f),
        ]);
    }
    if let Some((main, n)) = &k.rare_beside {
        let names: Vec<&str> = k
            .machines
            .iter()
            .map(|&i| r.machines[i].name.as_str())
            .collect();
        s.lines.push(format!(
            "RARE KIND: {} of this CPU model are {main}; these differ in node count or memory: {}",
            n,
            names.join(", ")
        ));
    }
    for d in &k.drift {
        let others: Vec<String> = d
            .differing
            .iter()
            .take(10)
            .map(|(m, v)| format!("{m} {v}"))
            .collect();
        s.lines.push(format!(
            "DRIFT {}: {} machine(s) {}; {}{}",
            d.setting,
            d.usual_count,
            d.usual,
            others.join(", "),
            if d.differing.len() > 10 {
                format!(" and {} more", d.differing.len() - 10)
            } else {
                String::new()
            }
        ));
    }
    s
}

/// Every outlier of every kind, one row each.
fn outliers_section(r: &FleetReport) -> Section {
    let mut s = Section::new("outliers");
    s.header = [
        "machine",
        "kind",
        "figure",
        "value",
        "kind median",
        "off by",
        "cell",
    ]
    .map(String::from)
    .to_vec();
    for k in &r.kinds {
        for f in &k.figures {
            for o in &f.outliers {
                s.rows.push(vec![
                    o.machine.clone(),
                    k.label.clone(),
                    f.title.to_string(),
                    with_unit(o.value, f.unit),
                    f.spread.map_or("-".into(), |sp| num(sp.median)),
                    format!(
                        "{:+.1}% ({})",
                        o.deviation_pct,
                        if o.worse { "worse" } else { "better" }
                    ),
                    o.cell.clone().unwrap_or_else(|| "-".into()),
                ]);
            }
        }
    }
    if s.rows.is_empty() {
        s.header.clear();
        s.lines.push("none".into());
    }
    s
}

/// The report as titled tables, `notes` (files skipped, ...) last.
pub(crate) fn report_sections(r: &FleetReport, notes: &[String]) -> Vec<Section> {
    let mut out = vec![outliers_section(r)];
    out.extend(r.kinds.iter().map(|k| kind_section(r, k)));
    if !notes.is_empty() {
        let mut s = Section::new("notes");
        s.lines = notes.to_vec();
        out.push(s);
    }
    out
}

/// One row per machine and figure: a table any tool can sort and filter.
fn report_csv(r: &FleetReport) -> crate::view::Csv {
    let mut rows = Vec::new();
    for k in &r.kinds {
        for &i in &k.machines {
            let m: &Machine = &r.machines[i];
            for (fi, f) in k.figures.iter().enumerate() {
                let Some(fig) = m.figure(fi) else { continue };
                let o = f.outliers.iter().find(|o| o.machine == m.name);
                rows.push(vec![
                    m.name.clone(),
                    k.label.clone(),
                    f.id.to_string(),
                    fig.value.to_string(),
                    f.unit.to_string(),
                    f.spread.map_or(String::new(), |s| s.median.to_string()),
                    f.spread.map_or(String::new(), |s| {
                        format!("{:.2}", s.deviation_pct(fig.value))
                    }),
                    o.is_some().to_string(),
                    fig.cell.clone().unwrap_or_default(),
                    m.source.clone(),
                ]);
            }
        }
    }
    crate::view::Csv {
        header: [
            "machine",
            "kind",
            "figure",
            "value",
            "unit",
            "kind_median",
            "deviation_pct",
            "outlier",
            "cell",
            "source",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: Vec::new(),
    }
}

/// What `--json` prints.
#[derive(serde::Serialize)]
struct JsonReport<'a> {
    fleet_report: u32,
    summary: String,
    flagged: Vec<&'a str>,
    figures: Vec<FigureMeta>,
    report: &'a FleetReport,
    notes: &'a [String],
}

#[derive(serde::Serialize)]
struct FigureMeta {
    id: &'static str,
    title: &'static str,
    unit: &'static str,
    better: Better,
}

/// The report in `format`.
pub(crate) fn report(r: &FleetReport, notes: &[String], format: Format) -> Result<String> {
    let title = format!("numabench fleet report: {}", headline(r));
    Ok(match format {
        Format::Text => sections::text_titled(Some(&title), &report_sections(r, notes)),
        Format::Markdown => sections::markdown(&title, &report_sections(r, notes)),
        Format::Latex => sections::latex(&title, &report_sections(r, notes)),
        Format::Csv => super::render::csv_text(&report_csv(r))?,
        Format::Json => {
            // Serialized straight from the report: a JSON tree of 10,000
            // machines first would take several times the memory.
            let out = JsonReport {
                fleet_report: 1,
                summary: headline(r),
                flagged: r.flagged(),
                figures: r
                    .specs
                    .iter()
                    .map(|s| FigureMeta {
                        id: s.id,
                        title: s.title,
                        unit: s.unit,
                        better: s.better,
                    })
                    .collect(),
                report: r,
                notes,
            };
            let mut t = crate::text::json_pretty(&out)?;
            t.push('\n');
            t
        }
        Format::Html => html::page(r, notes),
    })
}
