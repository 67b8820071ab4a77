//! `numabench generate`: the man page and shell completions, made from the
//! command-line definitions themselves so they never drift from `--help`.

use clap::CommandFactory;
use clap_complete::Shell;

/// Print the man page (roff) or a shell's completion script on standard
/// output, e.g. `numabench generate man > numabench.1` or
/// `numabench generate bash > /etc/bash_completion.d/numabench`.
#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// What to print.
    #[arg(value_enum, value_name = "WHAT")]
    pub what: What,
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

pub fn run(args: GenerateArgs) -> anyhow::Result<()> {
    let mut cmd = super::Cli::command();
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
        None => clap_mangen::Man::new(cmd).render(&mut out)?,
    }
    crate::console::out(&String::from_utf8_lossy(&out));
    Ok(())
}
