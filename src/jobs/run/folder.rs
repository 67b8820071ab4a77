//! The results folder of one run: a new folder per run, named after the
//! host and the start, and plain file names inside it.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// `s` with every character but ASCII letters, digits, `-` and `.` made
/// `_`, so a host or record name becomes part of one plain file name: no
/// `/`, no space, nothing a shell would read specially.
pub(super) fn file_name_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A new folder under `dir` named after the host and `started`, with a
/// numeric suffix if one of that name exists (created atomically, so two
/// runs never share one).
pub(super) fn new_folder(dir: &Path, host: &str, started: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let stamp: String = started
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect::<String>()
        .replace('T', "-");
    let host = file_name_safe(host);
    for n in 1..1000 {
        let name = if n == 1 {
            format!("{host}-{stamp}")
        } else {
            format!("{host}-{stamp}-{n}")
        };
        let path = dir.join(name);
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    anyhow::bail!(
        "too many results folders for {host}-{stamp} in {}",
        dir.display()
    )
}

/// A series as CSV: the x column, then one column per line.
pub(super) fn series_csv(s: &crate::results::Series) -> Result<String> {
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    let mut header = vec![format!("{} ({})", s.x_label, s.x_unit)];
    header.extend(
        s.lines
            .iter()
            .map(|l| format!("{} {} ({})", l.label, s.y_label, s.y_unit)),
    );
    w.write_record(&header)?;
    for (i, x) in s.x.iter().enumerate() {
        let mut row = vec![x.to_string()];
        row.extend(
            s.lines
                .iter()
                .map(|l| l.y.get(i).map_or_else(String::new, |y| y.to_string())),
        );
        w.write_record(&row)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

#[cfg(test)]
mod tests {
    use super::{file_name_safe, new_folder, series_csv};

    #[test]
    fn names_become_plain_file_names() {
        assert_eq!(file_name_safe("node-1.lab"), "node-1.lab");
        assert_eq!(file_name_safe("a/../b c$(x)"), "a_.._b_c__x_");
        assert_eq!(file_name_safe("numa02 run 1"), "numa02_run_1");
    }

    #[test]
    fn folders_are_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = new_folder(dir.path(), "host/x", "2026-11-22T19:12:42Z").unwrap();
        let b = new_folder(dir.path(), "host/x", "2026-11-22T19:12:42Z").unwrap();
        assert_eq!(a.file_name().unwrap(), "host_x-20261122-191242");
        assert_eq!(b.file_name().unwrap(), "host_x-20261122-191242-2");
    }

    #[test]
    fn a_series_becomes_one_column_per_line() {
        let s = crate::results::Series {
            name: "memory".into(),
            x_label: "time".into(),
            x_unit: "s".into(),
            y_label: "memory".into(),
            y_unit: "MiB".into(),
            x: vec![0.0, 0.5],
            lines: vec![
                crate::results::Line {
                    label: "node 0".into(),
                    y: vec![256.0, 128.0],
                },
                crate::results::Line {
                    label: "node, 1".into(),
                    y: vec![0.0],
                },
            ],
        };
        assert_eq!(
            series_csv(&s).unwrap(),
            "time (s),node 0 memory (MiB),\"node, 1 memory (MiB)\"\n0,256,0\n0.5,128,\n"
        );
    }
}
