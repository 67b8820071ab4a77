//! A comparison as the one-metric tables of the kernel-comparison mails:
//! one table per metric, one row per test, one column per results file,
//! the base first.
//!
//! Times to converge are seconds with one decimal and spreads are percent,
//! both without a change column, as the mails show them; every other
//! metric is its value and its change against the base ("6.136: -1.8%"),
//! GB/s with three decimals as the mails' bandwidth table.

use super::compare::{change_text, num};
use crate::analysis::compare::{Cell, Comparison, Row};
use crate::results::Better;
use crate::results::names::mem::metric as mm;

/// How one metric's table shows its figures.
#[derive(Debug, Clone, PartialEq)]
struct Style {
    /// The unit column.
    unit: String,
    /// Decimals of each figure; `None`: as many as keep it readable.
    decimals: Option<usize>,
    /// A change column against the base.
    change: bool,
    /// Figures carry a "%" of their own.
    percent: bool,
}

fn style(metric: &str, unit: &str) -> Style {
    let times = [
        mm::CONVERGENCE_LATENCY_S,
        mm::CONVERGED_AT_S,
        mm::MEMORY_CONVERGED_AT_S,
    ];
    let (label, decimals, change, percent) = if times.contains(&metric) {
        ("secs", Some(1), false, false)
    } else if unit == "%" {
        ("%", Some(1), false, true)
    } else if unit == "GB/s" {
        ("GB/sec", Some(3), true, false)
    } else {
        (unit, None, true, false)
    };
    Style {
        unit: label.into(),
        decimals,
        change,
        percent,
    }
}

impl Style {
    fn figure(&self, v: f64) -> String {
        let mut s = match self.decimals {
            Some(d) => format!("{v:.d$}"),
            // Counts (pages migrated, hinting faults) as whole numbers.
            None if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
            None => num(v),
        };
        if self.percent {
            s.push('%');
        }
        s
    }

    fn cell(&self, c: &Option<Cell>) -> String {
        let Some(c) = c else {
            return "-".into();
        };
        let mut s = self.figure(c.value);
        if self.change {
            s = format!("{s}: {}", change_text(c.change_pct));
            if c.within_noise == Some(true) {
                s.push('~');
            }
        }
        s
    }
}

/// The metrics of `c` in `order` first, then in the order rows bring them.
fn metrics_in_order(c: &Comparison, order: &[String]) -> Vec<String> {
    let mut out: Vec<String> = order
        .iter()
        .filter(|m| c.rows.iter().any(|r| &r.metric == *m))
        .cloned()
        .collect();
    for r in &c.rows {
        if !out.contains(&r.metric) {
            out.push(r.metric.clone());
        }
    }
    out
}

