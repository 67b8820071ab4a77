//! Plain-text tables with aligned columns.

/// Column alignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table rendered with two spaces between columns; numbers usually right
/// aligned, labels left.
pub struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str], align: &[Align]) -> Self {
        Self {
            header: header
                .iter()
                .map(|s| crate::view::escape(s).into_owned())
                .collect(),
            align: align.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Adds a row. Cells often carry text from inputs (record names,
    /// labels, PCI addresses): control characters are made visible here, so
    /// no table lets one reach the terminal.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(
            cells
                .into_iter()
                .map(|c| match crate::view::escape(&c) {
                    std::borrow::Cow::Borrowed(_) => c,
                    std::borrow::Cow::Owned(e) => e,
                })
                .collect(),
        );
    }

    pub fn render(&self) -> String {
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

/// Bytes in binary units with one decimal: `62.8 GiB`, `48 KiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    // 8.04 GiB rounds to "8.0": written "8 GiB", as an exact 8 GiB is.
    let one_decimal = format!("{v:.1}");
    match one_decimal.strip_suffix(".0") {
        _ if unit == 0 => format!("{v:.0} {}", UNITS[unit]),
        Some(whole) => format!("{whole} {}", UNITS[unit]),
        None => format!("{one_decimal} {}", UNITS[unit]),
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

    #[test]
    fn binary_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(48 << 10), "48 KiB");
        assert_eq!(bytes(1536 << 20), "1.5 GiB");
        assert_eq!(bytes(65_854_000 * 1024), "62.8 GiB");
        // Never "8.0 GiB" beside "8 GiB".
        assert_eq!(bytes((8 << 30) + (40 << 20)), "8 GiB");
        assert_eq!(bytes(8 << 30), "8 GiB");
    }
}
