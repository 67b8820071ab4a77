//! Output that is a few titled tables rather than a results document (the
//! topology, a placement check, a comparison): those tables in any format.

use super::render::Format;
use super::sections;
use crate::view::{Csv, Section};
use anyhow::Result;

/// `sections` under `title` in `format`. JSON has no general form here:
/// each command prints its own model as JSON, so it is refused.
pub(crate) fn render(title: &str, sections: &[Section], format: Format) -> Result<String> {
    Ok(match format {
        Format::Text => sections::text_titled(Some(title), sections),
        Format::Markdown => sections::markdown(title, sections),
        Format::Latex => sections::latex(title, sections),
        Format::Html => super::html::page(title, sections),
        Format::Csv => super::render::csv_text(&csv(sections))?,
        Format::Json => anyhow::bail!("tables have no JSON form of their own"),
    })
}

/// One table as it is; several as one long table (`table,row,column,value`,
/// the row named by its first cell), so every cell keeps its place.
fn csv(sections: &[Section]) -> Csv {
    let tables: Vec<&Section> = sections.iter().filter(|s| !s.header.is_empty()).collect();
    let notes = sections
        .iter()
        .flat_map(|s| s.lines.iter().cloned())
        .collect();
    if let [one] = tables[..] {
        return Csv {
            header: one.header.clone(),
            rows: one.rows.clone(),
            notes,
        };
    }
    let mut rows = Vec::new();
    for s in tables {
        for r in &s.rows {
            let key = r.first().cloned().unwrap_or_default();
            for (h, v) in s.header.iter().zip(r).skip(1) {
                rows.push(vec![s.title.clone(), key.clone(), h.clone(), v.clone()]);
            }
        }
    }
    Csv {
        header: ["table", "row", "column", "value"]
            .map(String::from)
            .to_vec(),
        rows,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(title: &str, rows: &[[&str; 2]]) -> Section {
        let mut s = Section::new(title);
        s.header = vec!["node".into(), "free".into()];
        s.rows = rows
            .iter()
            .map(|r| r.iter().map(|c| c.to_string()).collect())
            .collect();
        s
    }

    #[test]
    fn one_table_is_plain_csv_and_several_are_long() {
        let a = section("nodes", &[["0", "1 GiB"], ["1", "2 GiB"]]);
        let mut b = section("distances", &[["0", "10"]]);
        b.lines.push("a, note".into());
        assert_eq!(
            render("t", std::slice::from_ref(&a), Format::Csv).unwrap(),
            "node,free\n0,1 GiB\n1,2 GiB\n"
        );
        assert_eq!(
            render("t", &[a, b], Format::Csv).unwrap(),
            "table,row,column,value\nnodes,0,free,1 GiB\nnodes,1,free,2 GiB\ndistances,0,free,10\n# note: a, note\n"
        );
    }

    #[test]
    fn every_format_but_json_draws_the_tables() {
        let a = section("nodes", &[["0", "1 GiB"]]);
        for f in [Format::Text, Format::Markdown, Format::Latex, Format::Html] {
            let out = render("topology", std::slice::from_ref(&a), f).unwrap();
            assert!(
                out.contains("1 GiB") && out.contains("nodes"),
                "{f:?}: {out}"
            );
        }
        assert!(render("t", &[a], Format::Json).is_err());
    }
}
