//! Grouped bar charts as inline SVG, beside the line charts of `svg.rs`:
//! same size, palette, tick rule and escaping, so both read alike in a
//! report.

use super::svg::{PALETTE, escape, ticks};
use crate::view::Bars;
use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 50.0;
const PLOT_W: f64 = W - LEFT - RIGHT;
const PLOT_H: f64 = H - TOP - BOTTOM;

fn fmt_num(v: f64) -> String {
    if v.abs() >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// The chart as an `<svg>` element; bars from zero, a value axis with
/// round ticks, each group's label under it, the legend at the right.
/// Values that are missing, negative or not finite get no bar.
pub(crate) fn render(b: &Bars) -> String {
    let values: Vec<f64> = b
        .groups
        .iter()
        .flat_map(|g| g.values.iter().flatten().copied())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .collect();
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{0}" font-family="sans-serif" font-size="12"><text x="{1}" y="18" text-anchor="middle" font-size="14" font-weight="bold">{0}</text>"#,
        escape(&b.title),
        W / 2.0
    );
    let top = values.iter().copied().fold(0.0, f64::max);
    if values.is_empty() || b.groups.is_empty() || top <= 0.0 || !top.is_finite() {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">no data</text></svg>"#,
            W / 2.0,
            H / 2.0
        );
        return s;
    }
    let y1 = (top * 1.05).min(f64::MAX);
    let py = |v: f64| TOP + PLOT_H - (v / y1).clamp(0.0, 1.0) * PLOT_H;
    let _ = write!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="#888"/>"##
    );
    for t in ticks(0.0, y1, 5) {
        let y = py(t);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + PLOT_W,
            LEFT - 6.0,
            y + 4.0,
            fmt_num(t)
        );
    }
    let group_w = PLOT_W / b.groups.len() as f64;
    let per = b.series.len().max(1) as f64;
    let bar_w = group_w * 0.8 / per;
    for (gi, g) in b.groups.iter().enumerate() {
        let x0 = LEFT + gi as f64 * group_w + group_w * 0.1;
        for (si, v) in g.values.iter().enumerate() {
            let Some(v) = v.filter(|v| v.is_finite() && *v >= 0.0) else {
                continue;
            };
            let y = py(v);
            let _ = write!(
                s,
                r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                x0 + si as f64 * bar_w,
                bar_w.max(1.0) - 1.0,
                TOP + PLOT_H - y,
                PALETTE[si % PALETTE.len()],
                escape(&g.label),
                fmt_num(v)
            );
        }
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            LEFT + (gi as f64 + 0.5) * group_w,
            TOP + PLOT_H + 16.0,
            escape(&g.label)
        );
    }
    let _ = write!(
        s,
        r#"<text x="16" y="{0}" text-anchor="middle" transform="rotate(-90 16 {0})">{1}</text>"#,
        TOP + PLOT_H / 2.0,
        escape(&b.y_label)
    );
    for (i, label) in b.series.iter().enumerate() {
        let ly = TOP + 10.0 + i as f64 * 16.0;
        let _ = write!(
            s,
            r#"<rect x="{}" y="{}" width="12" height="10" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            LEFT + PLOT_W + 10.0,
            ly - 5.0,
            PALETTE[i % PALETTE.len()],
            LEFT + PLOT_W + 28.0,
            ly + 4.0,
            escape(label)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::BarGroup;

    fn bars() -> Bars {
        Bars {
            title: "mix <bars>".into(),
            y_label: "MB/s".into(),
            series: vec!["regular".into(), "non-temporal".into()],
            groups: vec![
                BarGroup {
                    label: "read".into(),
                    values: vec![Some(100.0), None],
                },
                BarGroup {
                    label: "1:1".into(),
                    values: vec![Some(50.0), Some(80.0)],
                },
            ],
        }
    }

    #[test]
    fn one_bar_per_value_and_the_tallest_reaches_near_the_top() {
        let s = render(&bars());
        // Plot frame + two legend swatches + three bars.
        assert_eq!(s.matches("<rect").count(), 1 + 2 + 3, "{s}");
        assert!(s.contains("mix &lt;bars&gt;") && !s.contains("<bars>"));
        assert!(s.contains(">non-temporal</text>") && s.contains(">1:1</text>"));
        let heights: Vec<f64> = s
            .match_indices(" height=\"")
            .skip(2)
            .map(|(at, _)| {
                let rest = &s[at + 9..];
                rest[..rest.find('"').unwrap()].parse().unwrap()
            })
            .filter(|h: &f64| *h > 10.0)
            .collect();
        let tallest = heights.iter().copied().fold(0.0, f64::max);
        assert!((tallest - PLOT_H / 1.05).abs() < 0.2, "{heights:?}");
        // 50 is half of 100.
        assert!(heights.iter().any(|h| (h - tallest / 2.0).abs() < 0.2));
    }

    #[test]
    fn nothing_drawable_says_so() {
        let mut b = bars();
        for g in &mut b.groups {
            g.values = vec![None, Some(f64::NAN)];
        }
        assert!(render(&b).contains("no data"));
        assert!(render(&Bars::default()).contains("no data"));
    }
}
