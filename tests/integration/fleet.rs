//! `numabench fleet`: a real Slurm cluster on this machine
//! (scripts/slurm-test-cluster: two slurmd, n1 and n2), planted outliers,
//! and a synthetic fleet of 10,000 results documents.
//!
//! The Slurm tests run `numabench run --profile smoke` on the nodes: the
//! matrix on 8 MiB buffers with one timed run, a few seconds, cache figures
//! rather than memory's. They check what carries the results (the jobs,
//! the folders keyed by node name, the report), not the measurement.

use super::util::numabench;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXIT_FLAGGED: i32 = 3;
const EX_SKIP: i32 = 77;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-test-cluster")
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("numabench")
}

/// A line on the real stderr, which the test harness does not capture: a
/// skip must be seen.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Runs `sh -c CMD` inside a fresh test cluster; `None` (after saying so)
/// where Slurm cannot be had here.
fn in_cluster(cmd: &str) -> Option<std::process::Output> {
    let out = Command::new(script())
        .args(["--install", "--", "sh", "-c", cmd])
        .env("NB", bin())
        .output()
        .unwrap();
    if out.status.code() == Some(EX_SKIP) {
        say(&format!(
            "SKIPPED (no Slurm here): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        return None;
    }
    Some(out)
}

fn report_json(dir: &Path) -> (Option<i32>, Value) {
    let out = numabench()
        .args(["fleet", "report", "--json"])
        .arg(dir)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    (out.status.code(), v)
}

/// The results documents a submission left, by node.
fn documents(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for node in ["n1", "n2"] {
        for e in std::fs::read_dir(dir.join(node)).unwrap().flatten() {
            let p = e.path().join("results.json");
            if p.is_file() {
                out.push((node.to_string(), p));
            }
        }
    }
    out
}

#[test]
fn fleet_submit_runs_every_node_once_and_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let cmd = format!(
        "\"$NB\" fleet submit --dir '{d}' --profile smoke --wait --poll 1 && \"$NB\" fleet submit --dir '{d}' --profile smoke"
    );
    let Some(out) = in_cluster(&cmd) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("2 submitted, 0 with results already"), "{err}");
    assert!(
        err.contains("fleet: 2 done, 0 running, 0 pending, 0 failed of 2 node(s)"),
        "{err}"
    );
    // The second submission found both nodes done and submitted nothing.
    assert!(err.contains("0 submitted, 2 with results already"), "{err}");
    let docs = documents(dir.path());
    assert_eq!(docs.len(), 2, "{docs:?}");
    for (node, p) in &docs {
        let v: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        assert_eq!(v["host"]["batch_node"], node.as_str());
        assert_eq!(v["complete"], true);
    }
    let (code, r) = report_json(dir.path());
    let names: Vec<&str> = r["report"]["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["n1", "n2"]);
    // Both nodes are this machine: same hostname, one kind.
    assert_eq!(r["report"]["kinds"].as_array().unwrap().len(), 1);
    // Two machines are never judged against each other.
    assert_eq!(code, Some(0), "{r}");
    let fig = &r["report"]["kinds"][0]["figures"][0];
    assert_eq!(fig["id"], "local_bw_1t_mb_s");
    assert_eq!(fig["spread"]["n"], 2);
}

#[test]
fn a_node_with_half_the_bandwidth_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    // Submitted, then at once again: the second finds both jobs queued
    // and only follows them.
    let cmd = format!(
        "\"$NB\" fleet submit --dir '{d}/runs' --profile smoke && \"$NB\" fleet submit --dir '{d}/runs' --profile smoke --wait --poll 1"
    );
    let Some(out) = in_cluster(&cmd) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("2 submitted, 0 with results already, 0 queued already"),
        "{err}"
    );
    assert!(
        err.contains("0 submitted, 0 with results already, 2 queued already"),
        "{err}"
    );
    // Six machines from n1's document; p4's bandwidth halved.
    let (_, n1) = documents(&dir.path().join("runs"))
        .into_iter()
        .find(|(n, _)| n == "n1")
        .unwrap();
    let base: Value = serde_json::from_slice(&std::fs::read(n1).unwrap()).unwrap();
    let fleet = dir.path().join("planted");
    for i in 1..=6 {
        let mut v = base.clone();
        v["host"]["batch_node"] = json!(format!("p{i}"));
        if i == 4 {
            halve_bandwidth(&mut v);
        }
        let p = fleet.join(format!("p{i}.json"));
        std::fs::create_dir_all(&fleet).unwrap();
        std::fs::write(p, serde_json::to_vec(&v).unwrap()).unwrap();
    }
    let (code, r) = report_json(&fleet);
    assert_eq!(code, Some(EXIT_FLAGGED), "{r}");
    assert_eq!(r["flagged"], json!(["p4"]));
    let text = numabench()
        .args(["fleet", "report"])
        .arg(&fleet)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("p4 "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("-50.0% (worse)"), "{line}");
}

