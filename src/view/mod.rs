//! What a probe shows, as data. Each probe implements [`View`] once, in its
//! own `view.rs`, from its records alone, and [`Probe`] (what `run`, the
//! repeat check and the fleet ask of it) beside it; the renderers in
//! `output` (text, CSV, Markdown, LaTeX, JSON, HTML) iterate the registry
//! (`probes::REGISTRY`) and never name a probe. This module sits below
//! them and below analysis: probes, analysis and output import it, it
//! imports none of them.

pub(crate) mod chart;
pub(crate) mod finding;
pub(crate) mod probe;
pub(crate) mod section;
pub(crate) mod table;

pub(crate) use chart::{BarGroup, Bars, Chart, Line, Marker};
pub(crate) use finding::Finding;
pub(crate) use probe::{
    Builds, Figure, FleetFigure, FolderFile, InRun, Part, PartPlan, Probe, Profile, Scope, Spec,
    Trim,
};
pub(crate) use section::Section;

use crate::results::{Document, Record};

/// How one probe's records are shown, in every format. Everything comes
/// from the document: a view never sees a probe's internal types, so a
/// saved results file renders exactly as the command printed it.
pub(crate) trait View: Sync {
    /// The probe whose records this view shows (a `results::names::probe`
    /// constant).
    fn probe(&self) -> &'static str;

    /// The heading of this probe's part of the HTML report.
    fn heading(&self) -> String {
        self.probe().to_string()
    }

    /// One sentence under the heading of this probe's part of the HTML
    /// report: what it shows and how to read it.
    fn intro(&self) -> Option<&'static str> {
        None
    }

    /// The first line of a text, Markdown or LaTeX rendering.
    fn title(&self, doc: &Document) -> String {
        format!(
            "numabench {}: {} ({}), {}",
            self.probe(),
            doc.host.hostname,
            doc.host.cpu_model,
            doc.started
        )
    }

    /// The tables and notes: Markdown and LaTeX render these, and so does
    /// text unless [`View::text`] gives its own.
    fn sections(&self, doc: &Document, records: &[&Record]) -> Vec<Section>;

    /// The terminal text, where it is not [`View::sections`] under
    /// [`View::title`] (e.g. a layout the original tool's users know).
    fn text(&self, _doc: &Document, _records: &[&Record]) -> Option<String> {
        None
    }

    /// CSV, where the probe has a table of its own shape; `None` gives the
    /// long form every probe has: one line per record and metric.
    fn csv(&self, _doc: &Document, _records: &[&Record]) -> Option<Csv> {
        None
    }

    /// The HTML report's part, in order; by default the sections as tables
    /// and every record's series as a chart.
    fn blocks(&self, doc: &Document, records: &[&Record]) -> Vec<Block> {
        let mut out: Vec<Block> = self
            .sections(doc, records)
            .into_iter()
            .map(Block::Section)
            .collect();
        out.extend(series_charts(records).into_iter().map(Block::Chart));
        out
    }
}

/// A piece of the HTML report.
#[derive(Debug, Clone)]
pub(crate) enum Block {
    /// A titled table with notes.
    Section(Section),
    /// A grid coloured by each cell's share of its row's reference.
    Heatmap(Heatmap),
    /// A line chart.
    Chart(Chart),
    /// A grouped bar chart.
    Bars(Bars),
    /// A note under what came before.
    Note(String),
    /// A note in HTML text, where only `&`, `<` and `>` need escaping (a
    /// note's apostrophes and quotes then read as typed).
    Caption(String),
}

