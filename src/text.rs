//! Text from outside the program (a path, a sysfs value, a host name) made
//! safe to print: shared by error messages, the topology reader and every
//! output format, so it sits below all of them.

use std::borrow::Cow;
use std::fmt::Write;

/// Text from an input (a record name, a label, a host name, a CPU model, a
/// sysfs string) made safe for a terminal, a CSV cell or a Markdown table:
/// C0 and C1 control characters and DEL are shown as `\xNN` (`\x1b` for
/// ESC), so no input can move the cursor, ring the bell, retitle the window
/// or start a new table row.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
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
}
