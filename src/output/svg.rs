//! Line charts as inline SVG: no script, no font files, no network, so a
//! report opens from disk anywhere. Every label is escaped.

use std::fmt::Write;

use crate::view::chart::{Chart, Line};

/// Escapes text for HTML and SVG content and attribute values. Control
/// characters (but tab and line ends), which HTML does not allow and which
/// a terminal would obey when someone prints the file, become U+FFFD, as do
/// bidirectional controls, which would reorder what follows them in a cell
/// or a chart label.
pub(crate) fn escape(s: &str) -> String {
    escape_chars(s, true)
}

/// [`escape`] for text between tags only, where quotes need no escape.
pub(crate) fn escape_text(s: &str) -> String {
    escape_chars(s, false)
}

fn escape_chars(s: &str, quotes: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quotes => out.push_str("&quot;"),
            '\'' if quotes => out.push_str("&#39;"),
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c if crate::text::is_bidi_control(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Colours distinguishable in print and by most colour-blind readers.
pub(crate) const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

const W: f64 = 720.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 50.0;

/// Most ticks an axis gets; more would only overlap.
const MAX_TICKS: i64 = 50;

/// "Nice" tick values covering `lo..=hi`, about `n` of them. Any finite
/// range gives a short list of finite values: ranges too wide for f64
/// arithmetic or too narrow for a step (subnormal values) get their ends.
pub(crate) fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi <= lo || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let ends = vec![lo, hi];
    // Halves first so that -1e308..1e308 does not overflow to infinity.
    let raw = (hi / 2.0 - lo / 2.0) / n.max(1) as f64 * 2.0;
    let mag = 10f64.powf(raw.log10().floor());
    if !(mag.is_normal() && raw.is_finite()) {
        return ends;
    }
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    // Near f64::MAX a round step past the span overflows (2e308 is
    // infinite), and 0 x infinity would be a NaN tick.
    if !step.is_finite() {
        return ends;
    }
    let (first, last) = ((lo / step).ceil(), (hi / step + 1e-9).floor());
    // Far from zero relative to the step, multiples of it are not exact.
    // No multiple of the step in a span far narrower than the step (one
    // tick asked for over 1e300..1e300 x (1 + 1e-15)): the ends are the ticks.
    if !(first.abs() < 1e15
        && last.abs() < 1e15
        && first <= last
        && last - first <= MAX_TICKS as f64)
    {
        return ends;
    }
    let unit = 10f64.powi(-(step.log10().floor() as i32) + 2);
    // Multiples of the step, computed each from its index so no rounding
    // error accumulates (1.0 + 5 x 0.2 must be exactly 2).
    (first as i64..=last as i64)
        .map(|k| {
            let t = k as f64 * step;
            let rounded = (t * unit).round() / unit;
            if rounded.is_finite() { rounded } else { t }
        })
        .collect()
}

/// Where `v` lies between `lo` and `hi`, 0 to 1, for any finite inputs:
/// computed on halves so the span cannot overflow, and 0.5 when the span
/// is empty.
fn fraction(v: f64, lo: f64, hi: f64) -> f64 {
    let span = hi / 2.0 - lo / 2.0;
    let f = (v / 2.0 - lo / 2.0) / span;
    if f.is_finite() {
        f.clamp(0.0, 1.0)
    } else {
        0.5
    }
}

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e15 || (a > 0.0 && a < 0.01) {
        format!("{v:.1e}")
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The chart as an `<svg>` element; an empty chart says so.
pub(crate) fn render(c: &Chart) -> String {
    let pts: Vec<(f64, f64)> = c
        .lines
        .iter()
        .flat_map(|l| l.points.iter().copied())
        .filter(|&p| drawable(c, p))
        .collect();
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{}" font-family="sans-serif" font-size="12">"#,
        escape(&c.title)
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="18" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"#,
        W / 2.0,
        escape(&c.title)
    );
    if pts.is_empty() {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">no data</text></svg>"#,
            W / 2.0,
            H / 2.0
        );
        return s;
    }
    let f = Frame::around(c, &pts);
    y_axis(&mut s, &f);
    x_axis(&mut s, c, &f, &pts);
    axis_labels(&mut s, c);
    markers(&mut s, c, &f);
    for (i, l) in c.lines.iter().enumerate() {
        line(&mut s, c, &f, i, l);
    }
    s.push_str("</svg>");
    s
}

/// A point the chart can place: finite, and positive on a log axis.
fn drawable(c: &Chart, (x, y): (f64, f64)) -> bool {
    x.is_finite() && y.is_finite() && (!c.x_log2 || x > 0.0) && (!c.y_log10 || y > 0.0)
}

