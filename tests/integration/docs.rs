//! The commands the README and the guides in docs/ show still exist as
//! written: every `$ numabench COMMAND ...` line names a command this build
//! has, and every option on it is one that command's `--help` lists. A
//! renamed or removed option then fails here instead of rotting in the docs.
//! The commands that need no measurement and no file made elsewhere (`topo`
//! and `report` on files of this repository) are run, and every line of
//! their shown output without a figure in it (titles, headers, words) must
//! still be printed.

use crate::util::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// README.md and every Markdown file under docs/.
fn pages() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// (page:line, words) of every shown command: the line after `$ ` up to a
/// `#` comment or a pipe.
fn shown_commands() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.file_name().unwrap().to_string_lossy().to_string();
        for (i, line) in text.lines().enumerate() {
            let Some(cmd) = line.trim_start().strip_prefix("$ numabench ") else {
                continue;
            };
            let cmd = cmd.split(" #").next().unwrap();
            let cmd = cmd.split(" | ").next().unwrap();
            let words = cmd.split_whitespace().map(String::from).collect();
            out.push((format!("{name}:{}", i + 1), words));
        }
    }
    out
}

/// The options a shown command uses: long ones up to any `=`, short ones
/// one letter each (perf-style clusters such as `-zZ0q` included); values
/// that merely start with a dash (`-1`) are not options.
fn options(words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for w in words {
        if let Some(long) = w.strip_prefix("--") {
            if !long.is_empty() {
                out.push(format!("--{}", long.split('=').next().unwrap()));
            }
        } else if let Some(short) = w.strip_prefix('-') {
            if short.is_empty() || short.parse::<f64>().is_ok() {
                continue;
            }
            out.extend(short.chars().map(|c| format!("-{c}")));
        }
    }
    out
}

/// Whether `help` lists `flag` as an option (not merely mentions it).
fn lists(help: &str, flag: &str) -> bool {
    help.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with(&format!("{flag},"))
            || l.starts_with(&format!("{flag} "))
            || l == flag
            || l.starts_with(&format!("{flag}="))
            || l.contains(&format!(", {flag} "))
            || l.contains(&format!(", {flag}\n"))
            || l.ends_with(&format!(", {flag}"))
            || l.contains(&format!(", {flag}="))
    })
}

/// How many words name the command: 2 where the first has subcommands
/// and the second is one of them (`fleet report`), else 1.
fn nested_command(words: &[String]) -> usize {
    let Some(second) = words.get(1).filter(|w| !w.starts_with('-')) else {
        return 1;
    };
    let out = numabench()
        .args([words[0].as_str(), second.as_str(), "--help"])
        .output()
        .unwrap();
    let usage = format!("Usage: numabench {} {second}", words[0]);
    if out.status.success() && String::from_utf8_lossy(&out.stdout).contains(&usage) {
        2
    } else {
        1
    }
}

