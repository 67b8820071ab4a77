//! What the command line promises across every command: one meaning per
//! short flag, short `-h`, examples in `--help` that parse.

use super::Cli;
use clap::CommandFactory;
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
    let mut cmd = Cli::command();
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