const PLOT_W: f64 = W - LEFT - RIGHT;
const PLOT_H: f64 = H - TOP - BOTTOM;

/// The data ranges the plot area spans, and the mapping into it.
struct Frame {
    log2: bool,
    /// y on a log10 scale: `y0` and `y1` are then in decades.
    log10: bool,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn around(c: &Chart, pts: &[(f64, f64)]) -> Frame {
        let tx = |x: f64| if c.x_log2 { x.log2() } else { x };
        let (mut x0, mut x1) = pts.iter().fold((f64::MAX, f64::MIN), |(a, b), p| {
            (a.min(tx(p.0)), b.max(tx(p.0)))
        });
        for m in &c.markers {
            if m.x.is_finite() && (!c.x_log2 || m.x > 0.0) {
                x0 = x0.min(tx(m.x));
                x1 = x1.max(tx(m.x));
            }
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        let (y0, y1) = if c.y_log10 {
            // 5% of the span either side, in decades: whole decades
            // would leave most of a decade empty below memory's plateau.
            let lo = pts.iter().map(|p| p.1.log10()).fold(f64::MAX, f64::min);
            let hi = pts.iter().map(|p| p.1.log10()).fold(f64::MIN, f64::max);
            let pad = ((hi - lo) * 0.05).max(0.05);
            (lo - pad, hi + pad)
        } else {
            let y_max = pts.iter().map(|p| p.1).fold(f64::MIN, f64::max).max(0.0);
            // 5% headroom, short of infinity at the top of the f64 range.
            let y1 = (y_max * 1.05).min(f64::MAX);
            let y0 = pts.iter().map(|p| p.1).fold(f64::MAX, f64::min).min(0.0);
            (y0, if y1 <= y0 { y0 + 1.0 } else { y1 })
        };
        Frame {
            log2: c.x_log2,
            log10: c.y_log10,
            x0,
            x1,
            y0,
            y1,
        }
    }

    /// x on the axis's own scale (log2 where the axis is).
    fn tx(&self, x: f64) -> f64 {
        if self.log2 { x.log2() } else { x }
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + fraction(self.tx(x), self.x0, self.x1) * PLOT_W
    }

    fn py(&self, y: f64) -> f64 {
        let y = if self.log10 { y.log10() } else { y };
        TOP + PLOT_H - fraction(y, self.y0, self.y1) * PLOT_H
    }

    /// The y ticks: round numbers, or on a log axis each decade (with 2x
    /// and 5x between where there are few decades).
    fn y_ticks(&self) -> Vec<f64> {
        if !self.log10 {
            return ticks(self.y0, self.y1, 5);
        }
        let (a, b) = (self.y0.floor() as i32, self.y1.ceil() as i32);
        let steps: &[f64] = if b - a <= 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
        // At most about eight decades labelled: more overlap.
        let stride = ((b - a) as f64 / 8.0).ceil().max(1.0) as usize;
        let mut out = Vec::new();
        for e in (a..=b).step_by(stride) {
            for m in steps {
                let v = m * 10f64.powi(e);
                let at = v.log10();
                if v > 0.0 && v.is_finite() && at >= self.y0 && at <= self.y1 {
                    out.push(v);
                }
            }
        }
        out
    }
}

/// The plot's border and the horizontal grid with its labels.
fn y_axis(s: &mut String, f: &Frame) {
    let _ = write!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="#888"/>"##
    );
    for t in f.y_ticks() {
        let y = f.py(t);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + PLOT_W,
            LEFT - 6.0,
            y + 4.0,
            fmt_num(t)
        );
    }
}

/// The vertical grid with its labels: powers of two on a log axis, whole
/// numbers where every x is one.
fn x_axis(s: &mut String, c: &Chart, f: &Frame, pts: &[(f64, f64)]) {
    let xt: Vec<f64> = if c.x_log2 {
        let (a, b) = (f.x0.floor() as i32, f.x1.ceil() as i32);
        // At most about seven labels: more overlap at this width.
        let step = ((b - a) as f64 / 7.0).ceil().max(1.0) as i32;
        (a..=b)
            .step_by(step as usize)
            .map(|e| 2f64.powi(e))
            .filter(|x| f.tx(*x) >= f.x0 - 1e-9 && f.tx(*x) <= f.x1 + 1e-9)
            .collect()
    } else {
        // Counts (threads, nodes) get whole-number ticks only.
        let whole = pts.iter().all(|p| p.0.fract() == 0.0);
        let mut t = ticks(f.x0, f.x1, 8);
        if whole {
            t.retain(|v| v.fract() == 0.0);
        }
        t
    };
    for t in xt {
        let x = f.px(t);
        let label = c.x_format.map_or_else(|| fmt_num(t), |fmt| fmt(t));
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            TOP + PLOT_H,
            TOP + PLOT_H + 16.0,
            escape(&label)
        );
    }
}

