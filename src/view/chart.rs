//! Charts as data: what a view wants drawn. The SVG renderer draws them.

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A vertical marker, e.g. a cache size or the moment of convergence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Marker {
    pub x: f64,
    pub label: String,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Base-2 logarithmic x axis (sizes).
    pub x_log2: bool,
    /// Base-10 logarithmic y axis: for figures that span decades (a
    /// cache's bandwidth beside memory's), where a linear axis squeezes
    /// the smaller under the larger.
    pub y_log10: bool,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
    /// Formats x tick values (e.g. sizes as KiB/MiB).
    pub x_format: Option<fn(f64) -> String>,
}

/// The lines of a results series, each point an (x, y) pair.
pub(crate) fn lines_of(series: &crate::results::Series) -> Vec<Line> {
    series
        .lines
        .iter()
        .map(|l| Line {
            label: l.label.clone(),
            points: series.x.iter().copied().zip(l.y.iter().copied()).collect(),
        })
        .collect()
}

/// A grouped bar chart: one group per category (e.g. a read/write mix),
/// one bar per series within each group (e.g. a store kind), all bars
/// from zero on one value axis.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Bars {
    pub title: String,
    pub y_label: String,
    /// The legend: one label per bar of a group, in order.
    pub series: Vec<String>,
    pub groups: Vec<BarGroup>,
}

/// One category: its label and one value per series (`None`: not measured,
/// no bar).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BarGroup {
    pub label: String,
    pub values: Vec<Option<f64>>,
}
