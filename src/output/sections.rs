//! Titled tables and notes rendered as plain text, Markdown or LaTeX, so a
//! report is assembled once and written in any of the three.

use crate::view::table::{Align, Table};

use crate::view::Section;

pub(crate) fn text(sections: &[Section]) -> String {
    text_titled(None, sections)
}

/// [`text`] under a first line naming the whole.
pub(crate) fn text_titled(title: Option<&str>, sections: &[Section]) -> String {
    // Titles and lines carry names from results files (host, CPU model,
    // records): control characters are made visible.
    let mut out = title.map_or(String::new(), |t| format!("{}\n\n", super::escape(t)));
    for s in sections {
        out.push_str(&super::escape(&s.title));
        out.push('\n');
        if !s.header.is_empty() {
            let header: Vec<&str> = s.header.iter().map(String::as_str).collect();
            let mut align = vec![Align::Right; header.len()];
            align[0] = Align::Left;
            let mut t = Table::new(&header, &align);
            for r in &s.rows {
                t.row(r.clone());
            }
            out.push_str(&t.render());
        }
        for l in &s.lines {
            out.push_str("  ");
            out.push_str(&super::escape(l));
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

fn md_cell(s: &str) -> String {
    super::markdown_cell(s)
}

pub(crate) fn markdown(title: &str, sections: &[Section]) -> String {
    let mut out = format!("# {}\n\n", md_cell(title));
    for s in sections {
        // A section of notes alone has no title: no empty heading for it.
        if !s.title.trim().is_empty() {
            out.push_str(&format!("## {}\n\n", md_cell(&s.title)));
        }
        if !s.header.is_empty() {
            let cells = |r: &[String]| {
                let v: Vec<String> = r.iter().map(|c| md_cell(c)).collect();
                format!("| {} |\n", v.join(" | "))
            };
            out.push_str(&cells(&s.header));
            let mut rule = vec![":--".to_string()];
            rule.extend(std::iter::repeat_n("--:".to_string(), s.header.len() - 1));
            out.push_str(&format!("|{}|\n", rule.join("|")));
            for (i, r) in s.rows.iter().enumerate() {
                let v: Vec<String> = r
                    .iter()
                    .enumerate()
                    .map(|(j, c)| match md_cell(c) {
                        c if s.is_best(i, j) => format!("**{c}**"),
                        c => c,
                    })
                    .collect();
                out.push_str(&format!("| {} |\n", v.join(" | ")));
            }
            out.push('\n');
        }
        for l in &s.lines {
            out.push_str(&format!("- {}\n", md_cell(l)));
        }
        if !s.lines.is_empty() {
            out.push('\n');
        }
    }
    out
}

/// Escapes LaTeX's special characters.
pub(crate) fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in super::escape(s).chars() {
        match ch {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            _ => out.push(ch),
        }
    }
    out
}

/// A complete LaTeX document (article class, booktabs-free so it builds
/// with a minimal TeX installation).
pub(crate) fn latex(title: &str, sections: &[Section]) -> String {
    let mut out = String::from(
        "\\documentclass{article}\n\\usepackage[margin=2cm]{geometry}\n\\begin{document}\n",
    );
    out.push_str(&format!("\\section*{{{}}}\n\n", latex_escape(title)));
    for s in sections {
        if !s.title.trim().is_empty() {
            out.push_str(&format!("\\subsection*{{{}}}\n", latex_escape(&s.title)));
        }
        if !s.header.is_empty() {
            let spec = format!("l{}", "r".repeat(s.header.len() - 1));
            out.push_str(&format!(
                "\\begin{{tabular}}{{{spec}}}\n\\hline\n{} \\\\\n\\hline\n",
                s.header
                    .iter()
                    .map(|c| latex_escape(c))
                    .collect::<Vec<_>>()
                    .join(" & ")
            ));
            for (i, r) in s.rows.iter().enumerate() {
                out.push_str(&format!(
                    "{} \\\\\n",
                    r.iter()
                        .enumerate()
                        .map(|(j, c)| match latex_escape(c) {
                            c if s.is_best(i, j) => format!("\\textbf{{{c}}}"),
                            c => c,
                        })
                        .collect::<Vec<_>>()
                        .join(" & ")
                ));
            }
            out.push_str("\\hline\n\\end{tabular}\n\n");
        }
        if !s.lines.is_empty() {
            out.push_str("\\begin{itemize}\n");
            for l in &s.lines {
                out.push_str(&format!("\\item {}\n", latex_escape(l)));
            }
            out.push_str("\\end{itemize}\n");
        }
        out.push('\n');
    }
    out.push_str("\\end{document}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Section> {
        vec![Section {
            title: "bandwidth (MB/s)".into(),
            header: vec!["cpu\\mem".into(), "0".into(), "1".into()],
            rows: vec![vec!["0".into(), "9300".into(), "5600".into()]],
            lines: vec!["50% & more_than {x}".into()],
            best: vec![(0, 2)],
        }]
    }

    #[test]
    fn text_aligns_numbers_right() {
        let t = text(&sample());
        assert!(t.starts_with("bandwidth (MB/s)\n"));
        assert!(t.contains("9300"), "{t}");
        assert!(t.contains("  50% & more_than {x}\n"));
    }

    #[test]
    fn markdown_tables_have_a_rule_per_column() {
        let m = markdown("m", &sample());
        // The marked best cell in bold.
        assert!(m.contains("| cpu\\mem | 0 | 1 |\n|:--|--:|--:|\n| 0 | 9300 | **5600** |"));
        // Markdown's own escapes, not HTML's entities: a reader of the
        // Markdown itself sees the & as it is.
        assert!(m.contains("- 50% & more_than {x}\n"), "{m}");
    }

    #[test]
    fn a_section_of_notes_alone_gets_no_empty_heading() {
        let notes = Section {
            lines: vec!["one pass and 8 streams are both measured".into()],
            ..Default::default()
        };
        let m = markdown("m", std::slice::from_ref(&notes));
        assert_eq!(m, "# m\n\n- one pass and 8 streams are both measured\n\n");
        assert!(!latex("m", &[notes]).contains("\\subsection*{}"));
    }

    #[test]
    fn latex_escapes_and_balances() {
        let l = latex("a_b", &sample());
        assert!(l.contains("\\section*{a\\_b}"));
        assert!(l.contains("cpu\\textbackslash{}mem & 0 & 1"));
        assert!(l.contains("0 & 9300 & \\textbf{5600} \\\\"), "{l}");
        assert!(l.contains("50\\% \\& more\\_than \\{x\\}"));
        assert_eq!(l.matches("\\begin{").count(), l.matches("\\end{").count());
        assert!(l.trim_end().ends_with("\\end{document}"));
    }
}