/// A grid of figures coloured from red (far below the row's reference)
/// to green (at or above it).
#[derive(Debug, Clone, Default)]
pub(crate) struct Heatmap {
    pub title: String,
    /// The corner cell, then one label per column.
    pub header: Vec<String>,
    pub rows: Vec<HeatRow>,
    /// Lower is better (latency): the share is inverted.
    pub lower_better: bool,
    /// Decimals shown.
    pub digits: usize,
    /// Small squares without figures (each figure in its tooltip), for a
    /// grid too wide to print, e.g. 64 CPUs x 64 CPUs.
    pub compact: bool,
    /// Colour by where a cell sits between the grid's best and worst cell
    /// (log scale) instead of by its share of the row's reference: for
    /// figures that span several times, e.g. core-to-core latency.
    pub by_range: bool,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct HeatRow {
    pub label: String,
    pub cells: Vec<Option<f64>>,
    /// What a cell is compared with (e.g. the row's local figure).
    pub reference: Option<f64>,
}

/// A CSV table: a header, rows, and notes written after the rows as
/// `# note: ...` lines (readers that take `#` as a comment skip them).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

/// The records of `probe` in `doc`, in order.
pub(crate) fn records_of<'a>(doc: &'a Document, probe: &str) -> Vec<&'a Record> {
    doc.records.iter().filter(|r| r.probe == probe).collect()
}

/// The lowest share of pages found on their intended node over `records`
/// (`placement.on_target_pct`); `None` where none was verified.
pub(crate) fn lowest_verified_pct(records: &[&Record]) -> Option<f64> {
    records
        .iter()
        .filter_map(|r| r.placement.as_ref()?.on_target_pct)
        .reduce(f64::min)
}

/// Every series of `records` as a chart titled by its record, with the
/// record's moment of convergence (`convergence_s`) marked.
pub(crate) fn series_charts(records: &[&Record]) -> Vec<Chart> {
    let mut out = Vec::new();
    for r in records {
        for series in &r.series {
            out.push(Chart {
                title: format!("{}: {}", r.name, series.name),
                x_label: format!("{} ({})", series.x_label, series.x_unit),
                y_label: format!("{} ({})", series.y_label, series.y_unit),
                lines: chart::lines_of(series),
                markers: convergence_marker(r, series),
                ..Default::default()
            });
        }
    }
    out
}

fn convergence_marker(r: &Record, series: &crate::results::Series) -> Vec<Marker> {
    match r.value(crate::results::names::metric::CONVERGENCE_S) {
        Some(at) if series.x_unit == "s" => vec![Marker {
            x: at,
            label: format!("converged {at:.1} s"),
        }],
        _ => Vec::new(),
    }
}

pub(crate) use crate::text::escape;

/// Text from an input as a Markdown table cell or list item: [`escape`]d,
/// `|` escaped so it cannot end the cell, and Markdown's own backslash
/// escapes where a character would start markup: `<` (HTML or an
/// autolink), `&` before what could be an entity, `*` and `` ` ``
/// (emphasis, code), `>` at the start (a quote). An HTML entity would show
/// as `&gt;` to whoever reads the Markdown itself.
pub fn markdown_cell(text: &str) -> String {
    let escaped = escape(text);
    let mut out = String::with_capacity(escaped.len());
    let mut chars = escaped.chars().peekable();
    let mut at_start = true;
    while let Some(c) = chars.next() {
        match c {
            '|' | '<' | '*' | '`' => {
                out.push('\\');
                out.push(c);
            }
            '>' if at_start => out.push_str("\\>"),
            // A backslash before punctuation would escape it, a `|` too.
            '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => out.push_str("\\\\"),
            '&' if chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '#') =>
            {
                out.push_str("\\&")
            }
            c => out.push(c),
        }
        at_start &= c.is_whitespace();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::markdown_cell;

    #[test]
    fn markdown_cells_hold_no_html_and_no_cell_break() {
        assert_eq!(
            markdown_cell("a|b <script>&x\x1b"),
            r"a\|b \<script>\&x\x1b"
        );
        // Text that starts no markup reads as it is.
        assert_eq!(markdown_cell("0->0 & 1->1, a_b"), "0->0 & 1->1, a_b");
        assert_eq!(markdown_cell("> 5% *x* `y`"), r"\> 5% \*x\* \`y\`");
        assert_eq!(markdown_cell(r"a\|b"), r"a\\\|b");
    }
}
