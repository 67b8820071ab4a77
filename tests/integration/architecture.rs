//! The shape of the source, checked from the source: which layer may import
//! which, where probe and metric names are spelled, how long files and
//! functions grow. A change that breaks the shape fails here, naming the
//! file and line, instead of surfacing in a review months later.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Modules (first path segment under `crate::`) each layer must not use.
/// Lower layers know nothing of the ones above them; probes and analysis
/// do not know how they are shown; output does not know probes.
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("ids", ABOVE_GROUND),
    ("units", ABOVE_GROUND),
    ("stats", ABOVE_GROUND),
    ("text", ABOVE_GROUND),
    ("procfs", ABOVE_GROUND),
    ("sys", ABOVE_GROUND),
    // Exit codes and usage errors: any layer may raise them, so they know
    // none (a layer declares its own input errors to them).
    ("error", ABOVE_GROUND),
    (
        "topology",
        &[
            "placement",
            "memory",
            "output",
            "view",
            "probes",
            "analysis",
            "jobs",
            "cli",
        ],
    ),
    (
        "placement",
        &["output", "view", "probes", "analysis", "jobs", "cli"],
    ),
    (
        "memory",
        &["output", "view", "probes", "analysis", "jobs", "cli"],
    ),
    (
        "kernels",
        &["output", "view", "probes", "analysis", "jobs", "cli"],
    ),
    (
        "results",
        &["output", "view", "probes", "analysis", "jobs", "cli"],
    ),
    ("analysis", &["output", "probes", "jobs", "cli"]),
    // The Probe trait the shared jobs iterate lives in view, so analysis
    // may name it: view sits below analysis.
    ("view", &["output", "probes", "analysis", "jobs", "cli"]),
    ("probes", &["output", "jobs", "cli"]),
    ("output", &["probes", "jobs", "cli"]),
    ("jobs", &["cli"]),
];

const ABOVE_GROUND: &[&str] = &[
    "topology",
    "placement",
    "memory",
    "kernels",
    "results",
    "analysis",
    "view",
    "probes",
    "output",
    "jobs",
    "cli",
    "console",
    "progress",
    "error",
];

/// Files allowed past the line limit, each for a reason a reader accepts.
const LONG_FILES: &[(&str, &str)] = &[];

const MAX_FILE_LINES: usize = 650;
const MAX_FN_LINES: usize = 110;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn all_files() -> Vec<(String, String)> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The source without its unit tests: a file's `#[cfg(test)]` module runs
/// only under `cargo test` and may use anything. A `#[cfg(test)]` on a
/// single item (a helper the tests call) does not end the checked part.
fn without_tests(text: &str) -> &str {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut at = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            // `#[path = "x_tests.rs"]` may stand between the two.
            let declared = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.starts_with("#[path = "))
                .unwrap_or("");
            let declared = declared
                .strip_prefix("pub(crate) ")
                .or_else(|| declared.strip_prefix("pub "))
                .unwrap_or(declared);
            if declared.starts_with("mod ") {
                return &text[..at];
            }
        }
        at += line.len();
    }
    text
}

/// Every file under src but those of unit tests alone.
fn production_files() -> Vec<(String, String)> {
    let files = all_files();
    let tests = test_files(&files);
    files
        .into_iter()
        .filter(|(rel, _)| !tests.contains(rel))
        .collect()
}

/// Files that are entirely tests: modules declared under `#[cfg(test)]`
/// (`tests.rs`, property tests), as paths relative to src/.
fn test_files(files: &[(String, String)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (rel, text) in files {
        // Where a module's children live: `a/mod.rs` and `a.rs` both keep
        // them in `a/`, the crate roots in src/ itself.
        let dir = match rel.rsplit_once('/') {
            _ if rel == "lib.rs" || rel == "main.rs" => String::new(),
            Some((d, "mod.rs")) => format!("{d}/"),
            _ => format!("{}/", rel.trim_end_matches(".rs")),
        };
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, _) in lines
            .iter()
            .enumerate()
            .filter(|(_, l)| **l == "#[cfg(test)]")
        {
            // `#[path = "x_tests.rs"]` may stand between the two.
            let mut path = None;
            let mut j = i + 1;
            while let Some(p) = lines.get(j).and_then(|l| l.strip_prefix("#[path = \"")) {
                path = p.strip_suffix("\"]").map(str::to_string);
                j += 1;
            }
            let Some(declared) = lines.get(j) else {
                continue;
            };
            let declared = declared
                .strip_prefix("pub(crate) ")
                .or_else(|| declared.strip_prefix("pub "))
                .unwrap_or(declared);
            let Some(name) = declared
                .strip_prefix("mod ")
                .and_then(|m| m.strip_suffix(';'))
            else {
                continue;
            };
            match path {
                // A path attribute is relative to the declaring file's folder.
                Some(p) => {
                    let folder = rel
                        .rsplit_once('/')
                        .map_or(String::new(), |(d, _)| format!("{d}/"));
                    out.insert(format!("{folder}{p}"));
                }
                None => {
                    out.insert(format!("{dir}{name}.rs"));
                    out.insert(format!("{dir}{name}/mod.rs"));
                }
            }
        }
    }
    out
}

