use clap::Parser;
use numabench::error::{EXIT_USAGE, exit_code, one_line};

fn main() {
    let cli = match numabench::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            {
                let _ = e.print();
                std::process::exit(if e.use_stderr() { EXIT_USAGE } else { 0 });
            }
            // clap's first line holds the reason; its tips repeat --help.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let reason = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("numabench: error: {reason} (see 'numabench --help')");
            std::process::exit(EXIT_USAGE);
        }
    };
    if let Err(err) = numabench::cli::run(cli) {
        // A closed pipe (numabench topo | head) is not a failure.
        if err.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
        }) {
            std::process::exit(0);
        }
        eprintln!("numabench: error: {}", one_line(&err));
        std::process::exit(exit_code(&err));
    }
}
