//! A fleet comparison: fleet-wide per figure, then the machines whose
//! change is beyond their own noise (every machine and figure in CSV and
//! JSON). Changes are signed so that + is better and marked `~` within
//! noise, as `numabench compare` marks them.

use crate::analysis::fleet::compare::{FleetComparison, MachineChange};
use crate::output::compare::change_text;
use crate::output::render::Format;
use crate::output::sections;
use crate::view::Section;
use anyhow::Result;

fn mark(within: Option<bool>) -> &'static str {
    if within == Some(true) { "~" } else { "" }
}

/// Up to 20 names, then how many more.
fn some(names: &[String]) -> String {
    let mut out = names
        .iter()
        .take(20)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 20 {
        out.push_str(&format!(" and {} more", names.len() - 20));
    }
    out
}

fn fleet_section(c: &FleetComparison) -> Section {
    let mut s = Section::new("fleet-wide: each figure's median over the machines in both");
    s.header = [
        "figure",
        "machines",
        "median before",
        "median after",
        "median change",
        "better",
        "worse",
    ]
    .map(String::from)
    .to_vec();
    for f in &c.fleet {
        let unit = if f.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", f.unit)
        };
        s.rows.push(vec![
            f.title.to_string(),
            f.machines.to_string(),
            format!("{}{unit}", super::num(f.median_before)),
            format!("{}{unit}", super::num(f.median_after)),
            format!(
                "{}{}",
                change_text(Some(f.median_change_pct)),
                mark(f.within_noise)
            ),
            f.better_count.to_string(),
            f.worse_count.to_string(),
        ]);
    }
    s.lines.push(
        "changes are signed so that + is better; ~ marks a change within noise (fleet-wide: a sign test cannot tell the machines that got better from those that got worse; per machine: 2 standard deviations of its runs' samples); better/worse count machines changed beyond their own noise".into(),
    );
    if s.rows.is_empty() {
        s.header.clear();
        s.lines.insert(
            0,
            "no machine is in both fleets (machines are paired by name)".into(),
        );
    }
    for (what, names) in [
        ("only before", &c.only_before),
        ("only after", &c.only_after),
    ] {
        if !names.is_empty() {
            s.lines.push(format!("{what}: {}", some(names)));
        }
    }
    s
}

fn row(m: &MachineChange) -> Vec<String> {
    vec![
        m.machine.clone(),
        m.figure.to_string(),
        super::num(m.before),
        super::num(m.after),
        format!("{}{}", change_text(m.change_pct), mark(m.within_noise)),
    ]
}

/// The machines whose change is beyond noise (or unjudged), worst first.
fn machines_section(c: &FleetComparison) -> Section {
    let mut s = Section::new("machines changed beyond their noise, worst first");
    s.header = ["machine", "figure", "before", "after", "change"]
        .map(String::from)
        .to_vec();
    let mut moved: Vec<&MachineChange> = c
        .machines
        .iter()
        .filter(|m| m.within_noise != Some(true) && m.change_pct != Some(0.0))
        .collect();
    moved.sort_by(|a, b| {
        a.change_pct
            .unwrap_or(0.0)
            .total_cmp(&b.change_pct.unwrap_or(0.0))
    });
    let total = moved.len();
    s.rows = moved.into_iter().take(200).map(row).collect();
    if total > 200 {
        s.lines.push(format!(
            "and {} more (--csv or --json lists all)",
            total - 200
        ));
    }
    if s.rows.is_empty() {
        s.header.clear();
        s.lines.push("none".into());
    }
    s
}

pub(crate) fn render(c: &FleetComparison, format: Format) -> Result<String> {
    let title = "numabench fleet compare: before -> after";
    let secs = [fleet_section(c), machines_section(c)];
    Ok(match format {
        Format::Text => sections::text_titled(Some(title), &secs),
        Format::Markdown => sections::markdown(title, &secs),
        Format::Latex => sections::latex(title, &secs),
        Format::Html => crate::output::html::page(title, &secs),
        Format::Csv => {
            let rows = c
                .machines
                .iter()
                .map(|m| {
                    vec![
                        m.machine.clone(),
                        m.figure.to_string(),
                        m.before.to_string(),
                        m.after.to_string(),
                        m.change_pct.map_or(String::new(), |x| format!("{x:.3}")),
                        m.within_noise.map_or(String::new(), |x| x.to_string()),
                    ]
                })
                .collect();
            crate::output::render::csv_text(&crate::view::Csv {
                header: [
                    "machine",
                    "figure",
                    "before",
                    "after",
                    "change_pct",
                    "within_noise",
                ]
                .map(String::from)
                .to_vec(),
                rows,
                notes: Vec::new(),
            })?
        }
        Format::Json => {
            let mut t = crate::text::json_pretty(&serde_json::json!({
                "fleet_compare": 1,
                "comparison": c,
            }))?;
            t.push('\n');
            t
        }
    })
}