/// Halves every bandwidth figure of the document `v`.
pub(crate) fn halve_bandwidth(v: &mut Value) {
    for r in v["records"].as_array_mut().unwrap() {
        // get_mut, not [..]: indexing would add the keys a record lacks.
        if let Some(m) = r
            .get_mut("metrics")
            .and_then(|m| m.get_mut("bandwidth_mb_s"))
        {
            m["value"] = json!(m["value"].as_f64().unwrap() / 2.0);
        }
        if let Some(s) = r
            .get_mut("samples")
            .and_then(|s| s.get_mut("bandwidth_mb_s"))
        {
            for x in s.as_array_mut().unwrap() {
                *x = json!(x.as_f64().unwrap() / 2.0);
            }
        }
    }
}

#[test]
fn dry_run_prints_one_exclusive_job_per_node_without_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    // n2 has results already, copied by hand: it is not submitted; n3 is no
    // node of this cluster.
    let topo: Value = serde_json::from_slice(&super::util::stdout_of([
        "topo",
        "--json",
        "--sysfs-root",
        super::util::fixture("two-node").to_str().unwrap(),
    ]))
    .unwrap();
    let doc = json!({"schema": 1, "tool": "numabench", "version": "0.1.0", "command": [],
        "started": "2026-11-25T10:00:00Z", "finished": "2026-11-25T10:00:01Z", "complete": true,
        "host": {"hostname": "vm", "kernel": "6.1", "cpu_model": "x", "thp": {}, "numa_balancing": 0,
                 "allowed": topo["allowed"].clone(), "topology": topo, "batch_node": "n2"},
        "records": []});
    std::fs::write(dir.path().join("copied.json"), doc.to_string()).unwrap();
    let cmd =
        format!("NB_D='{d}'; \"$NB\" fleet submit --dir \"$NB_D\" --nodelist 'n[1-3]' --dry-run");
    let Some(out) = in_cluster(&cmd) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // What would be submitted is the output (stdout); progress is stderr.
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("--nodelist=n1 --nodes=1 --ntasks=1 --exclusive"),
        "{shown}"
    );
    assert!(
        !shown.contains("--nodelist=n2") && !shown.contains("--nodelist=n3"),
        "{shown}"
    );
    assert!(!err.contains("sbatch --"), "{err}");
    assert!(
        err.contains("left out, Slurm starts no job there: n3 (unknown)"),
        "{err}"
    );
    assert!(
        err.contains("2 node(s): 1 to submit, 1 with results already"),
        "{err}"
    );
    assert!(shown.contains("--dir '"), "{shown}");
    // Nothing was submitted: no node folder.
    assert!(!dir.path().join("n1").exists());
}

#[test]
fn bad_report_input_is_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["fleet", "report", "/nonexistent/fleet"],
        vec!["fleet", "report", dir.path().to_str().unwrap()],
        vec![
            "fleet",
            "report",
            "--threshold",
            "0",
            dir.path().to_str().unwrap(),
        ],
    ] {
        let out = numabench().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("numabench: error: "), "{err}");
    }
}

#[path = "fleet_scale.rs"]
mod scale;