#[test]
fn every_command_shown_in_the_docs_exists_with_its_options() {
    let shown = shown_commands();
    assert!(shown.len() >= 20, "only {} commands found", shown.len());
    let mut helps: BTreeMap<String, String> = BTreeMap::new();
    let mut wrong = Vec::new();
    for (at, words) in &shown {
        // A command with subcommands (`fleet report`) is named by both words.
        let nested = nested_command(words);
        let sub = &words[..nested].join(" ");
        let help = helps.entry(sub.clone()).or_insert_with(|| {
            let out = numabench()
                .args(&words[..nested])
                .arg("--help")
                .output()
                .unwrap();
            if out.status.success() {
                String::from_utf8_lossy(&out.stdout).to_string()
            } else {
                String::new()
            }
        });
        if help.is_empty() {
            wrong.push(format!("{at}: no command '{sub}'"));
            continue;
        }
        for flag in options(&words[nested..]) {
            if !lists(help, &flag) {
                wrong.push(format!("{at}: numabench {sub} has no option {flag}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// (page:line, words, shown output) of every command in a fenced block,
/// its output being the lines after it up to the next `$ ` line or the end
/// of the block.
fn shown_with_output() -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.file_name().unwrap().to_string_lossy().to_string();
        let mut in_block = false;
        let mut current: Option<(String, Vec<String>, Vec<String>)> = None;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_block = !in_block;
                out.extend(current.take());
                continue;
            }
            if !in_block {
                continue;
            }
            if let Some(cmd) = line.strip_prefix("$ ") {
                out.extend(current.take());
                if let Some(cmd) = cmd.strip_prefix("numabench ") {
                    let cmd = cmd.split(" #").next().unwrap();
                    let words = cmd.split_whitespace().map(String::from).collect();
                    current = Some((format!("{name}:{}", i + 1), words, Vec::new()));
                }
            } else if let Some(c) = current.as_mut() {
                c.2.push(line.to_string());
            }
        }
    }
    out
}

fn squeeze(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn commands_that_need_no_measurement_still_print_what_the_docs_show() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut ran = 0;
    let mut wrong = Vec::new();
    for (at, words, shown) in shown_with_output() {
        if !["topo", "report"].contains(&words[0].as_str()) {
            continue;
        }
        // `| head -N` keeps the first N lines.
        let (args, head) = match words.iter().position(|w| w == "|") {
            Some(p) => (
                words[..p].to_vec(),
                words
                    .get(p + 2)
                    .and_then(|n| n.trim_start_matches('-').parse().ok()),
            ),
            None => (words.clone(), None),
        };
        // A path that is not in this repository was made elsewhere.
        let missing = args.iter().enumerate().any(|(i, a)| {
            i > 0
                && !a.starts_with('-')
                && args[i - 1] != "--format"
                && !root.join(a).exists()
                && !a.starts_with("/no/")
        });
        if missing || shown.is_empty() {
            continue;
        }
        let out = numabench().current_dir(&root).args(&args).output().unwrap();
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<String> = printed
            .lines()
            .take(head.unwrap_or(usize::MAX))
            .map(squeeze)
            .collect();
        ran += 1;
        for l in shown.iter().filter(|l| !l.trim().is_empty()) {
            if l.chars().any(|c| c.is_ascii_digit()) {
                continue;
            }
            if !lines.contains(&squeeze(l)) {
                wrong.push(format!("{at}: no longer prints '{}'", l.trim()));
            }
        }
    }
    assert!(ran >= 3, "only {ran} commands run");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_option_reader_finds_what_a_line_uses() {
    let words: Vec<String> = "-p 2 -t 1 -P 64 -zZ0q --thp -1 --tolerance=5 --save x"
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(
        options(&words),
        [
            "-p",
            "-t",
            "-P",
            "-z",
            "-Z",
            "-0",
            "-q",
            "--thp",
            "--tolerance",
            "--save"
        ]
    );
    let help = "  -p, --nr_proc <N>\n      --thp <N>\n  -0, --data_zero\n";
    assert!(lists(help, "-p") && lists(help, "--thp") && lists(help, "-0"));
    assert!(!lists(help, "-q") && !lists(help, "--nr"));
}

#[test]
fn every_guide_that_help_names_exists() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let commands = [
        "run", "topo", "gather", "place", "sweep", "matrix", "model", "pcie", "mem", "autonuma",
        "sched", "compare", "report", "fleet", "peak", "latency", "mlp", "loaded", "c2c", "tier",
    ];
    for c in commands {
        let out = numabench().args([c, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout).to_string();
        let guide = help
            .split("Guide: ")
            .nth(1)
            .and_then(|g| g.split_whitespace().next())
            .unwrap_or_else(|| panic!("numabench {c} --help names no guide"));
        assert!(root.join(guide).is_file(), "{c}: {guide} does not exist");
    }
}

/// The generator's page from the CSVs of `root`'s results folder.
fn peers_page(results: &std::path::Path) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    String::from_utf8(succeeded(
        assert_cmd::Command::new(root.join("scripts/peers-table"))
            .arg("--results")
            .arg(results)
            .args(["--out", "-"]),
    ))
    .unwrap()
}

#[test]
fn docs_peers_md_is_what_the_results_csvs_give() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let on_disk = std::fs::read_to_string(root.join("docs/peers.md")).unwrap();
    assert!(
        on_disk == peers_page(&root.join("bench/results")),
        "docs/peers.md differs from bench/results/*.csv: run scripts/peers-table"
    );
}

#[test]
fn the_peers_table_takes_the_median_and_range_of_each_test() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("multichase.csv"),
        "peer,test,numabench,peer_figure,ratio,unit,date,host,rounds,command\n\
         multichase,page-local,1,1,1.030,ns,,\"Host A, 2-CPU VM\",9,x\n\
         multichase,page-local,1,1,0.990,ns,,\"Host B, 16-CPU\",9,x\n\
         multichase,page-local,1,1,1.010,ns,,\"Host A, 2-CPU VM\",9,x\n\
         multichase,full-random,1,1,1.100,ns,,\"Host A, 2-CPU VM\",9,x\n\
         multichase,full-random,1,1,0.900,ns,,\"Host A, 2-CPU VM\",9,x\n",
    )
    .unwrap();
    let page = peers_page(tmp.path());
    assert!(page.starts_with("<!-- Generated by scripts/peers-table"));
    assert!(
        page.contains("| page-local | ns | 3 | 1.010 | 0.990-1.030 | 2 |"),
        "{page}"
    );
    assert!(
        page.contains("| full-random | ns | 2 | 1.000 | 0.900-1.100 | 1 |"),
        "{page}"
    );
    // Hosts with the most rows first.
    let a = page.find("- Host A, 2-CPU VM").unwrap();
    let b = page.find("- Host B, 16-CPU").unwrap();
    assert!(a < b, "{page}");
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let dir = page.parent().unwrap();
        for (i, _) in text.match_indices("](") {
            let target = text[i + 2..].split(')').next().unwrap();
            let path = target.split('#').next().unwrap();
            if path.is_empty() || path.contains("://") || path.starts_with("mailto:") {
                continue;
            }
            if !dir.join(path).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_readme_and_every_guide_stay_short() {
    let mut long = Vec::new();
    for page in pages() {
        let lines = std::fs::read_to_string(&page).unwrap().lines().count();
        let most = if page.ends_with("README.md") {
            200
        } else {
            300
        };
        if lines >= most {
            long.push(format!(
                "{}: {lines} lines (under {most} wanted)",
                page.display()
            ));
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}
