//! `numabench generate`: the man page and completions come from the clap
//! definitions and name every command and its flags.

use crate::util::{numabench, stdout_of};

const COMMANDS: [&str; 14] = [
    "run", "topo", "gather", "place", "sweep", "matrix", "model", "pcie", "mem", "autonuma",
    "sched", "compare", "report", "generate",
];

fn text_of(what: &str) -> String {
    String::from_utf8(stdout_of(["generate", what])).unwrap()
}

#[test]
fn the_man_page_names_every_command() {
    let man = text_of("man");
    assert!(man.contains(".TH numabench 1"), "{man}");
    assert!(man.contains(".SH SUBCOMMANDS"), "{man}");
    for c in COMMANDS {
        assert!(man.contains(&format!("numabench\\-{c}(1)")), "{c} missing");
    }
}

#[test]
fn each_command_has_a_page_with_its_options() {
    let run = String::from_utf8(stdout_of(["generate", "man", "run"])).unwrap();
    assert!(run.contains(".TH numabench-run 1"), "{run}");
    assert!(run.contains("numabench run"), "{run}");
    for flag in ["\\-\\-dir", "\\-\\-profile"] {
        assert!(run.contains(flag), "{flag} missing: {run}");
    }
    let topo = String::from_utf8(stdout_of(["generate", "man", "topo"])).unwrap();
    assert!(topo.contains("\\-\\-sysfs\\-root") && topo.contains("\\-\\-markdown"));
    let out = numabench()
        .args(["generate", "man", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no such command") && err.contains("matrix"),
        "{err}"
    );
    // The pages numabench-fleet(1) refers to exist too.
    let fleet = String::from_utf8(stdout_of(["generate", "man", "fleet"])).unwrap();
    for sub in ["submit", "report", "compare"] {
        assert!(
            fleet.contains(&format!("numabench\\-fleet\\-{sub}(1)")),
            "{fleet}"
        );
        let page =
            String::from_utf8(stdout_of(["generate", "man", &format!("fleet-{sub}")])).unwrap();
        assert!(
            page.contains(&format!(".TH numabench-fleet-{sub} 1")),
            "{page}"
        );
    }
    let submit = String::from_utf8(stdout_of(["generate", "man", "fleet submit"])).unwrap();
    assert!(submit.contains("\\-\\-dry\\-run"), "{submit}");
    crate::util::rejects(
        &["generate", "man", "fleet-nope"],
        "commands of fleet: submit, report, compare",
    );
}

#[test]
fn bash_completion_offers_the_commands_and_their_flags() {
    let bash = text_of("bash");
    assert!(bash.contains("_numabench()"), "{bash}");
    assert!(bash.contains("complete -F _numabench"), "{bash}");
    for c in COMMANDS {
        assert!(
            bash.contains(&format!("cmd=\"numabench__subcmd__{c}\"")),
            "{c} missing"
        );
    }
    for flag in ["--sysfs-root", "--profile", "--dir", "--save", "--markdown"] {
        assert!(bash.contains(flag), "{flag} missing");
    }
}

#[test]
fn every_shell_gets_a_script_naming_the_commands() {
    for (shell, marker) in [
        ("zsh", "#compdef numabench"),
        ("fish", "complete -c numabench"),
        ("elvish", "edit:completion:arg-completer[numabench]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = text_of(shell);
        assert!(script.contains(marker), "{shell}: no {marker}");
        for c in ["run", "matrix", "report", "generate"] {
            assert!(script.contains(c), "{shell}: {c} missing");
        }
    }
}

#[test]
fn an_unknown_target_is_refused_with_the_choices() {
    let out = numabench().args(["generate", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");
}

#[test]
fn man_pages_have_examples_exit_status_and_see_also_and_no_source_paths() {
    for page in [
        vec!["generate", "man"],
        vec!["generate", "man", "sweep"],
        vec!["generate", "man", "fleet-submit"],
    ] {
        let man = String::from_utf8(stdout_of(&page)).unwrap();
        for section in [".SH EXAMPLES", ".SH \"EXIT STATUS\"", ".SH \"SEE ALSO\""] {
            assert!(man.contains(section), "{page:?}: {section} missing");
        }
        assert!(
            !man.contains("docs/"),
            "{page:?} points into the source tree"
        );
        assert!(!man.contains(".SH EXTRA"), "{page:?}");
    }
    let sweep = text_of_page("sweep");
    // The examples of --help, each a command line in bold.
    assert!(
        sweep.contains("\\fBnumabench sweep \\-\\-buffer\\-kib 1024\\fR"),
        "{sweep}"
    );
    for code in ["\\fB0\\fR", "\\fB1\\fR", "\\fB2\\fR", "\\fB128+N\\fR"] {
        assert!(sweep.contains(code), "{code} missing");
    }
    let see_also = sweep.split(".SH \"SEE ALSO\"").nth(1).unwrap();
    assert!(see_also.contains("\\fBnumabench\\fR(1)"), "{see_also}");
    assert!(
        see_also.contains("\\fBnumabench\\-matrix\\fR(1)"),
        "{see_also}"
    );
    let mem = text_of_page("mem");
    assert!(mem.contains("\\fBperf\\-bench\\fR(1)"), "{mem}");
    let place = text_of_page("place");
    assert!(place.contains("\\fBnumactl\\fR(8)"), "{place}");
    let submit = text_of_page("fleet-submit");
    assert!(submit.contains("\\fBnumabench\\-fleet\\fR(1)"), "{submit}");
}

fn text_of_page(command: &str) -> String {
    String::from_utf8(stdout_of(["generate", "man", command])).unwrap()
}