/// `fleet submit` checks its folder before Slurm is asked anything, so these
/// are refused on a machine without Slurm too, and nothing is created.
#[test]
fn a_submit_folder_that_will_not_work_is_refused_before_slurm() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "keep").unwrap();
    let to_file = tmp.path().join("link-to-file");
    std::os::unix::fs::symlink(&file, &to_file).unwrap();
    let dangling = tmp.path().join("dangling");
    std::os::unix::fs::symlink(tmp.path().join("nothing"), &dangling).unwrap();
    let deep = tmp.path().join("no/such/deeper");
    for (dir, says) in [
        (&file, "not a directory"),
        (&to_file, "not a directory"),
        (&dangling, "which does not exist"),
        (&deep, "--dir"),
    ] {
        for dry in [false, true] {
            let mut args = vec!["fleet", "submit", "--dir", dir.to_str().unwrap()];
            if dry {
                args.extend(["--dry-run", "-w", "n1"]);
            }
            let out = numabench().args(&args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(says), "{args:?}: {err}");
        }
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    assert!(!tmp.path().join("no").exists(), "a folder was created");
}

/// The processes whose environment names the cluster configuration
/// `conf`: what a cluster started, its jobs included.
fn processes_of(conf: &str) -> Vec<String> {
    let want = format!("SLURM_CONF={conf}");
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = e.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.split(|b| *b == 0).any(|v| v == want.as_bytes()) {
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            out.push(format!("{pid} {}", comm.trim()));
        }
    }
    out
}

#[test]
fn teardown_leaves_no_process_of_a_job_still_completing() {
    // The job ignores SIGTERM: cancelled, it stays COMPLETING for KillWait
    // (5 s) until Slurm kills it.
    let cmd = "sbatch -w n1 --output=/dev/null --wrap 'trap \"\" TERM; sleep 300' >/dev/null && \
               i=0; while [ \"$(squeue -h -o %T)\" != RUNNING ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; \
               squeue -h -o %T";
    let Some(out) = in_cluster(cmd) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "RUNNING");
    let conf = err
        .split("SLURM_CONF=")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .unwrap_or_else(|| panic!("{err}"));
    let left = processes_of(conf);
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A results document of Slurm node `node`, as a copy by hand would leave.
fn document_of(node: &str) -> Value {
    let topo: Value = serde_json::from_slice(&super::util::stdout_of([
        "topo",
        "--json",
        "--sysfs-root",
        super::util::fixture("two-node").to_str().unwrap(),
    ]))
    .unwrap();
    json!({"schema": 1, "tool": "numabench", "version": "0.1.0", "command": [],
        "started": "2026-11-25T10:00:00Z", "finished": "2026-11-25T10:00:01Z", "complete": true,
        "host": {"hostname": "vm", "kernel": "6.1", "cpu_model": "x", "thp": {}, "numa_balancing": 0,
                 "allowed": topo["allowed"].clone(), "topology": topo, "batch_node": node},
        "records": []})
}

#[test]
fn report_refuses_an_output_that_is_a_document_it_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fleet");
    std::fs::create_dir_all(dir.join("m0")).unwrap();
    let doc = dir.join("m0/results.json");
    let text = document_of("m0").to_string();
    std::fs::write(&doc, &text).unwrap();
    // Another name for the same file is the same file.
    let other = tmp.path().join("other-name.html");
    std::fs::hard_link(&doc, &other).unwrap();
    for out in [&doc, &other] {
        let o = numabench()
            .args(["fleet", "report"])
            .arg(&dir)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("numabench: error: --output ") && err.contains("this command reads"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&doc).unwrap(), text);
    }
    // A new file beside the documents is written.
    let page = dir.join("m0/report.html");
    let o = numabench()
        .args(["fleet", "report"])
        .arg(&dir)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
}

/// Slurm's commands as shell scripts on PATH, their state in files under
/// `state`: `sinfo.out` (sinfo's answer), `queue` (squeue's lines, which
/// sbatch appends to, PENDING), `sbatch.log` (one line of arguments per
/// submission), `sbatch.delay` (seconds sbatch takes), `sbatch.out` (what
/// sbatch answers instead of a job id), `hang` (sinfo never answers).
struct FakeSlurm {
    _tmp: tempfile::TempDir,
    bin: PathBuf,
    state: PathBuf,
}

