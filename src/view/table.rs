//! Plain-text tables with aligned columns.

/// Column alignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// A table rendered with two spaces between columns; numbers usually right
/// aligned, labels left.
pub(crate) struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(header: &[&str], align: &[Align]) -> Self {
        Self {
            header: header
                .iter()
                .map(|s| crate::text::escape(s).into_owned())
                .collect(),
            align: align.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Adds a row. Cells often carry text from inputs (record names,
    /// labels, PCI addresses): control characters are made visible here, so
    /// no table lets one reach the terminal.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(
            cells
                .into_iter()
                .map(|c| match crate::text::escape(&c) {
                    std::borrow::Cow::Borrowed(_) => c,
                    std::borrow::Cow::Owned(e) => e,
                })
                .collect(),
        );
    }

    pub(crate) fn render(&self) -> String {
        let cols = self.header.len();
        let mut width = vec![0; cols];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (i, cell) in row.iter().enumerate().take(cols) {
                width[i] = width[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, w) in width.iter().enumerate() {
                let cell = row.get(i).map_or("", String::as_str);
                let pad = w - cell.chars().count();
                if i > 0 {
                    line.push_str("  ");
                }
                match self.align.get(i).copied().unwrap_or(Align::Left) {
                    Align::Left => {
                        line.push_str(cell);
                        line.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        line.push_str(&" ".repeat(pad));
                        line.push_str(cell);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["node", "cpus"], &[Align::Right, Align::Left]);
        t.row(vec!["0".into(), "0-7".into()]);
        t.row(vec!["12".into(), "8-15,24-31".into()]);
        assert_eq!(t.render(), "node  cpus\n   0  0-7\n  12  8-15,24-31\n");
    }
}