fn axis_labels(s: &mut String, c: &Chart) {
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        LEFT + PLOT_W / 2.0,
        H - 10.0,
        escape(&c.x_label)
    );
    let _ = write!(
        s,
        r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#,
        TOP + PLOT_H / 2.0,
        TOP + PLOT_H / 2.0,
        escape(&c.y_label)
    );
}

/// Dashed vertical lines at marked moments (e.g. convergence).
fn markers(s: &mut String, c: &Chart, f: &Frame) {
    for m in &c.markers {
        if !m.x.is_finite() || (c.x_log2 && m.x <= 0.0) {
            continue;
        }
        let x = f.px(m.x);
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#999" stroke-dasharray="4 3"/><text x="{:.1}" y="{}" font-size="10" fill="#555">{}</text>"##,
            TOP + PLOT_H,
            x + 3.0,
            TOP + 12.0,
            escape(&m.label)
        );
    }
}

/// Line `i`: its polyline, a dot per point, and its legend entry.
fn line(s: &mut String, c: &Chart, f: &Frame, i: usize, l: &Line) {
    let colour = PALETTE[i % PALETTE.len()];
    let path: Vec<String> = l
        .points
        .iter()
        .filter(|&&p| drawable(c, p))
        .map(|&(x, y)| format!("{:.1},{:.1}", f.px(x), f.py(y)))
        .collect();
    if path.is_empty() {
        return;
    }
    let _ = write!(
        s,
        r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
        path.join(" ")
    );
    for p in &path {
        let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
        let _ = write!(s, r#"<circle cx="{x}" cy="{y}" r="2.5" fill="{colour}"/>"#);
    }
    let ly = TOP + 10.0 + i as f64 * 16.0;
    let _ = write!(
        s,
        r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
        LEFT + PLOT_W + 10.0,
        LEFT + PLOT_W + 28.0,
        LEFT + PLOT_W + 32.0,
        ly + 4.0,
        escape(&l.label)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::chart::Marker;

    #[test]
    fn control_characters_never_reach_the_page() {
        assert_eq!(
            escape("a\u{1b}[31mb\u{7}c\td"),
            "a\u{FFFD}[31mb\u{FFFD}c\td"
        );
        assert_eq!(escape("<&>"), "&lt;&amp;&gt;");
        assert_eq!(escape_text("'\u{1b}\""), "'\u{FFFD}\"");
        assert_eq!(escape("'\""), "&#39;&quot;");
        assert_eq!(escape_text("h\u{202e}1.5 \u{5d0}"), "h\u{FFFD}1.5 \u{5d0}");
    }

    fn chart() -> Chart {
        Chart {
            title: "bw <&> \"x\"".into(),
            x_label: "size".into(),
            y_label: "MB/s".into(),
            x_log2: true,
            y_log10: false,
            lines: vec![Line {
                label: "read<script>".into(),
                points: vec![(1024.0, 100.0), (2048.0, 90.0), (0.0, 5.0)],
            }],
            markers: vec![Marker {
                x: 1536.0,
                label: "L1".into(),
            }],
            x_format: None,
        }
    }

    #[test]
    fn labels_are_escaped() {
        let s = render(&chart());
        assert!(!s.contains("<script>"), "{s}");
        assert!(s.contains("read&lt;script&gt;"));
        assert!(s.contains("bw &lt;&amp;&gt; &quot;x&quot;"));
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
    }

    #[test]
    fn a_log_axis_drops_non_positive_x_and_draws_markers() {
        let s = render(&chart());
        assert_eq!(
            s.matches("<circle").count(),
            2,
            "x = 0 cannot be drawn on a log axis"
        );
        assert!(s.contains(">L1</text>"));
        assert_eq!(s.matches("<polyline").count(), 1);
    }

    #[test]
    fn counts_get_whole_number_ticks() {
        let c = Chart {
            title: "scaling".into(),
            lines: vec![Line {
                label: "a".into(),
                points: vec![(1.0, 10.0), (2.0, 19.0)],
            }],
            ..Default::default()
        };
        let s = render(&c);
        assert!(s.contains(">1</text>") && s.contains(">2</text>"), "{s}");
        assert!(!s.contains(">1.20</text>"), "{s}");
    }

    #[test]
    fn empty_chart_says_so() {
        let c = Chart {
            title: "t".into(),
            ..Default::default()
        };
        assert!(render(&c).contains("no data"));
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 100.0, 5), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        let t = ticks(0.0, 31_000.0, 5);
        assert_eq!(t[1], 10_000.0);
        assert!(*t.last().unwrap() <= 31_000.0);
        assert_eq!(ticks(5.0, 5.0, 5), [5.0]);
    }

    /// Every number in the SVG's coordinate attributes, parsed.
    fn coordinates(svg: &str) -> Vec<f64> {
        let mut out = Vec::new();
        for attr in [
            " x=\"",
            " y=\"",
            " x1=\"",
            " y1=\"",
            " x2=\"",
            " y2=\"",
            " cx=\"",
            " cy=\"",
            " points=\"",
        ] {
            for (at, _) in svg.match_indices(attr) {
                let rest = &svg[at + attr.len()..];
                let value = &rest[..rest.find('"').unwrap()];
                out.extend(
                    value
                        .split([' ', ','])
                        .filter(|n| !n.is_empty())
                        .map(|n| n.parse::<f64>().unwrap_or(f64::NAN)),
                );
            }
        }
        out
    }

    #[test]
    fn a_log_y_axis_lifts_memorys_plateau_off_the_floor() {
        // L1 at 390 GB/s, memory at 12.7 GB/s: linear, memory would sit
        // at 3% of the height.
        let mut c = Chart {
            title: "bw".into(),
            x_log2: true,
            lines: vec![Line {
                label: "read".into(),
                points: vec![
                    (16384.0, 390_000.0),
                    ((1u64 << 30) as f64, 12_700.0),
                    ((1u64 << 31) as f64, 9_000.0),
                ],
            }],
            ..Default::default()
        };
        // Pixels between memory's two figures, 12.7 and 9 GB/s.
        let apart = |c: &Chart| {
            let f = Frame::around(c, &c.lines[0].points);
            f.py(9_000.0) - f.py(12_700.0)
        };
        assert!(apart(&c) < 5.0, "{}", apart(&c));
        c.y_log10 = true;
        assert!(apart(&c) > 20.0, "{}", apart(&c));
        let svg = render(&c);
        for label in [">10k<", ">20k<", ">100k<", ">200k<"] {
            assert!(svg.contains(label), "{label} in {svg}");
        }
        // Zero or below has no place on a log axis.
        c.lines[0].points.push((4096.0, 0.0));
        assert!(coordinates(&render(&c)).iter().all(|v| v.is_finite()));
    }

    #[test]
    fn extreme_ranges_give_short_finite_ticks() {
        for (lo, hi) in [
            (0.0, 5e-324),
            (-f64::MAX, f64::MAX),
            (0.0, f64::MAX),
            (0.0, 1.2374446535082038e308),
            (1e300, 1e300 * (1.0 + 1e-15)),
            (-1e-310, 1e-310),
        ] {
            // One tick asked for makes the widest step: past f64::MAX at
            // 1.24e308 (the next round step is 2e308).
            for n in [0, 1, 5] {
                let t = ticks(lo, hi, n);
                assert!(!t.is_empty() && t.len() <= 51, "{lo}..{hi}/{n}: {t:?}");
                assert!(t.iter().all(|v| v.is_finite()), "{lo}..{hi}/{n}: {t:?}");
            }
        }
    }

    proptest::proptest! {
        /// Any finite points draw at finite coordinates inside the chart.
        #[test]
        fn any_finite_points_draw_finite_coordinates(
            points in proptest::collection::vec(
                (proptest::num::f64::ANY, proptest::num::f64::ANY),
                1..8,
            ),
            log in proptest::bool::ANY,
        ) {
            let c = Chart {
                title: "t".into(),
                x_log2: log,
                y_log10: log,
                lines: vec![Line { label: "l".into(), points }],
                markers: vec![Marker { x: 4096.0, label: "m".into() }],
                ..Default::default()
            };
            let svg = render(&c);
            for v in coordinates(&svg) {
                proptest::prop_assert!(v.is_finite() && (0.0..=W).contains(&v), "{v} in {svg}");
            }
        }

        #[test]
        fn ticks_of_any_range_are_few_and_finite(
            lo in proptest::num::f64::ANY,
            hi in proptest::num::f64::ANY,
            n in 0usize..20,
        ) {
            let t = ticks(lo, hi, n);
            proptest::prop_assert!(t.len() <= 51);
            if lo.is_finite() && hi.is_finite() {
                proptest::prop_assert!(t.iter().all(|v| v.is_finite()));
            }
        }
    }
}
