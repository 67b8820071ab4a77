//! A man page: clap_mangen's sections from the command-line definitions,
//! then EXAMPLES (the examples of `--help`), EXIT STATUS and SEE ALSO.
//! The guide line that closes `--help` is left out: it points into the
//! source tree, which a package user does not have.

use clap_mangen::Man;

/// The page of `cmd`, whose name is `numabench` or `numabench-NAME`.
pub(super) fn page(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_string();
    let examples = cmd
        .get_after_long_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    let has_options = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_commands = cmd.get_subcommands().any(|c| !c.is_hide_set());
    let has_version = cmd.get_version().or(cmd.get_long_version()).is_some();
    let man = Man::new(cmd).source(concat!("numabench ", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if has_options {
        man.render_options_section(&mut out)?;
    }
    if has_commands {
        man.render_subcommands_section(&mut out)?;
    }
    out.extend(examples_section(&examples).into_bytes());
    out.extend(EXIT_STATUS.as_bytes());
    out.extend(see_also(&name).into_bytes());
    if has_version {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}

/// Text as roff reads it literally: backslashes and hyphens escaped, a
/// line that would start a request guarded.
fn roman(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

fn examples_section(help: &str) -> String {
    let mut out = String::from(".SH EXAMPLES\n");
    for e in super::examples::of(help) {
        out.push_str(&format!(
            ".PP\n{}\n.RS 4\n.nf\n\\fB{}\\fR\n.fi\n.RE\n",
            roman(e.comment),
            roman(e.line)
        ));
    }
    out
}

/// What the exit codes mean, as src/main.rs and the commands return them.
const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Done, also where a --time-limit cut the measurements short; the results then say so ("complete": false).
.TP
\fB1\fR
A measurement or a part of a run failed, or the output could not be written. What was measured before is printed or saved, marked incomplete.
.TP
\fB2\fR
Bad input: an option, value or file was refused, before anything was measured. One line on standard error says which and how to write it.
.TP
\fB3\fR
\fBfleet report\fR only: machines were flagged (outliers, rare kinds, drift).
.TP
\fB128+N\fR
A measuring command was stopped by signal N (130 for SIGINT, Ctrl-C; 143 for SIGTERM) at the next measurement boundary; what it measured is printed (and saved with --save), marked interrupted.
"#;

/// Each command (`command: others...`, a line each) and the pages its
/// readers turn to next: other commands by name, pages of other programs
/// with their section. A reading list, not the probes' names.
const RELATED: &str = "\
numabench: numactl(8)
run: matrix sweep latency report
topo: gather place numactl(8)
gather: topo
place: topo matrix numactl(8)
sweep: matrix latency
matrix: model peak latency numactl(8)
model: matrix pcie
latency: mlp loaded matrix
mlp: latency loaded
loaded: latency peak
peak: matrix loaded
c2c: topo latency
pcie: model
mem: autonuma sched perf-bench(1) perf(1)
autonuma: mem tier numastat(8)
sched: mem autonuma
tier: autonuma numastat(8)
fleet: run compare report
compare: report
report: compare run
";

/// The pages a reader of `name` turns to next.
fn see_also(name: &str) -> String {
    let command = name.strip_prefix("numabench-").unwrap_or("");
    let family = match command.split('-').next() {
        Some("") | None => "numabench",
        Some(f) => f,
    };
    let listed: Vec<&str> = RELATED
        .lines()
        .find_map(|l| l.strip_prefix(family)?.strip_prefix(": "))
        .map(|r| r.split(' ').collect())
        .unwrap_or_default();
    let (outside, related): (Vec<&str>, Vec<&str>) = listed.iter().partition(|w| w.contains('('));
    let mut pages: Vec<String> = if command.is_empty() {
        super::Cli::command_names()
            .into_iter()
            .map(|c| format!("numabench-{c}(1)"))
            .collect()
    } else {
        // A nested command's page (fleet-submit) names its parent's.
        let parent = command
            .split_once('-')
            .map(|(p, _)| format!("numabench-{p}(1)"));
        std::iter::once("numabench(1)".to_string())
            .chain(parent)
            .chain(related.iter().map(|c| format!("numabench-{c}(1)")))
            .collect()
    };
    pages.extend(outside.iter().map(|p| p.to_string()));
    let refs: Vec<String> = pages
        .iter()
        .map(|p| {
            let (page, section) = p.split_once('(').unwrap_or((p, ""));
            format!("\\fB{}\\fR({section}", roman(page))
        })
        .collect();
    format!(".SH \"SEE ALSO\"\n{}\n", refs.join(", "))
}
