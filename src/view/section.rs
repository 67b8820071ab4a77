//! A titled table with notes: the unit of every text, Markdown, LaTeX and
//! HTML table.

/// One titled table with lines of explanation under it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Section {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Lines printed after the table (or alone, without a header).
    pub lines: Vec<String>,
    /// Cells (row, column) to emphasise where the format can: the best
    /// value of a column, as the thesis' reports highlight it.
    pub best: Vec<(usize, usize)>,
}

impl Section {
    pub(crate) fn new(title: impl Into<String>) -> Self {
        Section {
            title: title.into(),
            ..Default::default()
        }
    }

    pub(crate) fn is_best(&self, row: usize, column: usize) -> bool {
        self.best.contains(&(row, column))
    }

    /// Marks the best figure of every column after the first (the number a
    /// cell starts with; higher or, with `lower_better`, lower), where
    /// there are at least two rows to compare. Ties mark every holder.
    pub(crate) fn mark_column_best(&mut self, lower_better: bool) {
        if self.rows.len() < 2 {
            return;
        }
        let width = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        for col in 1..width {
            let figures: Vec<(usize, f64)> = self
                .rows
                .iter()
                .enumerate()
                .filter_map(|(i, r)| Some((i, leading_number(r.get(col)?)?)))
                .collect();
            let best = figures
                .iter()
                .map(|f| f.1)
                .reduce(|a, b| if lower_better { a.min(b) } else { a.max(b) });
            if let Some(best) = best {
                self.best
                    .extend(figures.iter().filter(|f| f.1 == best).map(|f| (f.0, col)));
            }
        }
    }
}

/// The number a cell starts with (`16600 (100%)` -> 16600).
fn leading_number(cell: &str) -> Option<f64> {
    let end = cell
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(cell.len());
    cell[..end].parse().ok().filter(|v: &f64| v.is_finite())
}

/// One row per record (its name) and one column per metric any of them
/// has, headed with its unit: the table of records no view of their own
/// shapes. Figures of 100 or more without decimals, smaller ones with three.
pub(crate) fn metrics_table(title: &str, records: &[&crate::results::Record]) -> Section {
    let mut keys: Vec<&str> = Vec::new();
    for r in records {
        for k in r.metrics.keys() {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    let mut s = Section::new(title);
    s.header = std::iter::once("test".to_string())
        .chain(keys.iter().map(|k| {
            let unit = records
                .iter()
                .find_map(|r| r.measured(k))
                .map_or(String::new(), |m| format!(" ({})", m.unit));
            format!("{k}{unit}")
        }))
        .collect();
    for r in records {
        let cells = keys.iter().map(|k| {
            r.value(k).map_or("-".into(), |v| {
                if v.abs() >= 100.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.3}")
                }
            })
        });
        s.rows
            .push(std::iter::once(r.name.clone()).chain(cells).collect());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_of_each_column_is_marked() {
        let mut s = Section::new("t");
        s.header = vec!["".into(), "a".into(), "b".into()];
        s.rows = vec![
            vec!["0".into(), "16600 (100%)".into(), "9.5".into()],
            vec!["1".into(), "12000 (72%)".into(), "-".into()],
            vec!["2".into(), "16600 (98%)".into(), "3.25".into()],
        ];
        s.mark_column_best(false);
        assert_eq!(s.best, [(0, 1), (2, 1), (0, 2)]);
        s.best.clear();
        s.mark_column_best(true);
        assert_eq!(s.best, [(1, 1), (2, 2)]);
        assert!(s.is_best(2, 2) && !s.is_best(0, 2));
        // One row: nothing to compare.
        s.rows.truncate(1);
        s.best.clear();
        s.mark_column_best(false);
        assert!(s.best.is_empty());
    }
}