/// One metric's table.
fn table(metric: &str, rows: &[&Row], labels: &[String]) -> String {
    let st = style(metric, &rows[0].unit);
    let head = match rows[0].better {
        Better::Higher => "[ Higher numbers are better. ]",
        Better::Lower => "[ Lower numbers are better. ]",
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            std::iter::once(st.figure(r.base))
                .chain(r.others.iter().map(|c| st.cell(c)))
                .collect()
        })
        .collect();
    let w_test = rows.iter().map(|r| r.test.len()).max().unwrap_or(0).max(22);
    let widths: Vec<usize> = (0..labels.len())
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].len())
                .chain(std::iter::once(labels[i].len()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!(" {metric}\n{:>w$}\n\n", head, w = w_test + 31);
    let mut header = format!(" {:<w_test$} :", "[test unit]");
    for (l, w) in labels.iter().zip(&widths) {
        header.push_str(&format!(" {l:>w$} |"));
    }
    out.push_str(&header);
    out.push('\n');
    out.push_str(&"-".repeat(header.len() + 8));
    out.push('\n');
    for (r, cs) in rows.iter().zip(&cells) {
        out.push_str(&format!(" {:<w_test$} :", r.test));
        for (cell, w) in cs.iter().zip(&widths) {
            out.push_str(&format!(" {cell:>w$} |"));
        }
        out.push_str(&format!("  {}\n", st.unit));
    }
    out.push('\n');
    out
}

/// Every metric of `c` as its own table, those of `order` first.
pub(crate) fn text(c: &Comparison, labels: &[String], order: &[String]) -> String {
    let clean = |s: &str| super::escape(s).into_owned();
    let mut c = c.clone();
    for r in &mut c.rows {
        for s in [&mut r.test, &mut r.metric, &mut r.unit] {
            *s = clean(s);
        }
    }
    let labels: Vec<String> = labels.iter().map(|l| clean(l)).collect();
    let mut out = String::new();
    let mut changes = false;
    for metric in metrics_in_order(&c, order) {
        // One metric name can be better high in one probe and low in
        // another: a table per direction, so its header is true of its rows.
        for better in [Better::Higher, Better::Lower] {
            let rows: Vec<&Row> = c
                .rows
                .iter()
                .filter(|r| r.metric == metric && r.better == better)
                .collect();
            if rows.is_empty() {
                continue;
            }
            changes |= style(&metric, &rows[0].unit).change;
            out.push_str(&table(&metric, &rows, &labels));
        }
    }
    if changes {
        out.push_str(&format!(
            "changes against {} are signed so that + is better; ~ marks a change within the runs' own noise; new: the base was 0, or too near 0 for a %\n",
            labels[0]
        ));
    }
    for line in super::compare::unmatched_lines(&c, &labels) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(
        test: &str,
        metric: &str,
        unit: &str,
        better: Better,
        base: f64,
        others: &[Option<f64>],
    ) -> Row {
        Row {
            probe: "mem".into(),
            test: test.into(),
            metric: metric.into(),
            unit: unit.into(),
            better,
            base,
            others: others
                .iter()
                .map(|o| {
                    o.map(|value| Cell {
                        value,
                        change_pct: crate::analysis::compare::change_pct(base, value, better),
                        within_noise: None,
                    })
                })
                .collect(),
        }
    }

    /// Rows of the seed's mails: convergence latency, total speed, spread.
    fn mails() -> (Comparison, Vec<String>) {
        let (h, l) = (Better::Higher, Better::Lower);
        let rows = vec![
            row(
                "1x3-convergence",
                "convergence_latency_s",
                "s",
                l,
                100.1,
                &[Some(100.0), Some(0.2), Some(2.3)],
            ),
            row(
                "4x6-convergence",
                "convergence_latency_s",
                "s",
                l,
                5.4,
                &[Some(101.2), None, Some(11.7)],
            ),
            row(
                "2x1-bw-process",
                "total_speed_gb_s",
                "GB/s",
                h,
                6.248,
                &[Some(6.136), Some(8.073), Some(9.647)],
            ),
            row(
                "2x1-bw-process",
                "spread_runtime_pct",
                "%",
                l,
                0.5,
                &[Some(0.2), Some(0.2), Some(0.2)],
            ),
        ];
        (
            Comparison {
                rows,
                unmatched: vec![0, 0, 0],
            },
            ["v3.7", "balancenuma-v10", "AutoNUMA-v28", "numa-u-v3"]
                .map(String::from)
                .to_vec(),
        )
    }

    fn line<'a>(t: &'a str, test: &str, unit: &str) -> &'a str {
        t.lines()
            .find(|l| l.starts_with(&format!(" {test} ")) && l.ends_with(unit))
            .unwrap_or_else(|| panic!("no {test} line in {unit}:\n{t}"))
    }

    #[test]
    fn convergence_is_seconds_without_a_change_column() {
        let (c, l) = mails();
        let t = text(&c, &l, &[]);
        let conv = line(&t, "1x3-convergence", "secs");
        assert_eq!(
            conv,
            " 1x3-convergence        : 100.1 |           100.0 |          0.2 |       2.3 |  secs"
        );
        assert!(!conv.contains('%'));
        // A test missing from one file is "-" there.
        assert!(line(&t, "4x6-convergence", "secs").contains("   - |"));
        assert!(t.contains("[ Lower numbers are better. ]"));
    }

    #[test]
    fn speed_has_the_change_and_spread_is_percent() {
        let (c, l) = mails();
        let t = text(&c, &l, &["total_speed_gb_s".to_string()]);
        // The order asked for comes first.
        assert!(t.starts_with(" total_speed_gb_s\n"), "{t}");
        let bw = line(&t, "2x1-bw-process", "GB/sec");
        assert!(bw.contains(": 6.248 |"), "{bw}");
        assert!(bw.contains("6.136: -1.8% |"), "{bw}");
        assert!(bw.contains("9.647: +54.4% |"), "{bw}");
        let spread = line(&t, "2x1-bw-process", "%");
        assert!(spread.contains(": 0.5% |"), "{spread}");
        assert!(!spread.contains(": +"), "{spread}");
        assert!(t.contains("[ Higher numbers are better. ]"));
    }

    #[test]
    fn a_metric_better_high_in_one_probe_and_low_in_another_gets_a_header_each() {
        let c = Comparison {
            rows: vec![
                row(
                    "lat 0->0",
                    "value",
                    "ns",
                    Better::Lower,
                    100.0,
                    &[Some(90.0)],
                ),
                row(
                    "bw 0->0",
                    "value",
                    "MB/s",
                    Better::Higher,
                    9000.0,
                    &[Some(9900.0)],
                ),
            ],
            unmatched: vec![0],
        };
        let t = text(&c, &["a".into(), "b".into()], &[]);
        let under = |test: &str| {
            let at = t.find(&format!(" {test} ")).unwrap();
            let higher = t[..at].rfind("[ Higher numbers are better. ]");
            let lower = t[..at].rfind("[ Lower numbers are better. ]");
            if higher > lower {
                Better::Higher
            } else {
                Better::Lower
            }
        };
        assert_eq!(under("lat 0->0"), Better::Lower, "{t}");
        assert_eq!(under("bw 0->0"), Better::Higher, "{t}");
    }

    #[test]
    fn a_zero_base_is_new() {
        let c = Comparison {
            rows: vec![
                row(
                    "4x4-convergence",
                    "numa_pages_migrated",
                    "count",
                    Better::Lower,
                    0.0,
                    &[Some(32787.0)],
                ),
                row(
                    "1x3-convergence",
                    "numa_pages_migrated",
                    "count",
                    Better::Lower,
                    15.0,
                    &[Some(15.0)],
                ),
            ],
            unmatched: vec![1],
        };
        let t = text(&c, &["a".into(), "b".into()], &[]);
        assert!(
            line(&t, "4x4-convergence", "count").contains(":  0 | 32787: new |"),
            "{t}"
        );
        // Counts are whole numbers; no change is +0.0%.
        assert!(
            line(&t, "1x3-convergence", "count").contains(": 15 |  15: +0.0% |"),
            "{t}"
        );
        assert!(t.contains("b: 1 record(s) not in the base run"));
    }
}
