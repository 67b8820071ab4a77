//! What the command line promises across every command: one meaning per
//! short flag, short `-h`, examples in `--help` that parse.

use super::Cli;
use clap::Parser;
use std::collections::BTreeMap;

/// Every command and nested command with the words that start it, `mem`
/// (perf's own short options) and hidden ones aside.
fn commands() -> Vec<(Vec<String>, clap::Command)> {
    fn walk(words: Vec<String>, cmd: &clap::Command, out: &mut Vec<(Vec<String>, clap::Command)>) {
        out.push((words.clone(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" || sub.get_name() == "mem" {
                continue;
            }
            let mut w = words.clone();
            w.push(sub.get_name().to_string());
            walk(w, sub, out);
        }
    }
    let mut cmd = super::help_text::command();
    cmd.build();
    let mut out = Vec::new();
    walk(Vec::new(), &cmd, &mut out);
    out
}

#[test]
fn a_short_flag_means_one_thing_in_every_command_but_mem() {
    let mut meaning: BTreeMap<char, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (words, cmd) in commands() {
        for arg in cmd.get_arguments() {
            if let Some(short) = arg.get_short() {
                let long = arg.get_long().unwrap_or("(none)").to_string();
                meaning
                    .entry(short)
                    .or_default()
                    .entry(long)
                    .or_default()
                    .push(words.join(" "));
            }
        }
    }
    let shifting: Vec<String> = meaning
        .iter()
        .filter(|(_, longs)| longs.len() > 1)
        .map(|(s, longs)| format!("-{s}: {longs:?}"))
        .collect();
    assert!(shifting.is_empty(), "{}", shifting.join("\n"));
    // The letters the measuring commands share keep their meaning.
    for (short, long) in [
        ('s', "size"),
        ('t', "time-limit"),
        ('r', "tries"),
        ('o', "output"),
    ] {
        assert!(meaning[&short].contains_key(long), "-{short}");
    }
    assert!(meaning[&'s'].values().next().unwrap().len() >= 7);
}

/// Every help string clap shows with `-h`, named for the failure message.
fn short_helps(cmd: &clap::Command) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| {
            let name = a
                .get_long()
                .map_or(a.get_id().to_string(), |l| format!("--{l}"));
            a.get_help().map(|h| (name, h.to_string()))
        })
        .collect();
    out.extend(
        cmd.get_subcommands()
            .filter(|s| !s.is_hide_set())
            .filter_map(|s| {
                s.get_about()
                    .map(|a| (s.get_name().to_string(), a.to_string()))
            }),
    );
    out
}

#[test]
fn short_help_is_one_short_line_per_option_and_command() {
    for (words, cmd) in commands() {
        for (name, help) in short_helps(&cmd) {
            assert!(
                help.len() <= 100 && !help.contains('\n'),
                "numabench {} -h, {name}: {} characters: {help}",
                words.join(" "),
                help.len()
            );
        }
    }
    // -h is the summary, --help the whole text; the top level's -h lists
    // the commands, its --help adds the examples.
    let top = super::help_text::command();
    let (short, long) = (
        top.clone().render_help().to_string(),
        top.clone().render_long_help().to_string(),
    );
    assert!(
        !short.contains("Examples:") && long.contains("Examples:"),
        "{short}"
    );
    for words in [
        &["run"][..],
        &["sweep"],
        &["matrix"],
        &["latency"],
        &["mem"],
    ] {
        let mut cmd = words
            .iter()
            .fold(top.clone(), |c, w| c.find_subcommand(w).unwrap().clone());
        let (short, long) = (
            cmd.render_help().to_string(),
            cmd.render_long_help().to_string(),
        );
        assert!(
            short.len() * 10 < long.len() * 7,
            "numabench {words:?}: -h {} characters, --help {}",
            short.len(),
            long.len()
        );
    }
}

#[test]
fn every_command_shows_two_to_five_examples_that_parse() {
    for (words, cmd) in commands() {
        let help = cmd
            .get_after_long_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        let examples = super::examples::of(&help);
        assert!(
            (2..=5).contains(&examples.len()) || (words.len() == 2 && !examples.is_empty()),
            "numabench {} --help: {} examples",
            words.join(" "),
            examples.len()
        );
        for (i, e) in examples.into_iter().enumerate() {
            assert!(!e.comment.is_empty() && e.comment.len() <= 100, "{e:?}");
            assert!(e.line.starts_with("numabench "), "{e:?}");
            let args = super::examples::words(e.line);
            // A command's first example runs that command; later ones
            // may show what goes with it (gather, then topo).
            assert!(
                i > 0 || args.starts_with(&words.iter().map(String::as_str).collect::<Vec<_>>()),
                "numabench {}: {e:?}",
                words.join(" ")
            );
            let parsed = Cli::try_parse_from(std::iter::once("numabench").chain(args));
            assert!(parsed.is_ok(), "{}: {}", e.line, parsed.unwrap_err());
        }
    }
}

#[test]
fn examples_are_read_back_from_the_help_text() {
    let text = "Examples:\n  # One\n  numabench a -x 1\n  # Two\n  numabench b > f\n\nGuide: g";
    let got = super::examples::of(text);
    assert_eq!(got.len(), 2);
    assert_eq!((got[1].comment, got[1].line), ("Two", "numabench b > f"));
    assert_eq!(super::examples::words(got[1].line), ["b"]);
}
