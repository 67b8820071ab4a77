//! Slurm as `fleet submit` uses it: its own commands (`sinfo`, `scontrol`,
//! `squeue`, `sbatch`), run as a user would run them, their output parsed
//! here. Nothing else of the fleet knows Slurm.
//!
//! One batch job per node, pinned with `--nodelist=NODE --nodes=1
//! --exclusive`, not a job array: an array's tasks cannot each be given a
//! node (`--nodelist` on an array asks every task for every listed node), so
//! an array of N tasks over N nodes lands where the scheduler likes: twice
//! on a node that was free, never on one that was busy. One job per node
//! is what Cbench's node tests did too, and it starts each node's run as
//! soon as that node is free, whatever the others do. `MaxArraySize` thus
//! never limits a submission; `MaxSubmitJobs` may, and a refused `sbatch`
//! stops the submission with what was submitted kept (run it again for the
//! rest: nothing done or queued is submitted twice).

use anyhow::{Context, Result, bail};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What every fleet job's name starts with; the rest ties it to one
/// results folder (see [`job_name`]).
pub const JOB_NAME: &str = "numabench-fleet";

/// How long one Slurm command may take, in milliseconds.
static LIMIT_MS: AtomicU64 = AtomicU64::new(60_000);

/// Sets how long one Slurm command may take before it is stopped.
pub fn set_limit(limit: Duration) {
    LIMIT_MS.store(
        u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
        Ordering::SeqCst,
    );
}

fn limit() -> Duration {
    Duration::from_millis(LIMIT_MS.load(Ordering::SeqCst))
}

/// A stop signal arrived while a Slurm command that only reads was running;
/// the command was stopped.
#[derive(Debug)]
pub struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped")
    }
}

impl std::error::Error for Stopped {}

/// Kills the child's process group (the command and anything it started)
/// and reaps the child.
fn stop(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        crate::interrupt::pass_on(-pid, libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs a Slurm command and returns its stdout; the error names the
/// command and quotes its stderr. A command still running after the limit
/// is killed: a controller that does not answer must not hang the
/// submission. Only `sbatch` is left to finish after a stop signal, so that
/// a job it submitted is counted.
fn slurm(cmd: &str, args: &[&str], stdin: Option<&str>) -> Result<Vec<u8>> {
    let limit = limit();
    let mut c = Command::new(cmd);
    c.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own group: a terminal's Ctrl-C reaches this process alone, which
    // decides what to stop, and a timeout kills what the command started.
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let mut child = c.spawn().with_context(|| {
        format!("cannot run {cmd} (is Slurm installed and on PATH on this machine?)")
    })?;
    let start = Instant::now();
    if let Some(text) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().context("no stdin pipe")?;
        // A job script is far below a pipe's buffer: this does not block.
        let _ = pipe.write_all(text.as_bytes());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let mut readers = 0;
    for (which, pipe) in [
        (
            0,
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
        (
            1,
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
    ] {
        let Some(mut pipe) = pipe else { continue };
        let tx = tx.clone();
        readers += 1;
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            let _ = tx.send((which, buf));
        });
    }
    drop(tx);
    let stoppable = cmd != "sbatch";
    let mut status = None;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut got = 0;
    let mut timed_out = false;
    while status.is_none() || got < readers {
        if stoppable && crate::interrupt::requested().is_some() {
            stop(&mut child);
            return Err(Stopped.into());
        }
        if start.elapsed() >= limit {
            timed_out = true;
            stop(&mut child);
            break;
        }
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok((0, b)) => (out, got) = (b, got + 1),
            Ok((_, b)) => (err, got) = (b, got + 1),
            Err(_) => {}
        }
        if status.is_none() {
            status = child.try_wait()?;
        }
    }
    if timed_out {
        bail!(
            "{cmd} {} gave no answer in {} s and was stopped (is slurmctld reachable from here?)",
            crate::text::escape(&args.join(" ")),
            limit.as_secs_f64()
        );
    }
    let status = status.context("the command's status was lost")?;
    if !status.success() {
        let err = String::from_utf8_lossy(&err);
        // sinfo and squeue only read; when they fail, Slurm is not usable
        // from this machine at all.
        let hint = if cmd == "sbatch" {
            ""
        } else {
            "; run fleet submit where Slurm's commands work (a login node), or copy the nodes' results folders under one folder and run 'numabench fleet report' on it"
        };
        bail!(
            "{cmd} {} failed ({}): {}{hint}",
            crate::text::escape(&args.join(" ")),
            status,
            crate::text::escape(err.trim())
        );
    }
    Ok(out)
}

/// Whether `name` can be a Slurm node name: letters, digits, `-`, `_` and
/// `.`, as host names are. Anything else (a shell metacharacter, a control
/// character, bytes that are no UTF-8) is not passed on to sbatch or shown
/// raw.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Bytes from Slurm as text fit for a message line.
fn shown(bytes: &[u8]) -> String {
    crate::text::escape(&String::from_utf8_lossy(bytes)).into_owned()
}

/// Node names read from Slurm, and what was refused as no name.
#[derive(Debug, Default, PartialEq)]
pub struct Listed {
    pub nodes: Vec<Node>,
    /// Refused names, escaped for a message.
    pub refused: Vec<String>,
}

/// Distinct valid names, one a line, in their order.
fn names(text: &[u8]) -> (Vec<String>, Vec<String>) {
    let (mut out, mut refused): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for l in text.split(|b| *b == b'\n').map(<[u8]>::trim_ascii) {
        if l.is_empty() {
            continue;
        }
        match std::str::from_utf8(l) {
            Ok(n) if valid_name(n) => {
                if !out.iter().any(|o| o == n) {
                    out.push(n.to_string());
                }
            }
            _ => refused.push(shown(l)),
        }
    }
    (out, refused)
}

/// A node and whether Slurm would start a job on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
    /// Slurm's short state (`idle`, `alloc`, `down*`, `drain`, ...).
    pub state: String,
}

