use numabench::error::{EXIT_USAGE, exit_code, one_line};

#[global_allocator]
static HEAP: numabench::ReportedHeap = numabench::ReportedHeap;

fn main() {
    numabench::topology::fit_malloc_to_rlimits();
    let cli = match numabench::cli::parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            {
                use std::io::Write;
                if let Err(why) = e.print().and_then(|()| std::io::stdout().flush()) {
                    // `numabench --help | head -1`, as for a command's output.
                    if why.kind() == std::io::ErrorKind::BrokenPipe {
                        std::process::exit(0);
                    }
                    eprintln!("numabench: error: cannot write to standard output: {why}");
                    std::process::exit(numabench::error::EXIT_FAILURE);
                }
                std::process::exit(if e.use_stderr() { EXIT_USAGE } else { 0 });
            }
            eprintln!("{}", numabench::cli::usage_line(&e));
            std::process::exit(EXIT_USAGE);
        }
    };
    let _stops = if cli.command.measures() {
        numabench::interrupt::stop_at_boundaries()
    } else {
        numabench::interrupt::end_cleanly()
    };
    let result = numabench::cli::run(cli);
    if let Some(e) = numabench::console::stdout_failure()
        && result.is_ok()
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("numabench: error: cannot write to standard output: {e}");
        std::process::exit(numabench::error::EXIT_FAILURE);
    }
    if let Err(err) = result {
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
