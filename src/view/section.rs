//! A titled table with notes: the unit of every text, Markdown, LaTeX and
//! HTML table.

/// One titled table with lines of explanation under it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Lines printed after the table (or alone, without a header).
    pub lines: Vec<String>,
}

impl Section {
    pub fn new(title: impl Into<String>) -> Self {
        Section {
            title: title.into(),
            ..Default::default()
        }
    }
}
