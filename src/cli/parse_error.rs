//! A command-line mistake as one line on stderr, keeping clap's "did you
//! mean" suggestion: its full rendering spreads over a usage block and tips.

use clap::error::{ContextKind, ContextValue};

/// The line `numabench: error: ...` printed for a parse error `e`.
pub fn usage_line(e: &clap::Error) -> String {
    // clap's first line holds the reason, continued on indented lines
    // when it lists names (missing arguments); its tips repeat --help.
    let text = e.render().to_string();
    let mut lines = text.lines();
    let mut first = lines.next().unwrap_or("invalid arguments").to_string();
    for more in lines.take_while(|l| l.starts_with(' ')) {
        first.push(' ');
        first.push_str(more.trim());
    }
    let reason = first.strip_prefix("error: ").unwrap_or(&first);
    let hint = suggestion(e)
        .map(|s| format!("; did you mean {s}?"))
        .unwrap_or_default();
    format!("numabench: error: {reason}{hint} (see 'numabench --help')")
}

/// The names clap found close to what was typed, quoted as clap quotes
/// them, the closest first ('matrix' or 'gather'): clap lists them from
/// the least close.
fn suggestion(e: &clap::Error) -> Option<String> {
    [
        ContextKind::SuggestedSubcommand,
        ContextKind::SuggestedArg,
        ContextKind::SuggestedValue,
    ]
    .into_iter()
    .find_map(|kind| {
        let names: Vec<String> = match e.get(kind)? {
            ContextValue::String(s) => vec![s.clone()],
            ContextValue::Strings(v) => v.clone(),
            _ => return None,
        };
        let quoted: Vec<String> = names.iter().rev().map(|n| format!("'{n}'")).collect();
        (!quoted.is_empty()).then(|| quoted.join(" or "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn line(words: &[&str]) -> String {
        let e = Cli::try_parse_from(std::iter::once("numabench").chain(words.iter().copied()))
            .expect_err("a mistake");
        usage_line(&e)
    }

    #[test]
    fn a_misspelt_command_or_flag_keeps_the_suggestion_on_one_line() {
        assert_eq!(
            line(&["matrx"]),
            "numabench: error: unrecognized subcommand 'matrx'; did you mean 'matrix' or 'gather'? (see 'numabench --help')"
        );
        let l = line(&["sweep", "--thread", "2"]);
        assert!(
            l.starts_with(
                "numabench: error: unexpected argument '--thread' found; did you mean '--threads'?"
            ),
            "{l}"
        );
        let l = line(&[
            "mlp",
            "--pattern",
            "page-local",
            "--pages",
            "thp",
            "--pairz",
            "all",
        ]);
        assert!(l.contains("did you mean '--pairs'?"), "{l}");
        for l in [line(&["matrx"]), line(&["sweep", "--thread", "2"])] {
            assert!(!l.contains('\n'), "{l}");
        }
    }

    #[test]
    fn without_a_close_name_there_is_no_guess() {
        let l = line(&["zzzzzz"]);
        assert_eq!(
            l,
            "numabench: error: unrecognized subcommand 'zzzzzz' (see 'numabench --help')"
        );
    }
}