/// The layer a file belongs to: its first path segment.
fn layer(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap();
    first.strip_suffix(".rs").unwrap_or(first)
}

/// The first segment of every `crate::` path in `code`, with its line,
/// including each member of a `use crate::{a, b::c}` group.
fn crate_uses(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap();
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // The group may span lines: take the text up to its end.
                let from = code.lines().skip(n).collect::<Vec<_>>().join("\n");
                let start = from.find("crate::{").unwrap() + "crate::{".len();
                for name in top_level_names(&from[start..]) {
                    found.push((n + 1, name));
                }
                rest = group;
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push((n + 1, name));
            }
        }
    }
    found
}

/// The first identifier of each comma-separated member of a brace group
/// (`a, b::{c, d}, e}` gives a, b, e).
fn top_level_names(group: &str) -> Vec<String> {
    let mut members = vec![String::new()];
    let mut depth = 0;
    for c in group.chars() {
        match c {
            '}' if depth == 0 => break,
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => members.push(String::new()),
            c => members.last_mut().unwrap().push(c),
        }
    }
    members
        .iter()
        .map(|m| {
            m.trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

#[test]
fn no_layer_imports_one_above_it() {
    let mut wrong = Vec::new();
    for (rel, text) in &production_files() {
        let Some((_, banned)) = FORBIDDEN.iter().find(|(l, _)| *l == layer(rel)) else {
            continue;
        };
        for (line, name) in crate_uses(without_tests(text)) {
            if banned.contains(&name.as_str()) {
                wrong.push(format!("src/{rel}:{line} uses crate::{name}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering:\n{}",
        wrong.join("\n")
    );
}

/// What several probes share, under src/probes: every probe sits above
/// these, so none of them names a probe. `workload` is perf's process
/// engine that `mem` and `autonuma` run.
const SHARED_PROBE_MODULES: &[&str] = &["measure", "seats", "sizing", "team", "workload"];

/// The probe module each `crate::probes::X` or `super::X` that reaches
/// src/probes (`super::super::X` from a file a folder down) in `code`
/// names, with its line.
fn probe_uses(rel: &str, code: &str) -> Vec<(usize, String)> {
    // How many `super::` reach src/probes from this file's module.
    let ups = rel.matches('/').count() - usize::from(rel.ends_with("/mod.rs"));
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line.split("//").next().unwrap();
        while !rest.is_empty() {
            let name = if let Some(after) = rest.strip_prefix("crate::probes::") {
                rest = after;
                Some(ident(after))
            } else if rest.starts_with("super::") {
                let mut count = 0;
                while let Some(after) = rest.strip_prefix("super::") {
                    rest = after;
                    count += 1;
                }
                (count == ups).then(|| ident(rest))
            } else {
                let mut chars = rest.chars();
                chars.next();
                rest = chars.as_str();
                None
            };
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                found.push((n + 1, name));
            }
        }
    }
    found
}

#[test]
fn shared_probe_modules_name_no_probe() {
    let mut wrong = Vec::new();
    let files = all_files();
    let tests = test_files(&files);
    for (rel, text) in &files {
        let Some(under) = rel.strip_prefix("probes/") else {
            continue;
        };
        let module = under.split('/').next().unwrap().trim_end_matches(".rs");
        if tests.contains(rel) || !SHARED_PROBE_MODULES.contains(&module) {
            continue;
        }
        for (line, name) in probe_uses(rel, without_tests(text)) {
            if !SHARED_PROBE_MODULES.contains(&name.as_str()) && name != module {
                wrong.push(format!("src/{rel}:{line} uses probes::{name}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "shared probe modules naming a probe:\n{}",
        wrong.join("\n")
    );
}

/// Names that are also plain words where they appear (file, or "" for
/// everywhere), each with why it is not the record's name there.
const WORDS: &[(&str, &str)] = &[
    // `run` is the job's probe, and the word a report's run label, its
    // anchors and tables' first column use.
    ("", "run"),
    // The thesis' symbol in a message about the values given, not a
    // record's metric.
    ("analysis/model.rs", "alpha"),
    // topo's node table column: a node's memory tier id, not the probe.
    ("output/topo_tables.rs", "tier"),
    // The sweep summary's column: the curve's highest figure, not the
    // `peak` probe.
    ("probes/sweep/view.rs", "peak"),
];

/// Every `"..."` constant under src/results/names of the given modules.
fn names_in(modules: &[&str]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let dir = src().join("results/names");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        let mut inside = None::<String>;
        for line in text.lines() {
            let t = line.trim();
            // Visibility aside: a name's spelling is what is checked.
            let t = t
                .strip_prefix("pub(crate) ")
                .or_else(|| t.strip_prefix("pub "))
                .unwrap_or(t);
            if let Some(m) = t.strip_prefix("mod ").and_then(|r| r.strip_suffix(" {")) {
                inside = Some(m.to_string());
            } else if t == "}" {
                inside = None;
            } else if let Some(rest) = t.strip_prefix("const ") {
                let in_scope = inside.as_deref().is_some_and(|m| modules.contains(&m));
                if in_scope && let Some(v) = rest.split('"').nth(1) {
                    names.insert(v.to_string());
                }
            }
        }
    }
    names
}

#[test]
fn probe_and_metric_names_are_spelled_once() {
    let names = names_in(&["probe", "metric"]);
    assert!(names.contains("matrix") && names.contains("bandwidth_mb_s"));
    let mut wrong = Vec::new();
    let files = all_files();
    let tests = test_files(&files);
    for (rel, text) in &files {
        if rel.starts_with("results/names") || tests.contains(rel) {
            continue;
        }
        for (n, line) in without_tests(text).lines().enumerate() {
            let code = line.split("//").next().unwrap();
            for name in &names {
                if WORDS
                    .iter()
                    .any(|(f, w)| *w == name && (f.is_empty() || *f == rel))
                {
                    continue;
                }
                if code.contains(&format!("\"{name}\"")) {
                    wrong.push(format!("src/{rel}:{} spells \"{name}\"", n + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "use the constants of results::names:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_file_grows_past_the_limit() {
    let mut wrong = Vec::new();
    for (rel, text) in all_files() {
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES && !LONG_FILES.iter().any(|(f, _)| *f == rel) {
            wrong.push(format!("src/{rel}: {lines} lines"));
        }
    }
    assert!(
        wrong.is_empty(),
        "files over {MAX_FILE_LINES} lines:\n{}",
        wrong.join("\n")
    );
}

/// Functions as rustfmt lays them out: the `fn` line, then a closing `}`
/// at the same indentation.
#[test]
fn no_function_grows_past_the_limit() {
    let mut wrong = Vec::new();
    for (rel, text) in all_files() {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            let is_fn = t.starts_with("fn ")
                || t.starts_with("pub fn ")
                || t.starts_with("pub(crate) fn ")
                || t.starts_with("pub(super) fn ")
                || t.starts_with("pub(super) unsafe fn ")
                || t.starts_with("unsafe fn ")
                || t.starts_with("pub unsafe fn ")
                || t.starts_with("pub(crate) unsafe fn ");
            if !is_fn || t.ends_with(';') {
                continue;
            }
            let indent = &line[..line.len() - t.len()];
            let close = format!("{indent}}}");
            if let Some(len) = lines[i..].iter().position(|l| *l == close)
                && len + 1 > MAX_FN_LINES
            {
                wrong.push(format!("src/{rel}:{} {} lines", i + 1, len + 1));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_layer_check_sees_grouped_imports() {
    let code = "use crate::{a::B, c, d::{e, f}};\nlet x = crate::g::h();\n";
    let names: Vec<String> = crate_uses(code).into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["a", "c", "d", "g"]);
}

#[test]
fn the_probe_check_sees_probes_from_either_depth() {
    let code =
        "use super::tasks::X;\nuse super::super::mem::Y;\nlet z = crate::probes::autonuma::f();\n";
    let names =
        |rel| -> Vec<String> { probe_uses(rel, code).into_iter().map(|(_, n)| n).collect() };
    assert_eq!(names("probes/workload/a.rs"), ["mem", "autonuma"]);
    assert_eq!(names("probes/workload/mod.rs"), ["tasks", "autonuma"]);
    assert_eq!(names("probes/seats.rs"), ["tasks", "autonuma"]);
}

/// Production code outside `src/results/` that looks a record's param or
/// metric up by name in its map, not through the typed readers
/// (`src/results/reader.rs`).
fn map_lookups(rel: &str, code: &str) -> Vec<String> {
    const LOOKUPS: [&str; 3] = ["params.get(", "metrics.get(", "params.contains_key("];
    if rel.starts_with("results/") {
        return Vec::new();
    }
    code.lines()
        .enumerate()
        .filter(|(_, l)| LOOKUPS.iter().any(|k| l.contains(k)))
        .map(|(i, l)| format!("src/{rel}:{}: {}", i + 1, l.trim()))
        .collect()
}

/// Production code that searches a note's words (`note.contains(...)`,
/// `notes.iter().any(|n| n.starts_with(...))`): a fact code acts on
/// travels as a typed condition (`src/results/condition.rs`).
fn note_searches(rel: &str, code: &str) -> Vec<String> {
    const SEARCHES: [&str; 5] = ["find(", "rfind(", "contains(", "starts_with(", "ends_with("];
    code.lines()
        .enumerate()
        .filter(|(_, l)| {
            let on_note = SEARCHES.iter().any(|s| l.contains(&format!("note.{s}")));
            let in_notes = l.contains("notes")
                && SEARCHES.iter().any(|s| {
                    l.contains(&format!("|n| n.{s}")) || l.contains(&format!("|n| !n.{s}"))
                });
            on_note || in_notes
        })
        .map(|(i, l)| format!("src/{rel}:{}: {}", i + 1, l.trim()))
        .collect()
}

#[test]
fn records_are_read_through_their_readers_and_notes_are_never_parsed() {
    let mut wrong = Vec::new();
    for (rel, text) in &production_files() {
        let code = without_tests(text);
        wrong.extend(map_lookups(rel, code));
        wrong.extend(note_searches(rel, code));
    }
    assert!(
        wrong.is_empty(),
        "records read as maps, or notes searched for words:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reader_and_note_checks_see_what_they_look_for() {
    assert_eq!(
        map_lookups("probes/x/view.rs", "let v = r.params.get(k);").len(),
        1
    );
    assert!(map_lookups("results/reader.rs", "self.params.get(k)").is_empty());
    assert_eq!(
        note_searches("jobs/x.rs", "if note.contains(\"time limit\") {").len(),
        1
    );
    assert_eq!(
        note_searches(
            "jobs/x.rs",
            "r.notes.iter().any(|n| n.starts_with(\"FAILED\"))"
        )
        .len(),
        1
    );
    // Keeping a list of notes free of repeats is no search of their words.
    assert!(
        note_searches(
            "probes/x.rs",
            "notes.extend(note.filter(|n| !notes.contains(n)));"
        )
        .is_empty()
    );
}

/// The module path of a file under src: `probes/mem/view.rs` is
/// probes::mem::view, a folder's `mod.rs` the folder, lib.rs the crate.
fn module_of(rel: &str) -> Vec<String> {
    let path = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut segs: Vec<String> = path.split('/').map(str::to_string).collect();
    if matches!(
        segs.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segs.pop();
    }
    segs
}

/// Every path a `use` tree names, group members expanded:
/// `a::{b, c::{d, e}}` gives a::b, a::c::d, a::c::e.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap().trim();
        return vec![path.split("::").map(|s| s.trim().to_string()).collect()];
    };
    let prefix: Vec<String> = tree[..open]
        .trim_end_matches("::")
        .split("::")
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().to_string())
        .collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut members = vec![String::new()];
    let mut depth = 0;
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                members.push(String::new());
                continue;
            }
            _ => {}
        }
        members.last_mut().unwrap().push(c);
    }
    let mut out = Vec::new();
    for m in members.iter().filter(|m| !m.trim().is_empty()) {
        for tail in expand_use(m) {
            let mut p = prefix.clone();
            p.extend(tail.into_iter().filter(|s| s != "self"));
            out.push(p);
        }
    }
    out
}

/// The `use` trees of `code`, each whole even where it spans lines.
fn use_trees(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = &rest[..at];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let lead = before[line_start..].trim();
        rest = &rest[at + 4..];
        if !(lead.is_empty() || lead.starts_with("pub")) {
            continue;
        }
        if let Some(end) = rest.find(';') {
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// The files each file imports from, by its `use` lines (the files a
/// folder's `mod.rs` declares, and lib.rs, left out: a folder's own
/// interface is not a file it stands beside).
fn file_imports(files: &[(String, String)]) -> Vec<(String, Vec<String>)> {
    let leaf = |rel: &str| !(rel.ends_with("mod.rs") || rel == "lib.rs" || rel == "main.rs");
    let by_module: std::collections::BTreeMap<Vec<String>, &str> = files
        .iter()
        .map(|(rel, _)| (module_of(rel), rel.as_str()))
        .collect();
    let mut out = Vec::new();
    for (rel, text) in files.iter().filter(|(rel, _)| leaf(rel)) {
        let here = module_of(rel);
        let mut to = BTreeSet::new();
        for tree in use_trees(without_tests(text)) {
            for path in expand_use(&tree) {
                let mut base = match path.first().map(String::as_str) {
                    Some("crate") => Vec::new(),
                    Some("super") => here[..here.len().saturating_sub(1)].to_vec(),
                    Some("self") => here.clone(),
                    _ => continue,
                };
                for seg in &path[1..] {
                    if seg == "super" {
                        base.pop();
                    } else {
                        base.push(seg.clone());
                    }
                }
                // The longest prefix of the path that is a file's module.
                let target = (1..=base.len())
                    .rev()
                    .find_map(|n| by_module.get(&base[..n]).copied());
                if let Some(t) = target.filter(|t| leaf(t) && *t != rel.as_str()) {
                    to.insert(t.to_string());
                }
            }
        }
        out.push((rel.clone(), to.into_iter().collect()));
    }
    out
}

/// The groups of files that import one another round a circle.
fn circles(graph: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(f) = todo.pop() {
            for (_, to) in graph.iter().filter(|(r, _)| *r == f) {
                for t in to {
                    if seen.insert(t.clone()) {
                        todo.push(t.clone());
                    }
                }
            }
        }
        seen
    };
    let reaches: Vec<(String, BTreeSet<String>)> =
        graph.iter().map(|(f, _)| (f.clone(), reach(f))).collect();
    let mut groups: Vec<Vec<String>> = Vec::new();
    for (f, r) in &reaches {
        if !r.contains(f) || groups.iter().any(|g| g.contains(f)) {
            continue;
        }
        let group: Vec<String> = reaches
            .iter()
            .filter(|(g, gr)| r.contains(g) && gr.contains(f))
            .map(|(g, _)| g.clone())
            .collect();
        groups.push(group);
    }
    groups
}

#[test]
fn no_files_import_one_another_round_a_circle() {
    let found = circles(&file_imports(&production_files()));
    assert!(
        found.is_empty(),
        "files that import one another round a circle (move what they share into a file below them):\n{}",
        found
            .iter()
            .map(|g| g.join(" -> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_circle_check_sees_a_circle_through_groups_and_super() {
    let files = vec![
        ("a/mod.rs".to_string(), "mod x;\nmod y;\n".to_string()),
        ("a/x.rs".to_string(), "use super::y::{Y, Z};\n".to_string()),
        (
            "a/y.rs".to_string(),
            "use crate::{\n    a::x::X,\n    b,\n};\n".to_string(),
        ),
        ("a/z.rs".to_string(), "use super::x;\n".to_string()),
    ];
    let graph = file_imports(&files);
    let found = circles(&graph);
    assert_eq!(
        found,
        vec![vec!["a/x.rs".to_string(), "a/y.rs".to_string()]]
    );
    assert_eq!(
        expand_use("crate::a::{b::{c, d as e}, self}"),
        vec![
            vec!["crate", "a", "b", "c"],
            vec!["crate", "a", "b", "d"],
            vec!["crate", "a"]
        ]
    );
}