impl FakeSlurm {
    fn new(sinfo: &[u8]) -> FakeSlurm {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        let state = tmp.path().join("state");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join("sinfo.out"), sinfo).unwrap();
        std::fs::write(state.join("queue"), "").unwrap();
        let scripts = [
            (
                "sinfo",
                "[ -e \"$S/hang\" ] && exec sleep 300\ncat \"$S/sinfo.out\"",
            ),
            ("scontrol", "cat \"$S/hostnames.out\""),
            ("squeue", "cat \"$S/queue\""),
            (
                "sbatch",
                "name= node=\nfor a; do case \"$a\" in --job-name=*) name=${a#*=};; --nodelist=*) node=${a#*=};; esac; done\n\
                 printf '%s\\n' \"$*\" >>\"$S/sbatch.log\"\n\
                 [ -e \"$S/sbatch.delay\" ] && sleep \"$(cat \"$S/sbatch.delay\")\"\n\
                 cat >/dev/null\n\
                 [ -e \"$S/sbatch.out\" ] && exec cat \"$S/sbatch.out\"\n\
                 echo \"$$|PENDING|$name|$node\" >>\"$S/queue\"\necho \"$$\"",
            ),
        ];
        for (name, body) in scripts {
            let p = bin.join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        FakeSlurm {
            _tmp: tmp,
            bin,
            state,
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.state.join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap_or_default()
    }

    /// `numabench ARGS` with these commands first on PATH.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        let path = format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap());
        c.args(args).env("PATH", path).env("S", &self.state);
        c
    }

    fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let o = self.command(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

#[test]
fn a_folders_jobs_are_its_own_and_completing_ones_are_not_queued() {
    let slurm = FakeSlurm::new(b"n1 idle\nn2 idle\n");
    let tmp = tempfile::tempdir().unwrap();
    let x = tmp.path().join("x").display().to_string();
    let y = tmp.path().join("y").display().to_string();
    // A job of an older numabench, named without a folder: not this one's.
    std::fs::write(slurm.file("queue"), "7|PENDING|numabench-fleet|n1\n").unwrap();
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &x]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("2 submitted, 0 with results already, 0 queued already"),
        "{err}"
    );
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &x]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("0 submitted, 0 with results already, 2 queued already"),
        "{err}"
    );
    // Another folder: x's jobs are no reason to submit nothing.
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &y]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("2 submitted, 0 with results already, 0 queued already"),
        "{err}"
    );
    let log = slurm.read("sbatch.log");
    let names: std::collections::BTreeSet<&str> = log
        .split_whitespace()
        .filter_map(|a| a.strip_prefix("--job-name="))
        .collect();
    assert_eq!(names.len(), 2, "{log}");
    // x's job on n1 ends (COMPLETING) without results: n1 is submitted again.
    let queue = slurm.read("queue");
    let x_name = log
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .find_map(|a| a.strip_prefix("--job-name="))
        .unwrap()
        .to_string();
    let changed: String = queue
        .lines()
        .map(|l| {
            if l.ends_with(&format!("|{x_name}|n1")) {
                l.replace("PENDING", "COMPLETING")
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect();
    std::fs::write(slurm.file("queue"), changed).unwrap();
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &x]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("1 submitted, 0 with results already, 1 queued already"),
        "{err}"
    );
    assert_eq!(slurm.read("sbatch.log").lines().count(), 5);
}

