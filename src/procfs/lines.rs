//! Line-by-line parsing of `/proc` files (`maps`, `numa_maps`), with errors
//! that name the file, the line and what was wrong with it.

use std::io;

/// A line that does not have the shape its file should have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file} line {line}: {reason}: '{text}'")]
pub(crate) struct ParseError {
    /// The kind of file, e.g. `numa_maps`.
    pub file: &'static str,
    /// 1-based line number.
    pub line: usize,
    pub reason: String,
    /// The line, cut to 200 characters.
    pub text: String,
}

/// Parses every non-blank line of `text` with `parse_line`; the first line
/// it rejects is the error.
pub(crate) fn parse_lines<T>(
    file: &'static str,
    text: &str,
    parse_line: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, ParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            parse_line(l).map_err(|reason| ParseError {
                file,
                line: i + 1,
                reason,
                text: l.chars().take(200).collect(),
            })
        })
        .collect()
}

/// Reads `path` and parses it with `parse`; a file that cannot be read
/// keeps its error kind, a malformed one is `InvalidData`, and both name
/// the path.
pub(crate) fn read_parsed<T>(
    path: &str,
    parse: impl Fn(&str) -> Result<Vec<T>, ParseError>,
) -> io::Result<Vec<T>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| io::Error::new(e.kind(), format!("reading {path}: {e}")))?;
    parse(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{path}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(l: &str) -> Result<u32, String> {
        l.trim().parse().map_err(|_| "not a number".to_string())
    }

    #[test]
    fn blank_lines_are_skipped_and_errors_name_the_line() {
        assert_eq!(parse_lines("f", "1\n\n 2\n", number).unwrap(), [1, 2]);
        let e = parse_lines("f", "1\n\nx y\n", number).unwrap_err();
        assert_eq!((e.line, e.text.as_str()), (3, "x y"));
        assert_eq!(e.to_string(), "f line 3: not a number: 'x y'");
        let long = "z".repeat(300);
        let e = parse_lines("f", &long, number).unwrap_err();
        assert_eq!(e.text.len(), 200);
    }

    #[test]
    fn read_errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("absent");
        let e =
            read_parsed(missing.to_str().unwrap(), |t| parse_lines("f", t, number)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("absent"), "{e}");
        let bad = dir.path().join("bad");
        std::fs::write(&bad, "7\nseven\n").unwrap();
        let e = read_parsed(bad.to_str().unwrap(), |t| parse_lines("f", t, number)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("f line 2"), "{e}");
    }
}