impl Node {
    /// Down, drained, draining, failed or future nodes start no new job: a
    /// job pinned to one would pend for ever.
    pub fn usable(&self) -> bool {
        let s = self
            .state
            .trim_end_matches(['*', '~', '#', '!', '%', '$', '@', '^', '-']);
        ![
            "down", "drain", "drng", "fail", "futr", "npc", "pow_dn", "unk",
        ]
        .iter()
        .any(|bad| s.starts_with(bad))
    }
}

/// `sinfo -h -N -o '%N %t'` lines: a node once even where it is in several
/// partitions; names that are no Slurm node name refused.
pub fn parse_nodes(text: &[u8]) -> Listed {
    let mut out = Listed::default();
    for l in text.split(|b| *b == b'\n') {
        let mut f = l.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty());
        let Some(name) = f.next() else { continue };
        let name = match std::str::from_utf8(name) {
            Ok(n) if valid_name(n) => n,
            _ => {
                out.refused.push(shown(name));
                continue;
            }
        };
        let state = f
            .next()
            .and_then(|s| std::str::from_utf8(s).ok())
            .filter(|s| s.bytes().all(|b| b.is_ascii_graphic()))
            .unwrap_or("unknown");
        if !out.nodes.iter().any(|n| n.name == name) {
            out.nodes.push(Node {
                name: name.to_string(),
                state: state.to_string(),
            });
        }
    }
    out
}

/// The nodes of a partition (every partition's where `None`), or those of
/// a node list such as `n[1-4],m7` as Slurm expands it, with their states.
pub fn nodes(partition: Option<&str>, nodelist: Option<&str>) -> Result<Listed> {
    let mut args = vec!["-h", "-N", "-o", "%N %t"];
    if let Some(p) = partition {
        args.extend(["-p", p]);
    }
    let listed = parse_nodes(&slurm("sinfo", &args, None)?);
    let Some(list) = nodelist else {
        return Ok(listed);
    };
    let (names, mut refused) = names(&slurm("scontrol", &["show", "hostnames", list], None)?);
    refused.extend(listed.refused);
    Ok(Listed {
        nodes: names
            .into_iter()
            .map(|name| {
                let state = listed
                    .nodes
                    .iter()
                    .find(|n| n.name == name)
                    .map_or_else(|| "unknown".to_string(), |n| n.state.clone());
                Node { name, state }
            })
            .collect(),
        refused,
    })
}