#[test]
fn two_submits_into_one_folder_at_once_submit_each_node_once() {
    let slurm = FakeSlurm::new(b"n1 idle\nn2 idle\n");
    std::fs::write(slurm.file("sbatch.delay"), "1").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let z = tmp.path().join("z").display().to_string();
    let args = ["fleet", "submit", "--dir", z.as_str()];
    let a = slurm
        .command(&args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let b = slurm
        .command(&args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_eq!(
        slurm.read("sbatch.log").lines().count(),
        2,
        "{}",
        slurm.read("sbatch.log")
    );
    let mut said = String::new();
    for o in [&a, &b] {
        let err = String::from_utf8_lossy(&o.stderr);
        said.push_str(&err);
        // The one that found the folder busy says so, in one line, exit 1.
        if err.contains("another fleet submit") {
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        } else {
            assert_eq!(o.status.code(), Some(0), "{err}");
        }
    }
    assert!(said.contains("2 submitted"), "{said}");
}

#[test]
fn no_usable_node_is_a_failure_naming_the_states() {
    let slurm = FakeSlurm::new(b"n1 down*\nn2 drain\nn3 unk*\n");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("f").display().to_string();
    for dry in [false, true] {
        let mut args = vec!["fleet", "submit", "--dir", d.as_str()];
        if dry {
            args.push("--dry-run");
        }
        let (code, out, err) = slurm.run(&args);
        assert_eq!(code, Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("numabench: error: no node to submit to")
                && err.contains("n1 (down*), n2 (drain), n3 (unk*)"),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
    }
    assert_eq!(slurm.read("sbatch.log"), "");
}

#[test]
fn dry_run_lines_are_shell_words_and_odd_node_names_are_left_out() {
    let slurm = FakeSlurm::new(b"n1 idle\n$(touch${IFS}x) idle\nn\xff\x1b[2J idle\nn2 idle\n");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("it's a $(dir) %u");
    let d = dir.display().to_string();
    let (code, out, err) = slurm.run(&["fleet", "submit", "--dir", &d, "--dry-run"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("left out, not a Slurm node name: $(touch${IFS}x), n\u{fffd}\\x1b[2J"),
        "{err}"
    );
    assert!(!err.contains('\x1b'), "{err:?}");
    assert!(err.contains("2 node(s): 2 to submit"), "{err}");
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("sbatch ")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    // Each line, run by a shell, gives sbatch exactly these arguments.
    let argv = tmp.path().join("argv");
    std::fs::write(&argv, "#!/bin/sh\nfor a; do printf '%s\\n' \"$a\"; done\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&argv, std::fs::Permissions::from_mode(0o755)).unwrap();
    let line = lines[0].replacen("sbatch ", &format!("{} ", argv.display()), 1);
    let o = Command::new("sh")
        .arg("-c")
        .arg(&line)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let args = String::from_utf8_lossy(&o.stdout);
    let logs = std::path::absolute(&dir).unwrap().join(".fleet/logs");
    let want = format!(
        "--output={}/n1-%j.log",
        logs.display().to_string().replace('%', "%%")
    );
    assert!(args.lines().any(|a| a == want), "{args}\nwant {want}");
    assert!(args.lines().any(|a| a == "--nodelist=n1"), "{args}");
    assert!(!tmp.path().join("x").exists());
    assert!(!dir.exists(), "a dry run made the folder");
}

#[test]
fn a_slurm_command_that_hangs_or_answers_nonsense_is_a_failure() {
    let slurm = FakeSlurm::new(b"n1 idle\n");
    std::fs::write(slurm.file("hang"), "").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("f").display().to_string();
    let t = std::time::Instant::now();
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &d, "--slurm-timeout", "1"]);
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("sinfo") && err.contains("no answer in 1 s"),
        "{err}"
    );
    std::fs::remove_file(slurm.file("hang")).unwrap();
    std::fs::write(slurm.file("sbatch.out"), b"\x1b]0;owned\x07 Submitted\n").unwrap();
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &d]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("gave no job id but \"\\x1b]0;owned\\x07 Submitted\""),
        "{err}"
    );
    assert!(!err.contains('\x1b'), "{err:?}");
}

