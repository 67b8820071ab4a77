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

/// One row per record (its name) and one column per metric any of them
/// has, headed with its unit: the table of records no view of their own
/// shapes. Figures of 100 or more without decimals, smaller ones with three.
pub fn metrics_table(title: &str, records: &[&crate::results::Record]) -> Section {
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
                .find_map(|r| r.metrics.get(*k))
                .map_or(String::new(), |m| format!(" ({})", m.unit));
            format!("{k}{unit}")
        }))
        .collect();
    for r in records {
        let cells = keys.iter().map(|k| {
            r.metrics.get(*k).map_or("-".into(), |m| {
                if m.value.abs() >= 100.0 {
                    format!("{:.0}", m.value)
                } else {
                    format!("{:.3}", m.value)
                }
            })
        });
        s.rows
            .push(std::iter::once(r.name.clone()).chain(cells).collect());
    }
    s
}
