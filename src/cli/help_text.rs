//! The command line as it is parsed and documented: clap's derived
//! command, with each option's `--help` text cut to what `-h` does not
//! already say.

use clap::{Arg, Command, CommandFactory, FromArgMatches};

/// The command line of `Cli`, as `--help`, the man pages and parsing see it.
pub(crate) fn command() -> Command {
    tidy(super::Cli::command())
}

/// `Cli` from the process's arguments, through `command` (the tidied command line).
pub fn parse() -> Result<super::Cli, clap::Error> {
    let matches = command().try_get_matches()?;
    super::Cli::from_arg_matches(&matches)
}

fn tidy(cmd: Command) -> Command {
    let cmd = cmd.mut_args(without_restated_summary);
    cmd.mut_subcommands(tidy)
}

/// The first three words of `s`.
fn opening(s: &str) -> Vec<&str> {
    s.split_whitespace().take(3).collect()
}

/// A doc comment's first paragraph is the option's `-h` line, and clap
/// repeats it at the top of `--help`. Where the next paragraph says the
/// same thing again at length (it opens with the summary's first words),
/// `--help` keeps only the longer telling.
fn without_restated_summary(arg: Arg) -> Arg {
    let (Some(short), Some(long)) = (arg.get_help(), arg.get_long_help()) else {
        return arg;
    };
    let (short, long) = (short.to_string(), long.to_string());
    let Some((first, rest)) = long.split_once("\n\n") else {
        return arg;
    };
    let restated = first.trim_end_matches('.') == short.trim_end_matches('.')
        && opening(&short).len() == 3
        && opening(rest) == opening(&short);
    if restated {
        let rest = rest.to_string();
        arg.long_help(rest)
    } else {
        arg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long_help(words: &[&str]) -> String {
        let mut cmd = command();
        let mut sub = &mut cmd;
        for w in words {
            sub = sub.find_subcommand_mut(w).unwrap();
        }
        sub.render_long_help().to_string()
    }

    #[test]
    fn an_option_whose_detail_restates_its_summary_says_it_once() {
        let help = long_help(&["peak"]);
        let summary = "Thread counts, comma-separated: a number or all.";
        let detail = "Thread counts, comma-separated: a number, or all (every allowed core";
        assert!(help.contains(detail), "{help}");
        assert!(!help.contains(summary), "{help}");
        // The -h line keeps the summary.
        let short = command()
            .find_subcommand_mut("peak")
            .unwrap()
            .render_help()
            .to_string();
        assert!(short.contains("Thread counts, comma-separated: a number or all"));
    }

    #[test]
    fn a_detail_that_adds_to_its_summary_keeps_both() {
        let arg = Arg::new("x")
            .help("Measure only this size")
            .long_help("Measure only this size.\n\nWhole KiB, at least 4K.");
        let kept = without_restated_summary(arg);
        assert_eq!(
            kept.get_long_help().unwrap().to_string(),
            "Measure only this size.\n\nWhole KiB, at least 4K."
        );
    }
}
