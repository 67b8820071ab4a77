//! Rendering records and models for people: tables now, more formats as
//! probes arrive. Nothing here measures anything.

pub mod autonuma;
pub mod compare;
pub mod html;
pub mod matrix;
pub mod mem;
pub mod model;
pub mod sched;
pub mod sections;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod topo_text;

/// Text from an input (a record name, a label, a host name, a CPU model, a
/// sysfs string) made safe for a terminal, a CSV cell or a Markdown table:
/// C0 and C1 control characters and DEL are shown as `\xNN` (`\x1b` for
/// ESC), so no input can move the cursor, ring the bell, retitle the window
/// or start a new table row.
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            use std::fmt::Write;
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Text from an input as a Markdown table cell or list item: [`escape`]d,
/// `|` escaped so it cannot end the cell, and `<`, `>`, `&` written as
/// entities so no HTML is injected where the Markdown is rendered.
pub fn markdown_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in escape(text).chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{escape, markdown_cell};

    #[test]
    fn markdown_cells_hold_no_html_and_no_cell_break() {
        assert_eq!(
            markdown_cell("a|b <script>&x\x1b"),
            r"a\|b &lt;script&gt;&amp;x\x1b"
        );
    }

    #[test]
    fn controls_become_visible() {
        assert_eq!(escape("plain name"), "plain name");
        assert_eq!(escape("a\x1b]0;pwned\x07b"), r"a\x1b]0;pwned\x07b");
        assert_eq!(escape("tab\tnew\nline\x7f"), r"tab\x09new\x0aline\x7f");
        assert_eq!(escape("c1\u{9b}2J"), r"c1\x9b2J");
        assert_eq!(escape("Gold 6248 \u{b5}s"), "Gold 6248 \u{b5}s");
    }
}
