//! A comparison as text in the layout of the kernel-comparison tables
//! (`test : base | other: +x.x% | ... | unit`), as Markdown, CSV or JSON.

use super::render::Format;
use crate::analysis::compare::{Cell, Comparison, Row};
use crate::results::Better;
use crate::view::Section;
use serde_json::json;

/// The text layout's closing line.
const LEGEND_TEXT: &str = "changes are signed so that + is better; ~ marks a change within the runs' own noise (2 standard deviations of the kept samples); new: the base was 0, or too near 0 for a %\n";

/// Significant digits that keep small and large figures readable.
pub(crate) fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The comparison and labels with every string from the inputs (record
/// names, metrics, units, labels) passed through `clean`, so each format
/// shows them safely.
fn cleaned(
    c: &Comparison,
    labels: &[String],
    clean: fn(&str) -> String,
) -> (Comparison, Vec<String>) {
    let mut c = c.clone();
    for r in &mut c.rows {
        for s in [&mut r.probe, &mut r.test, &mut r.metric, &mut r.unit] {
            *s = clean(s);
        }
    }
    (c, labels.iter().map(|l| clean(l)).collect())
}

/// Control characters made visible (text and CSV).
fn visible(s: &str) -> String {
    super::escape(s).into_owned()
}

fn md_cell(s: &str) -> String {
    super::markdown_cell(s)
}

/// A change for people: signed %, never "-0.0%" (a change that rounds to
/// nothing is "+0.0%"); "new" where the base was 0 and no % exists.
pub(crate) fn change_text(change: Option<f64>) -> String {
    match change {
        Some(c) if (c * 10.0).round() == 0.0 => "+0.0%".into(),
        Some(c) => format!("{c:+.1}%"),
        None => "new".into(),
    }
}

/// " (noise)" after a change within the runs' noise.
fn noise_note(c: &Cell) -> &'static str {
    if c.within_noise == Some(true) {
        " (noise)"
    } else {
        ""
    }
}

fn label(r: &Row) -> String {
    format!("{} {}", r.test, r.metric)
}

fn cell_text(c: &Option<Cell>) -> String {
    match c {
        Some(c) => format!(
            "{}: {}{}",
            num(c.value),
            change_text(c.change_pct),
            if c.within_noise == Some(true) {
                "~"
            } else {
                " "
            }
        ),
        None => "-".into(),
    }
}