/// Sends SIGINT to `child` once `ready` holds (checked for 20 s), then
/// its exit status and stderr.
fn interrupt_when(child: std::process::Child, ready: impl Fn() -> bool) -> (Option<i32>, String) {
    for _ in 0..200 {
        if ready() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill has no memory effect in this process.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_stopped_submit_says_what_goes_on_and_exits_130() {
    let slurm = FakeSlurm::new(b"n1 idle\nn2 idle\nn3 idle\n");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("w").display().to_string();
    let child = slurm
        .command(&["fleet", "submit", "--dir", &d, "--wait", "--poll", "1"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (code, err) = interrupt_when(child, || slurm.read("queue").lines().count() == 3);
    assert_eq!(code, Some(130), "{err}");
    assert!(
        err.lines().last().unwrap_or("")
            == "fleet: stopped waiting; the 3 submitted job(s) go on (fleet submit --wait follows them again)",
        "{err}"
    );
    // While submitting: the job sbatch is submitting is counted, the rest
    // are not submitted.
    let slurm = FakeSlurm::new(b"n1 idle\nn2 idle\nn3 idle\n");
    std::fs::write(slurm.file("sbatch.delay"), "1").unwrap();
    let child = slurm
        .command(&["fleet", "submit", "--dir", &d])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (code, err) = interrupt_when(child, || !slurm.read("sbatch.log").is_empty());
    assert_eq!(code, Some(130), "{err}");
    assert!(
        err.contains(
            "fleet: stopped submitting; the 1 submitted job(s) go on, 2 node(s) not looked at"
        ),
        "{err}"
    );
    assert_eq!(slurm.read("queue").lines().count(), 1);
}

#[test]
fn folders_with_percent_or_backslash_get_their_logs_and_their_own_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let pct = tmp.path().join("a%u%j");
    let bsl = tmp.path().join("b\\n%j");
    let (p, b) = (pct.display().to_string(), bsl.display().to_string());
    // p's jobs are queued when b is submitted: b still submits both nodes.
    let cmd = format!(
        "\"$NB\" fleet submit --dir '{p}' --profile smoke && \"$NB\" fleet submit --dir '{b}' --profile smoke --wait --poll 1 && \"$NB\" fleet submit --dir '{p}' --profile smoke --wait --poll 1"
    );
    let Some(out) = in_cluster(&cmd) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err.matches("2 submitted, 0 with results already, 0 queued already")
            .count(),
        2,
        "{err}"
    );
    for (dir, suffix) in [(&pct, "-"), (&bsl, ".log")] {
        assert_eq!(documents(dir).len(), 2, "{}", dir.display());
        let logs: Vec<String> = std::fs::read_dir(dir.join(".fleet/logs"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(logs.len(), 2, "{logs:?}");
        assert!(
            logs.iter()
                .all(|l| l.starts_with('n') && l.contains(suffix)),
            "{logs:?}"
        );
    }
}

#[test]
fn sbatchs_plain_answer_is_a_job_id_too() {
    let slurm = FakeSlurm::new(b"n1 idle\n");
    std::fs::write(slurm.file("sbatch.out"), "Submitted batch job 12\n").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("f").display().to_string();
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &d]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("1 submitted"), "{err}");
    std::fs::write(slurm.file("sbatch.out"), b"Submitted batch job \xff\x01\n").unwrap();
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &d]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("gave no job id but"), "{err}");
}

/// `sinfo` replaced by `body`.
fn with_sinfo(slurm: &FakeSlurm, body: &str) {
    let p = slurm.bin.join("sinfo");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
}

#[test]
fn what_slurm_says_is_echoed_and_read_only_in_part() {
    let slurm = FakeSlurm::new(b"");
    let long = format!("n1 idle\n{} idle\n", "a".repeat(1 << 20));
    std::fs::write(slurm.file("sinfo.out"), long).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("f").display().to_string();
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &d, "--dry-run"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.len() < 2000, "{} bytes on stderr", err.len());
    assert!(
        err.contains(&format!(
            "not a Slurm node name: {}... (1048576 bytes)",
            "a".repeat(64)
        )),
        "{err}"
    );
    // 200 MB in one line: no node list is that long.
    with_sinfo(&slurm, "head -c 200000000 /dev/zero | tr '\\0' a");
    let (code, _, err) = slurm.run(&["fleet", "submit", "--dir", &d, "--dry-run"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("sinfo") && err.contains("printed more than 64 MiB"),
        "{err}"
    );
}

#[test]
fn a_node_in_a_state_slurm_does_not_have_is_left_out_with_one_line() {
    let slurm = FakeSlurm::new(
        b"n1 idle\nn2 1\nn3 weird$\nn4 mix-\nn5 alloc*\nn6 idle+drain\nn7 \x1b[2Jx\nn8 planned\n",
    );
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("f").display().to_string();
    let (code, out, err) = slurm.run(&["fleet", "submit", "--dir", &d, "--dry-run"]);
    assert_eq!(code, Some(0), "{err}");
    let odd: Vec<&str> = err.lines().filter(|l| l.contains("state Slurm")).collect();
    assert_eq!(
        odd,
        ["fleet: left out, in a state Slurm does not have: n2 (1), n3 (weird$), n7 (\\x1b[2Jx)"],
        "{err}"
    );
    assert!(!err.contains('\x1b'), "{err:?}");
    let nodes: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split("--nodelist=").nth(1))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert_eq!(nodes, ["n1", "n4", "n5", "n8"], "{out}");
}
