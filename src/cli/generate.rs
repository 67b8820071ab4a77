//! `numabench generate`: the man page and shell completions, made from the
//! command-line definitions themselves so they never drift from `--help`.

use clap_complete::Shell;

/// Print the man page or a shell's completion script.
///
/// Print the man page (roff) or a shell's completion script on standard
/// output, e.g. `numabench generate man > numabench.1` or
/// `numabench generate bash > /etc/bash_completion.d/numabench`.
#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// What to print.
    #[arg(value_enum, value_name = "WHAT")]
    pub what: What,
    /// With `man`: the page of this command, e.g. run or fleet-submit.
    ///
    /// With `man`: the page of this command, numabench-COMMAND(1), instead
    /// of numabench(1); `fleet-submit` for numabench-fleet-submit(1).
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum What {
    /// The man page, numabench(1), in roff.
    Man,
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

pub(super) fn run(args: GenerateArgs) -> anyhow::Result<()> {
    if args.command.is_some() && !matches!(args.what, What::Man) {
        return Err(crate::error::usage(
            "generate: a COMMAND is given only with `man` (completions cover every command)",
        ));
    }
    let mut cmd = super::help_text::command();
    let mut out = Vec::new();
    let shell = match args.what {
        What::Man => None,
        What::Bash => Some(Shell::Bash),
        What::Zsh => Some(Shell::Zsh),
        What::Fish => Some(Shell::Fish),
        What::Elvish => Some(Shell::Elvish),
        What::Powershell => Some(Shell::PowerShell),
    };
    match shell {
        Some(shell) => {
            let name = cmd.get_name().to_string();
            clap_complete::generate(shell, &mut cmd, name, &mut out);
        }
        None => out = super::man::page(page(cmd, args.command.as_deref())?)?,
    }
    crate::console::out(&String::from_utf8_lossy(&out));
    Ok(())
}

/// The command a man page is made of: numabench itself, or one of its
/// commands named `numabench-NAME` as the SUBCOMMANDS section refers to it;
/// a command's own commands as `fleet-submit` (or `fleet submit`), the
/// names `numabench-fleet(1)` refers to.
fn page(mut cmd: clap::Command, name: Option<&str>) -> anyhow::Result<clap::Command> {
    let Some(name) = name else {
        return Ok(cmd);
    };
    // Built, each command has its display name (numabench-run) and the
    // line that starts it (numabench run) for the synopsis.
    cmd.build();
    let mut at = cmd;
    for part in name.split(['-', ' ']).filter(|p| !p.is_empty()) {
        let Some(sub) = at.find_subcommand(part).cloned() else {
            let known: Vec<&str> = at
                .get_subcommands()
                .map(|c| c.get_name())
                .filter(|n| *n != "help")
                .collect();
            return Err(crate::error::usage(format!(
                "generate man {name}: no such command (commands{}: {})",
                if at.get_name() == "numabench" {
                    String::new()
                } else {
                    format!(" of {}", at.get_name())
                },
                known.join(", ")
            )));
        };
        at = sub;
    }
    Ok(at)
}
