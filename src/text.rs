//! Text from outside the program (a path, a sysfs value, a host name) made
//! safe to print: shared by error messages, the topology reader and every
//! output format, so it sits below all of them.

use std::borrow::Cow;
use std::fmt::Write;

/// Text from an input (a record name, a label, a host name, a CPU model, a
/// sysfs string) made safe for a terminal, a CSV cell or a Markdown table:
/// C0 and C1 control characters and DEL are shown as `\xNN` (`\x1b` for
/// ESC), so no input can move the cursor, ring the bell, retitle the window
/// or start a new table row. Unicode's bidirectional controls are shown as
/// `\u{NNNN}`: in a terminal an override runs to the end of the line, so a
/// host name carrying one could reorder the figures printed after it.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else if is_bidi_control(c) {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// The explicit directional marks, embeddings, overrides and isolates
/// (Unicode's Bidi_Control property).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn controls_become_visible() {
        assert_eq!(escape("plain name"), "plain name");
        assert_eq!(escape("a\x1b]0;pwned\x07b"), r"a\x1b]0;pwned\x07b");
        assert_eq!(escape("tab\tnew\nline\x7f"), r"tab\x09new\x0aline\x7f");
        assert_eq!(escape("c1\u{9b}2J"), r"c1\x9b2J");
        assert_eq!(escape("Gold 6248 \u{b5}s"), "Gold 6248 \u{b5}s");
    }

    #[test]
    fn bidi_controls_become_visible_and_other_scripts_stay() {
        assert_eq!(escape("host\u{202e}1.2"), r"host\u{202e}1.2");
        assert_eq!(
            escape("a\u{2066}b\u{2069}\u{200f}"),
            r"a\u{2066}b\u{2069}\u{200f}"
        );
        assert_eq!(
            escape("\u{5e9}\u{5dc}\u{5d5}\u{5dd} \u{4e16}\u{754c}"),
            "\u{5e9}\u{5dc}\u{5d5}\u{5dd} \u{4e16}\u{754c}"
        );
    }
}
