//! The distribution of one figure over a kind's machines as an inline SVG
//! histogram: bars of machine counts, the median as a line, the band
//! within which a machine is not an outlier shaded, and every outlier a red
//! mark named below the axis. A histogram draws 10,000 machines with the
//! same 40 bars as 10, where a dot per machine would not.

use crate::analysis::fleet::group::FigureReport;
use crate::analysis::fleet::robust::Cut;
use crate::output::svg::escape;
use std::fmt::Write;

const W: f64 = 720.0;
const PLOT_H: f64 = 180.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BINS: usize = 40;
/// Outliers named on the chart; the table names all.
const NAMED: usize = 12;

/// The chart of `values` (the kind's machines' figure) with `f`'s spread
/// and outliers; `None` where there is nothing to draw.
pub(super) fn histogram(f: &FigureReport, values: &[f64], cut: &Cut) -> Option<String> {
    let sp = f.spread?;
    let (mut lo, mut hi) = (sp.min, sp.max);
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    if hi - lo < 1e-9 * hi.abs().max(1.0) {
        let pad = (hi.abs() * 0.05).max(1.0);
        lo -= pad;
        hi += pad;
    }
    let bin = |v: f64| (((v - lo) / (hi - lo) * BINS as f64) as usize).min(BINS - 1);
    let mut counts = [0usize; BINS];
    for &v in values {
        counts[bin(v)] += 1;
    }
    let most = *counts.iter().max().unwrap_or(&1) as f64;
    let pw = W - LEFT - RIGHT;
    let x = |v: f64| LEFT + (v - lo) / (hi - lo) * pw;
    let named = f.outliers.len().min(NAMED);
    let h = TOP + PLOT_H + 40.0 + 14.0 * named as f64 + 10.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" aria-label="{} distribution" font-family="sans-serif" font-size="11">"#,
        escape(f.title)
    );
    let _ = write!(
        s,
        r#"<text x="{LEFT}" y="16" font-size="13" font-weight="bold">{} ({}), {} machine(s)</text>"#,
        escape(f.title),
        escape(f.unit),
        sp.n
    );
    // Not-an-outlier band: the wider of the z cut and the floor.
    let half = (cut.z * sp.mad / 0.6745).max(sp.median.abs() * cut.floor_pct / 100.0);
    let (b0, b1) = (x((sp.median - half).max(lo)), x((sp.median + half).min(hi)));
    let _ = write!(
        s,
        r##"<rect x="{b0:.1}" y="{TOP}" width="{:.1}" height="{PLOT_H}" fill="#e8f4e8"/>"##,
        (b1 - b0).max(0.0)
    );
    let bw = pw / BINS as f64;
    for (i, c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        let bh = PLOT_H * *c as f64 / most;
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{bh:.1}" fill="#1f77b4"><title>{c} machine(s)</title></rect>"##,
            LEFT + i as f64 * bw + 0.5,
            TOP + PLOT_H - bh,
            (bw - 1.0).max(0.5)
        );
    }
    let mx = x(sp.median);
    let _ = write!(
        s,
        r##"<line x1="{mx:.1}" y1="{TOP}" x2="{mx:.1}" y2="{}" stroke="#222" stroke-dasharray="4 3"/><text x="{mx:.1}" y="{}" text-anchor="middle">median {}</text>"##,
        TOP + PLOT_H,
        TOP - 3.0,
        super::num(sp.median)
    );
    let axis = TOP + PLOT_H;
    let _ = write!(
        s,
        r##"<line x1="{LEFT}" y1="{axis}" x2="{}" y2="{axis}" stroke="#444"/><text x="{LEFT}" y="{}" text-anchor="middle">{}</text><text x="{}" y="{}" text-anchor="middle">{}</text>"##,
        W - RIGHT,
        axis + 14.0,
        super::num(lo),
        W - RIGHT,
        axis + 14.0,
        super::num(hi)
    );
    for (i, o) in f.outliers.iter().take(NAMED).enumerate() {
        let ox = x(o.value);
        let ty = axis + 30.0 + 14.0 * i as f64;
        let _ = write!(
            s,
            r##"<line x1="{ox:.1}" y1="{TOP}" x2="{ox:.1}" y2="{ty:.1}" stroke="#d62728" stroke-width="1.5"/><text x="{:.1}" y="{:.1}" fill="#d62728" text-anchor="{}">{} {} ({:+.1}%)</text>"##,
            ox + if ox > W / 2.0 { -4.0 } else { 4.0 },
            ty + 4.0,
            if ox > W / 2.0 { "end" } else { "start" },
            escape(&o.machine),
            super::num(o.value),
            o.deviation_pct
        );
    }
    if f.outliers.len() > NAMED {
        let _ = write!(
            s,
            r#"<text x="{LEFT}" y="{:.1}">and {} more outliers (see the table)</text>"#,
            h - 4.0,
            f.outliers.len() - NAMED
        );
    }
    s.push_str("</svg>");
    Some(s)
}
