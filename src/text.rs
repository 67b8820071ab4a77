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

/// `value` as pretty JSON with every character [`escape`] would escape
/// written as a `\uNNNN` escape. serde_json escapes C0 controls only, so
/// DEL, the C1 controls (U+009B is a one-character CSI to many terminals)
/// and bidirectional controls from an input would otherwise reach a
/// terminal raw through `--json`. Outside its strings JSON holds only
/// ASCII, so every such character of the text is inside a string, where
/// the escape means the same character: the document reads back unchanged.
pub(crate) fn json_pretty<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let text = serde_json::to_string_pretty(value)?;
    if !text.chars().any(needs_escape) {
        return Ok(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        // JSON's own whitespace between tokens is a control too.
        if needs_escape(c) && !matches!(c, '\n' | '\t' | '\r') {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// The explicit directional marks, embeddings, overrides and isolates
/// (Unicode's Bidi_Control property).
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::{escape, json_pretty};

    #[test]
    fn json_escapes_del_c1_and_bidi_controls_and_reads_back_the_same() {
        let name = "a\u{7f}b\u{9b}31mc\u{202e}d\u{1b}e \u{05d0} \u{4e2d}";
        let v = serde_json::json!({ "host": name, "list": [1, 2] });
        let text = json_pretty(&v).unwrap();
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' || super::is_bidi_control(c)),
            "{text:?}"
        );
        for escaped in ["\\u007f", "\\u009b", "\\u202e", "\\u001b"] {
            assert!(text.contains(escaped), "{escaped} missing: {text}");
        }
        // Other scripts stay as they are.
        assert!(text.contains("\u{05d0}") && text.contains("\u{4e2d}"));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        assert_eq!(
            json_pretty(&[1]).unwrap(),
            serde_json::to_string_pretty(&[1]).unwrap()
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