/// The name of the fleet jobs writing into `dir` (a canonical path): a
/// stable hash of it, so that jobs for another folder, or of another
/// user's submission to it, are never taken for this one's.
pub fn job_name(dir: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    // FNV-1a: the same on every build and machine, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in dir.as_os_str().as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{JOB_NAME}-{h:016x}")
}

/// A fleet job in the queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    pub id: String,
    /// Slurm's state: `PENDING`, `RUNNING`, `COMPLETING`, ...
    pub state: String,
    /// The job's name (see [`job_name`]).
    pub name: String,
    /// The node it asked for.
    pub node: String,
}

impl Queued {
    /// Whether the job is still to run or running. A COMPLETING job has
    /// ended (its script has exited, Slurm is cleaning up after it), as
    /// has one in any final state squeue may still show: whatever results
    /// it left are in the folder already.
    pub fn live(&self) -> bool {
        !matches!(
            self.state.as_str(),
            "COMPLETING"
                | "COMPLETED"
                | "CANCELLED"
                | "FAILED"
                | "TIMEOUT"
                | "NODE_FAIL"
                | "PREEMPTED"
                | "BOOT_FAIL"
                | "DEADLINE"
                | "OUT_OF_MEMORY"
                | "SPECIAL_EXIT"
                | "REVOKED"
        )
    }
}

/// `squeue -o %i|%T|%j|%n` lines of the jobs named `name`.
pub fn parse_queue(text: &[u8], name: &str) -> Vec<Queued> {
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(|l| {
            let mut f = l.trim().splitn(4, '|');
            let (id, state, job, node) = (f.next()?, f.next()?, f.next()?, f.next()?);
            (!id.is_empty() && job == name).then(|| Queued {
                id: id.to_string(),
                state: state.to_string(),
                name: job.to_string(),
                node: node.to_string(),
            })
        })
        .collect()
}

/// This user's fleet jobs for the folder whose jobs are named `name`.
pub fn queue(name: &str) -> Result<Vec<Queued>> {
    let filter = format!("--name={name}");
    Ok(parse_queue(
        &slurm(
            "squeue",
            &["-h", "--me", &filter, "-o", "%i|%T|%j|%n"],
            None,
        )?,
        name,
    ))
}

/// `s` as one shell word.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `s` as one shell word, quoted only where the shell would read it
/// otherwise.
pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_=+/.,:@%".contains(&b))
    {
        s.to_string()
    } else {
        shell_quote(s)
    }
}

/// The batch script of one node's job: `numabench run` into the folder
/// named by the node Slurm says the job is on.
pub fn script(numabench: &Path, profile: &str, dir: &Path) -> String {
    format!(
        "#!/bin/sh\n\
         # numabench fleet: one node's run, its results under DIR/<node name>.\n\
         exec {} run --profile {} --dir {}/\"$SLURMD_NODENAME\"\n",
        shell_quote(&numabench.display().to_string()),
        shell_quote(profile),
        shell_quote(&dir.display().to_string()),
    )
}

/// A node name as part of a file name: Slurm's names are plain already;
/// anything else becomes `_`.
fn plain(node: &str) -> String {
    node.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The `--output` of a node's job writing into `logs`, and the log's name
/// as told to a person. sbatch reads the whole value as a filename pattern:
/// `%` is doubled so that a folder's `%u` or `%j` stays itself; a backslash
/// anywhere turns every pattern off (and is itself removed unless doubled),
/// so a folder holding one gets its backslashes doubled and logs without
/// the job id, each attempt appended to the node's one log.
pub fn output(logs: &Path, node: &str) -> (String, String, bool) {
    let dir = logs.display().to_string();
    let node = plain(node);
    if dir.contains('\\') {
        (
            format!("{}/{node}.log", dir.replace('\\', "\\\\")),
            format!("{dir}/<node>.log"),
            true,
        )
    } else {
        (
            format!("{}/{node}-%j.log", dir.replace('%', "%%")),
            format!("{dir}/<node>-<job>.log"),
            false,
        )
    }
}

/// What `sbatch` is given for one node besides the script.
pub struct Submit<'a> {
    pub node: &'a str,
    /// The job's name, from [`job_name`].
    pub name: &'a str,
    pub partition: Option<&'a str>,
    pub time: Option<&'a str>,
    pub logs: &'a Path,
    pub extra: &'a [String],
}

