//! Every results document under a folder, whatever put it there (`fleet
//! submit`, ssh, a copy by hand), each reduced to a fleet row as soon as it
//! is read: the memory a scan takes grows with the machines, a few hundred
//! bytes each, not with the documents' size.

use crate::analysis::fleet::{Machine, Spec, figures};
use crate::error::usage;
use crate::probes::REGISTRY;
use crate::results::LeanDocument;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Folders deeper than this below the scanned one are not entered.
const MAX_DEPTH: usize = 8;
/// Most files a scan looks at.
const MAX_FILES: usize = 1_000_000;

/// What a folder held.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// One per machine: its newest complete document, else its newest.
    pub machines: Vec<Machine>,
    /// JSON files that are no usable results document, with why.
    pub skipped: Vec<(String, String)>,
    /// Older documents of a machine that has a newer one.
    pub superseded: Vec<String>,
    /// The key figures each machine has, in order.
    pub specs: Vec<Spec>,
}

/// The `.json` files under `dir`, hidden folders (`.fleet`, where submit
/// keeps its logs) and symbolic links left out so no link loops.
fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = todo.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if depth == 0 => {
                return Err(usage(format!("cannot read {}: {e}", d.display())));
            }
            Err(_) => continue,
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let hidden = name.to_string_lossy().starts_with('.');
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() && !hidden && depth < MAX_DEPTH {
                todo.push((e.path(), depth + 1));
            } else if t.is_file() && e.path().extension().is_some_and(|x| x == "json") {
                out.push(e.path());
                if out.len() > MAX_FILES {
                    return Err(usage(format!(
                        "{} holds more than {MAX_FILES} JSON files",
                        dir.display()
                    )));
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

type Read = Result<Machine, (String, String)>;

fn read_one(path: &Path) -> Read {
    let shown = path.display().to_string();
    match LeanDocument::load(path) {
        Ok(doc) => Ok(figures::read(&doc, &shown, REGISTRY)),
        Err(e) => {
            // The file's own reason, without the path the list repeats.
            let why = e.chain().last().map_or_else(String::new, |c| c.to_string());
            Err((shown, crate::text::escape(&why).into_owned()))
        }
    }
}

/// Reads `paths` on a few threads: parsing is what a large fleet's report
/// costs, and each document is read by one thread alone. A part whose
/// thread the system would not start (a task limit) is read on this one.
fn read_all(paths: &[PathBuf]) -> Vec<Read> {
    // Under a memory limit, one reader: each thread that allocates costs
    // glibc a 64 MiB arena of address space, which `ulimit -v` counts, and
    // which documents then fail to read depends on which thread got there
    // first.
    let threads = if crate::topology::process_memory_limit().is_some() {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8)
    }
    .min(paths.len().max(1));
    let chunk = paths.len().div_ceil(threads).max(1);
    let read_part = |part: &[PathBuf]| part.iter().map(|p| read_one(p)).collect::<Vec<_>>();
    std::thread::scope(|s| {
        let parts: Vec<_> = paths
            .chunks(chunk)
            .map(|part| {
                std::thread::Builder::new()
                    .spawn_scoped(s, move || read_part(part))
                    .map_err(|_| part)
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| match h {
                Ok(h) => h.join().unwrap_or_default(),
                Err(part) => read_part(part),
            })
            .collect()
    })
}

/// The files a scan of `dir` reads, for checking an output path against
/// them before any is read.
pub(crate) fn inputs(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Err(usage(format!(
            "{}: not a folder (give the folder holding the results documents)",
            dir.display()
        )));
    }
    files(dir)
}

/// Every results document under `dir`.
pub(crate) fn scan(dir: &Path) -> Result<Scan> {
    Ok(read(&inputs(dir)?))
}

/// The results documents among `paths` (from [`inputs`]).
pub(crate) fn read(paths: &[PathBuf]) -> Scan {
    let mut out = Scan {
        specs: crate::analysis::fleet::specs(REGISTRY),
        ..Scan::default()
    };
    let mut newest: BTreeMap<String, Machine> = BTreeMap::new();
    for read in read_all(paths) {
        let m = match read {
            Ok(m) => m,
            Err(skip) => {
                out.skipped.push(skip);
                continue;
            }
        };
        // Complete before partial, then the latest start.
        let rank = |m: &Machine| (m.complete, m.started.clone());
        match newest.get(&m.name) {
            Some(old) if rank(old) >= rank(&m) => out.superseded.push(m.source),
            Some(_) => {
                let old = newest.insert(m.name.clone(), m);
                out.superseded.extend(old.map(|o| o.source));
            }
            None => {
                newest.insert(m.name.clone(), m);
            }
        }
    }
    out.machines = newest.into_values().collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Document;

    fn save(dir: &Path, rel: &str, doc: &Document) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        doc.save(&p).unwrap();
    }

    fn doc(node: &str, started: &str, complete: bool) -> Document {
        let mut d = Document::new(&crate::topology::fixture("local-1node"));
        d.host.batch_node = Some(node.into());
        d.started = started.into();
        d.complete = complete;
        d
    }

    #[test]
    fn one_machine_per_name_the_newest_complete_document() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        save(
            d,
            "n1/a/results.json",
            &doc("n1", "2026-01-01T00:00:00Z", true),
        );
        save(
            d,
            "n1/b/results.json",
            &doc("n1", "2026-02-01T00:00:00Z", true),
        );
        save(
            d,
            "n1/c/results.json",
            &doc("n1", "2026-03-01T00:00:00Z", false),
        );
        save(d, "n2.json", &doc("n2", "2026-01-01T00:00:00Z", true));
        save(
            d,
            ".fleet/x.json",
            &doc("hidden", "2026-01-01T00:00:00Z", true),
        );
        std::fs::write(d.join("other.json"), "{\"a\": 1}").unwrap();
        std::fs::write(d.join("notes.txt"), "not json").unwrap();
        let s = scan(d).unwrap();
        let names: Vec<&str> = s.machines.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2"]);
        assert!(s.machines[0].source.ends_with("n1/b/results.json"));
        assert_eq!(s.superseded.len(), 2);
        assert_eq!(s.skipped.len(), 1);
        assert!(s.skipped[0].1.contains("numabench"), "{:?}", s.skipped);
    }

    #[test]
    fn a_missing_folder_is_bad_input() {
        let e = scan(Path::new("/nonexistent/fleet")).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
    }
}