pub(crate) fn text(c: &Comparison, labels: &[String]) -> String {
    let (c, labels) = cleaned(c, labels, visible);
    let (c, labels) = (&c, &labels[..]);
    let mut out = String::new();
    for (better, head) in [
        (Better::Higher, "[ Higher numbers are better. ]"),
        (Better::Lower, "[ Lower numbers are better. ]"),
    ] {
        let rows: Vec<&Row> = c.rows.iter().filter(|r| r.better == better).collect();
        if rows.is_empty() {
            continue;
        }
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|r| r.others.iter().map(cell_text).collect())
            .collect();
        let w_label = rows
            .iter()
            .map(|r| label(r).len())
            .max()
            .unwrap_or(0)
            .max(11);
        let w_base = rows
            .iter()
            .map(|r| num(r.base).len())
            .chain(std::iter::once(labels[0].len()))
            .max()
            .unwrap_or(0);
        let w_other: Vec<usize> = (0..labels.len() - 1)
            .map(|i| {
                cells
                    .iter()
                    .map(|c| c[i].len())
                    .chain(std::iter::once(labels[i + 1].len()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        out.push_str(&format!("{:>w$}\n\n", head, w = w_label + 20));
        let mut header = format!(" {:<w_label$} : {:>w_base$} |", "[test unit]", labels[0]);
        for (i, w) in w_other.iter().enumerate() {
            header.push_str(&format!(" {:>w$} |", labels[i + 1]));
        }
        out.push_str(&header);
        out.push('\n');
        out.push_str(&"-".repeat(header.len() + 6));
        out.push('\n');
        for (r, cs) in rows.iter().zip(&cells) {
            let mut line = format!(" {:<w_label$} : {:>w_base$} |", label(r), num(r.base));
            for (cell, w) in cs.iter().zip(&w_other) {
                line.push_str(&format!(" {cell:>w$} |"));
            }
            line.push_str(&format!("  {}\n", r.unit));
            out.push_str(&line);
        }
        out.push('\n');
    }
    out.push_str(LEGEND_TEXT);
    for line in unmatched_lines(c, labels) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A line per other run with records the base run does not have.
pub(crate) fn unmatched_lines(c: &Comparison, labels: &[String]) -> Vec<String> {
    c.unmatched
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(i, n)| {
            format!(
                "{}: {n} record(s) not in the base run, not shown",
                labels[i + 1]
            )
        })
        .collect()
}

pub(crate) fn markdown(c: &Comparison, labels: &[String]) -> String {
    let (c, labels) = cleaned(c, labels, md_cell);
    let (c, labels) = (&c, &labels[..]);
    let mut out = format!("| test | metric | {} |", labels[0]);
    for l in &labels[1..] {
        out.push_str(&format!(" {l} | change |"));
    }
    out.push_str(" unit | better |\n|:--|:--|--:|");
    out.push_str(&"--:|--:|".repeat(labels.len() - 1));
    out.push_str(":--|:--|\n");
    for r in &c.rows {
        out.push_str(&format!("| {} | {} | {} |", r.test, r.metric, num(r.base)));
        for cell in &r.others {
            match cell {
                Some(c) => out.push_str(&format!(
                    " {} | {}{} |",
                    num(c.value),
                    change_text(c.change_pct),
                    noise_note(c)
                )),
                None => out.push_str(" - | - |"),
            }
        }
        out.push_str(&format!(" {} | {} |\n", r.unit, better(r.better)));
    }
    out
}

/// The comparison in `format`: its own layouts for text, CSV, JSON and
/// Markdown, its table for LaTeX and HTML.
pub(crate) fn render(c: &Comparison, labels: &[String], format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Text => text(c, labels),
        Format::Csv => csv(c, labels),
        Format::Json => json(c, labels),
        Format::Markdown => markdown(c, labels),
        f => {
            let title = format!("numabench compare: {}", labels.join(" vs "));
            super::tables::render(&title, &[section(c, labels)], f)?
        }
    })
}

/// The comparison as one table, with the columns of the Markdown one.
pub(crate) fn section(c: &Comparison, labels: &[String]) -> Section {
    let mut s = Section::new("comparison");
    s.header = vec!["test".into(), "metric".into(), labels[0].clone()];
    for l in &labels[1..] {
        s.header.push(l.clone());
        s.header.push("change".into());
    }
    s.header.extend(["unit".into(), "better".into()]);
    for r in &c.rows {
        let mut row = vec![r.test.clone(), r.metric.clone(), num(r.base)];
        for cell in &r.others {
            match cell {
                Some(c) => row.extend([
                    num(c.value),
                    format!("{}{}", change_text(c.change_pct), noise_note(c)),
                ]),
                None => row.extend(["-".into(), "-".into()]),
            }
        }
        row.extend([r.unit.clone(), better(r.better).into()]);
        s.rows.push(row);
    }
    s.lines.push("changes are signed so that + is better; (noise) marks a change within the runs' own noise (2 standard deviations of the kept samples); new: the base was 0, or too near 0 for a %".into());
    s.lines.extend(unmatched_lines(c, labels));
    s
}

fn better(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher",
        Better::Lower => "lower",
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub(crate) fn csv(c: &Comparison, labels: &[String]) -> String {
    let (c, _) = cleaned(c, labels, visible);
    let c = &c;
    let mut out = String::from("probe,test,metric,unit,better,base");
    for i in 1..labels.len() {
        out.push_str(&format!(",value_{i},change_pct_{i},within_noise_{i}"));
    }
    out.push('\n');
    for r in &c.rows {
        out.push_str(&format!(
            "{},{},{},{},{},{}",
            csv_field(&r.probe),
            csv_field(&r.test),
            csv_field(&r.metric),
            csv_field(&r.unit),
            better(r.better),
            r.base
        ));
        for cell in &r.others {
            match cell {
                Some(c) => out.push_str(&format!(
                    ",{},{},{}",
                    c.value,
                    c.change_pct
                        .map_or(String::new(), |p| format!("{:.3}", p + 0.0)),
                    c.within_noise.map_or(String::new(), |b| b.to_string())
                )),
                None => out.push_str(",,,"),
            }
        }
        out.push('\n');
    }
    out
}

pub(crate) fn json(c: &Comparison, labels: &[String]) -> String {
    let rows: Vec<_> = c
        .rows
        .iter()
        .map(|r| {
            json!({
                "probe": r.probe, "test": r.test, "metric": r.metric, "unit": r.unit,
                "better": better(r.better), "base": r.base,
                "others": r.others.iter().map(|o| o.as_ref().map(|c| json!({
                    "value": c.value, "change_pct": c.change_pct, "within_noise": c.within_noise
                }))).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = json!({ "labels": labels, "rows": rows, "unmatched": c.unmatched });
    crate::text::json_pretty(&doc).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Comparison, Vec<String>) {
        let row = |test: &str, better, base, value, change, noise| Row {
            probe: "mem".into(),
            test: test.into(),
            metric: "m".into(),
            unit: "GB/sec".into(),
            better,
            base,
            others: vec![Some(Cell {
                value,
                change_pct: Some(change),
                within_noise: noise,
            })],
        };
        (
            Comparison {
                rows: vec![
                    row(
                        "2x1-bw-process",
                        Better::Higher,
                        6.248,
                        8.073,
                        29.2,
                        Some(false),
                    ),
                    row(
                        "1x3-convergence",
                        Better::Lower,
                        100.1,
                        0.2,
                        99.8,
                        Some(true),
                    ),
                ],
                unmatched: vec![2],
            },
            vec!["v3.7".into(), "AutoNUMA,v28".into()],
        )
    }

    #[test]
    fn text_has_the_comparison_table_layout() {
        let (c, l) = sample();
        let t = text(&c, &l);
        assert!(t.contains("[ Higher numbers are better. ]"));
        assert!(t.contains("[ Lower numbers are better. ]"));
        let line = t.lines().find(|l| l.contains("2x1-bw-process")).unwrap();
        assert!(line.contains(": 6.248 |"), "{line}");
        assert!(line.contains("8.073: +29.2%  |"), "{line}");
        assert!(line.trim_end().ends_with("GB/sec"), "{line}");
        let conv = t.lines().find(|l| l.contains("1x3-convergence")).unwrap();
        assert!(conv.contains("+99.8%~"), "{conv}");
        assert!(t.contains("2 record(s) not in the base run"));
    }

    #[test]
    fn a_zero_base_is_new_and_no_change_is_never_minus_zero() {
        let (mut c, l) = sample();
        c.rows[0].base = 0.0;
        c.rows[0].others[0] = Some(Cell {
            value: 32787.0,
            change_pct: None,
            within_noise: None,
        });
        c.rows[1].others[0].as_mut().unwrap().change_pct = Some(-0.0);
        c.rows[1].others[0].as_mut().unwrap().within_noise = None;
        let t = text(&c, &l);
        let line = t.lines().find(|l| l.contains("2x1-bw-process")).unwrap();
        assert!(line.contains("32787: new"), "{line}");
        let conv = t.lines().find(|l| l.contains("1x3-convergence")).unwrap();
        assert!(conv.contains(": +0.0%"), "{conv}");
        assert!(!t.contains("-0.0%"), "{t}");
        assert!(markdown(&c, &l).contains("| 32787 | new |"));
        let csv_out = csv(&c, &l);
        assert!(
            csv_out.lines().nth(1).unwrap().ends_with(",32787,,"),
            "{csv_out}"
        );
        assert!(
            csv_out.lines().nth(2).unwrap().ends_with(",0.000,"),
            "{csv_out}"
        );
        assert_eq!(change_text(Some(-0.04)), "+0.0%");
        assert_eq!(change_text(Some(-0.06)), "-0.1%");
    }

    #[test]
    fn csv_quotes_and_keeps_one_line_per_row() {
        let (c, l) = sample();
        let out = csv(&c, &l);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            "probe,test,metric,unit,better,base,value_1,change_pct_1,within_noise_1"
        );
        assert!(lines[1].ends_with(",8.073,29.200,false"), "{}", lines[1]);
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }

    #[test]
    fn markdown_and_json_carry_every_row() {
        let (c, l) = sample();
        let md = markdown(&c, &l);
        assert_eq!(md.lines().count(), 4);
        assert!(md.contains("| +99.8% (noise) |"), "{md}");
        let v: serde_json::Value = serde_json::from_str(&json(&c, &l)).unwrap();
        assert_eq!(v["rows"].as_array().unwrap().len(), 2);
        assert_eq!(v["rows"][0]["others"][0]["within_noise"], false);
        assert_eq!(v["labels"][1], "AutoNUMA,v28");
    }

    #[test]
    fn strings_from_inputs_are_made_safe_per_format() {
        let (mut c, _) = sample();
        c.rows[0].test = "bw\x1b[31m|<b>&".into();
        let l = vec!["base\x07".to_string(), "a|b<i>".to_string()];
        let t = text(&c, &l);
        assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t}");
        assert!(t.contains(r"bw\x1b[31m") && t.contains(r"base\x07"), "{t}");
        let md = markdown(&c, &l);
        assert!(md.contains(r"bw\x1b[31m\|\<b>&"), "{md}");
        assert!(md.contains(r"| a\|b\<i> |"), "{md}");
        assert_eq!(md.lines().count(), 4, "{md}");
        let out = csv(&c, &l);
        assert!(
            !out.contains('\x1b') && out.contains(r"bw\x1b[31m"),
            "{out}"
        );
    }
}