impl Submit<'_> {
    pub fn args(&self) -> Vec<String> {
        let (output, _, append) = output(self.logs, self.node);
        let mut a = vec![
            "--parsable".to_string(),
            format!("--job-name={}", self.name),
            format!("--nodelist={}", self.node),
            "--nodes=1".into(),
            "--ntasks=1".into(),
            "--exclusive".into(),
            format!("--output={output}"),
        ];
        if append {
            a.push("--open-mode=append".into());
        }
        if let Some(p) = self.partition {
            a.push(format!("--partition={p}"));
        }
        if let Some(t) = self.time {
            a.push(format!("--time={t}"));
        }
        a.extend(self.extra.iter().cloned());
        a
    }

    /// The sbatch command line, every word quoted for a shell.
    pub fn shown(&self) -> String {
        std::iter::once("sbatch".to_string())
            .chain(self.args().iter().map(|a| shell_word(a)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Submits the job; its id.
    pub fn run(&self, script: &str) -> Result<String> {
        let args = self.args();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = slurm("sbatch", &refs, Some(script))?;
        parse_job_id(&out).with_context(|| format!("sbatch for node {}", self.node))
    }
}

/// `sbatch --parsable`'s answer: `id` or `id;cluster`, the id a number.
pub fn parse_job_id(out: &[u8]) -> Result<String> {
    let text = std::str::from_utf8(out).ok().map(str::trim);
    let id = text.and_then(|t| t.split(';').next()).unwrap_or("");
    if id.is_empty() || id.len() > 20 || !id.bytes().all(|b| b.is_ascii_digit()) {
        let mut got = shown(out.trim_ascii());
        if got.len() > 80 {
            let cut = (0..=80)
                .rev()
                .find(|i| got.is_char_boundary(*i))
                .unwrap_or(0);
            got.truncate(cut);
            got.push_str("...");
        }
        bail!("gave no job id but \"{got}\"");
    }
    Ok(id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_lines_of_this_folders_jobs_are_read() {
        let q = parse_queue(
            b"12|PENDING|numabench-fleet-a|n1\n13|RUNNING|numabench-fleet-a|n2\n14|RUNNING|numabench-fleet-b|n3\n\n",
            "numabench-fleet-a",
        );
        assert_eq!(q.len(), 2);
        assert_eq!(q[1].state, "RUNNING");
        assert_eq!(q[1].node, "n2");
        assert!(q[1].live());
        let ending = parse_queue(b"15|COMPLETING|x|n1\n", "x");
        assert!(!ending[0].live());
    }

    #[test]
    fn a_job_name_is_stable_and_differs_by_folder() {
        let a = job_name(Path::new("/shared/fleet"));
        assert_eq!(a, job_name(Path::new("/shared/fleet")));
        assert_ne!(a, job_name(Path::new("/shared/fleet2")));
        assert!(a.starts_with("numabench-fleet-") && a.len() == 32, "{a}");
    }

    #[test]
    fn the_script_quotes_every_path() {
        let s = script(Path::new("/opt/nb it's"), "quick", Path::new("/shared/f"));
        assert!(
            s.contains("exec '/opt/nb it'\\''s' run --profile 'quick' --dir '/shared/f'/\"$SLURMD_NODENAME\""),
            "{s}"
        );
    }

    fn job<'a>(logs: &'a Path, extra: &'a [String]) -> Submit<'a> {
        Submit {
            node: "n7",
            name: "numabench-fleet-x",
            partition: Some("batch"),
            time: Some("10:00"),
            logs,
            extra,
        }
    }

    #[test]
    fn one_exclusive_node_per_job() {
        let extra = ["--account=x".to_string()];
        let a = job(Path::new("/d/.fleet/logs"), &extra).args().join(" ");
        for want in [
            "--job-name=numabench-fleet-x",
            "--nodelist=n7",
            "--nodes=1",
            "--exclusive",
            "--partition=batch",
            "--time=10:00",
            "--output=/d/.fleet/logs/n7-%j.log",
            "--account=x",
        ] {
            assert!(a.contains(want), "{a}");
        }
    }

    #[test]
    fn a_folders_percent_and_backslash_reach_sbatch_literally() {
        let (o, shown, append) = output(Path::new("/d/100%u/.fleet/logs"), "n7");
        assert_eq!(o, "/d/100%%u/.fleet/logs/n7-%j.log");
        assert_eq!(shown, "/d/100%u/.fleet/logs/<node>-<job>.log");
        assert!(!append);
        let (o, shown, append) = output(Path::new("/d/a\\b%j/.fleet/logs"), "n7");
        assert_eq!(o, "/d/a\\\\b%j/.fleet/logs/n7.log");
        assert_eq!(shown, "/d/a\\b%j/.fleet/logs/<node>.log");
        assert!(append);
        let extra = [];
        let logs = Path::new("/d/a\\b/.fleet/logs");
        assert!(
            job(logs, &extra)
                .args()
                .contains(&"--open-mode=append".to_string())
        );
    }

    #[test]
    fn a_shown_sbatch_line_quotes_what_a_shell_would_read() {
        let extra = ["--comment=it's $(x)".to_string()];
        let line = job(Path::new("/d/a b/.fleet/logs"), &extra).shown();
        assert!(
            line.starts_with("sbatch --parsable --job-name=numabench-fleet-x --nodelist=n7 "),
            "{line}"
        );
        assert!(
            line.contains(" '--output=/d/a b/.fleet/logs/n7-%j.log' "),
            "{line}"
        );
        assert!(line.ends_with(" '--comment=it'\\''s $(x)'"), "{line}");
    }

    #[test]
    fn only_a_number_is_a_job_id() {
        assert_eq!(parse_job_id(b"123\n").unwrap(), "123");
        assert_eq!(parse_job_id(b"123;cluster2\n").unwrap(), "123");
        for bad in [&b""[..], b"\n", b"abc", b"12 3", b"-1", b"\x1b[31m9\xff"] {
            let e = parse_job_id(bad).unwrap_err().to_string();
            assert!(e.starts_with("gave no job id but \""), "{e}");
            assert!(!e.chars().any(char::is_control), "{e:?}");
        }
    }

    #[test]
    fn node_lines_are_distinct_and_odd_names_refused() {
        assert_eq!(names(b"n1\nn2\nn1\n\n").0, ["n1", "n2"]);
        let l = parse_nodes(
            b"n1 idle\nn2 down*\nn1 idle\nn3 drain\nn4 alloc\nn5 mix~\n$(touch${IFS}x) idle\nn\xff idle\nn\x1b[2J idle\n",
        );
        let usable: Vec<&str> = l
            .nodes
            .iter()
            .filter(|x| x.usable())
            .map(|x| x.name.as_str())
            .collect();
        assert_eq!(usable, ["n1", "n4", "n5"]);
        assert_eq!(l.refused.len(), 3, "{:?}", l.refused);
        assert_eq!(l.refused[0], "$(touch${IFS}x)");
        assert!(l.refused.iter().all(|r| !r.chars().any(char::is_control)));
        assert_eq!(l.refused[2], "n\\x1b[2J");
        let (_, refused) = names(b"n1\nn;rm\n");
        assert_eq!(refused, ["n;rm"]);
    }

    #[test]
    fn a_command_that_hangs_is_stopped_at_the_limit() {
        set_limit(Duration::from_millis(300));
        let t = Instant::now();
        let e = slurm("sh", &["-c", "sleep 30 & sleep 30"], None).unwrap_err();
        set_limit(Duration::from_secs(60));
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(e.to_string().contains("gave no answer in 0.3 s"), "{e}");
    }
}
