//! The fleet jobs: `submit` runs `numabench run` on every node of a Slurm
//! partition, one exclusive job per node, each writing its results folder
//! under `DIR/<node name>`; `scan` reads back every results document under
//! a folder for `fleet report` and `fleet compare`.

pub(crate) mod scan;
pub(crate) mod slurm;

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `fleet submit` was asked.
#[derive(Debug, Clone)]
pub(crate) struct SubmitOptions {
    pub dir: PathBuf,
    pub partition: Option<String>,
    pub nodelist: Option<String>,
    pub profile: String,
    /// The numabench every node runs (on a shared file system).
    pub numabench: PathBuf,
    pub time: Option<String>,
    /// Further sbatch options, as given.
    pub extra: Vec<String>,
    pub wait: bool,
    pub poll: Duration,
    pub dry_run: bool,
    /// How long one Slurm command may take.
    pub slurm_limit: Duration,
}

/// A stop signal (its number) ended the submission or the wait, after the
/// line saying what goes on was said.
#[derive(Debug)]
pub(crate) struct Interrupted(pub i32);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stopped by {}", crate::interrupt::name(self.0))
    }
}

impl std::error::Error for Interrupted {}

/// Where a node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum State {
    Done,
    Running,
    Pending,
    /// Its job left the queue without a complete results document.
    Failed,
}

/// Whether `DIR/<node>` holds a complete results document.
fn done(dir: &Path, node: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir.join(node)) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path().join("results.json");
        p.is_file() && crate::results::LeanDocument::load(&p).is_ok_and(|d| d.complete)
    })
}

/// The counts as one progress line.
pub(crate) fn progress_line(states: &BTreeMap<String, State>) -> String {
    let n = |s: State| states.values().filter(|x| **x == s).count();
    format!(
        "fleet: {} done, {} running, {} pending, {} failed of {} node(s)",
        n(State::Done),
        n(State::Running),
        n(State::Pending),
        n(State::Failed),
        states.len()
    )
}

/// The state of every node from the queue and the folder. A job that is
/// COMPLETING counts as running until it leaves the queue: it is judged
/// by what it left only then.
fn states(dir: &Path, nodes: &[String], queue: &[slurm::Queued]) -> BTreeMap<String, State> {
    nodes
        .iter()
        .map(|n| {
            let jobs: Vec<&slurm::Queued> = queue.iter().filter(|q| &q.node == n).collect();
            let s = if done(dir, n) {
                State::Done
            } else if jobs
                .iter()
                .any(|q| matches!(q.state.as_str(), "RUNNING" | "CONFIGURING" | "COMPLETING"))
            {
                State::Running
            } else if jobs.iter().any(|q| q.live()) {
                State::Pending
            } else {
                State::Failed
            };
            (n.clone(), s)
        })
        .collect()
}

/// `dir` as the jobs will see it, absolute and without links, also where
/// it is not made yet (a dry run makes nothing).
fn canonical(dir: &Path) -> Result<PathBuf> {
    if let Ok(c) = dir.canonicalize() {
        return Ok(c);
    }
    let abs = std::path::absolute(dir)?;
    match (abs.parent().map(Path::canonicalize), abs.file_name()) {
        (Some(Ok(parent)), Some(name)) => Ok(parent.join(name)),
        _ => Ok(abs),
    }
}

/// Held while one `fleet submit` reads the queue and submits into a
/// folder, so that two at once do not both submit every node; the lock
/// goes with the process, however it ends.
struct Lock {
    _file: std::fs::File,
}

fn lock(dir: &Path) -> Result<Lock> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(".fleet/submit.lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    // SAFETY: flock on a descriptor this File owns; no memory is passed.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            anyhow::bail!(
                "another fleet submit is submitting into {} now; run this one again when it has finished (its jobs then count as queued)",
                dir.display()
            );
        }
        return Err(e).with_context(|| format!("cannot lock {}", path.display()));
    }
    Ok(Lock { _file: f })
}

fn stopped_by(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<slurm::Stopped>())
}

/// Says `line` and gives the error that ends the command as a stop signal
/// does.
fn interrupted(line: &str, say: &mut dyn FnMut(&str)) -> anyhow::Error {
    say(line);
    Interrupted(crate::interrupt::requested().unwrap_or(libc::SIGINT)).into()
}

/// Turns an error from reading Slurm before anything was submitted into
/// [`Interrupted`] where a stop signal caused it.
fn before_submitting(e: anyhow::Error, say: &mut dyn FnMut(&str)) -> anyhow::Error {
    if stopped_by(&e) {
        interrupted("fleet: stopped before submitting anything", say)
    } else {
        e
    }
}

/// The nodes asked for that Slurm would start a job on; those left out,
/// and why, are said.
fn usable_nodes(o: &SubmitOptions, say: &mut dyn FnMut(&str)) -> Result<Vec<String>> {
    let listed = slurm::nodes(o.partition.as_deref(), o.nodelist.as_deref())
        .map_err(|e| before_submitting(e, say))?;
    if !listed.refused.is_empty() {
        say(&format!(
            "fleet: left out, not a Slurm node name: {}",
            slurm::shown_list(&listed.refused)
        ));
    }
    if !listed.odd_states.is_empty() {
        let odd: Vec<String> = listed
            .odd_states
            .iter()
            .map(|(n, s)| format!("{n} ({s})"))
            .collect();
        say(&format!(
            "fleet: left out, in a state Slurm does not have: {}",
            slurm::shown_list(&odd)
        ));
    }
    if listed.nodes.is_empty() && !(listed.refused.is_empty() && listed.odd_states.is_empty()) {
        anyhow::bail!("no node to submit to: Slurm listed no node with a valid name and state");
    }
    if listed.nodes.is_empty() {
        return Err(crate::error::usage(
            "Slurm lists no node for that partition or node list",
        ));
    }
    let unusable: Vec<String> = listed
        .nodes
        .iter()
        .filter(|n| !n.usable())
        .map(|n| format!("{} ({})", n.name, n.state))
        .collect();
    let nodes: Vec<String> = listed
        .nodes
        .into_iter()
        .filter(slurm::Node::usable)
        .map(|n| n.name)
        .collect();
    if nodes.is_empty() {
        anyhow::bail!(
            "no node to submit to: Slurm starts no job on {}",
            slurm::shown_list(&unusable)
        );
    }
    if !unusable.is_empty() {
        say(&format!(
            "fleet: left out, Slurm starts no job there: {}",
            slurm::shown_list(&unusable)
        ));
    }
    Ok(nodes)
}

/// The results folder as the jobs will see it, absolute since they start
/// elsewhere; made and locked unless this is a dry run.
fn results_folder(o: &SubmitOptions) -> Result<(PathBuf, Option<Lock>)> {
    if o.dry_run {
        return Ok((canonical(&o.dir)?, None));
    }
    std::fs::create_dir_all(o.dir.join(".fleet/logs"))
        .with_context(|| format!("cannot create {}", o.dir.display()))?;
    let dir = o.dir.canonicalize()?;
    let held = lock(&dir)?;
    Ok((dir, Some(held)))
}

/// Machines with a complete results document anywhere under `dir`,
/// whatever put it there (an earlier submission, a copy by hand), as they
/// count for the report.
fn with_results(dir: &Path) -> std::collections::BTreeSet<String> {
    match scan::scan(dir) {
        Ok(s) => s
            .machines
            .into_iter()
            .filter(|m| m.complete)
            .map(|m| m.name)
            .collect(),
        Err(_) => Default::default(),
    }
}

/// What every job of one submission shares.
struct Jobs<'a> {
    /// The results folder, canonical.
    dir: &'a Path,
    name: &'a str,
    logs: &'a Path,
    script: &'a str,
}

/// How the nodes of a submission stood and what was submitted.
#[derive(Default)]
struct Tally {
    already: usize,
    queued: usize,
    /// (node, job id); the id is empty in a dry run.
    submitted: Vec<(String, String)>,
}

/// Submits (or, in a dry run, shows) a job for each of `nodes` that has
/// no results and no live job in `queue`.
fn submit_missing(
    o: &SubmitOptions,
    jobs: &Jobs<'_>,
    nodes: &[String],
    queue: &[slurm::Queued],
    say: &mut dyn FnMut(&str),
    show: &mut dyn FnMut(&str),
) -> Result<Tally> {
    let have = with_results(jobs.dir);
    let mut t = Tally::default();
    for (i, node) in nodes.iter().enumerate() {
        if have.contains(node) || done(jobs.dir, node) {
            t.already += 1;
            continue;
        }
        // A COMPLETING job has ended: a node it left without results is
        // submitted again, and --exclusive starts the new job once Slurm
        // has cleaned the node.
        if queue.iter().any(|q| &q.node == node && q.live()) {
            t.queued += 1;
            continue;
        }
        if !o.dry_run && crate::interrupt::requested().is_some() {
            return Err(interrupted(
                &format!(
                    "fleet: stopped submitting; the {} submitted job(s) go on, {} node(s) not looked at (fleet submit again submits what is missing)",
                    t.submitted.len(),
                    nodes.len() - i
                ),
                say,
            ));
        }
        let job = slurm::Submit {
            node,
            name: jobs.name,
            partition: o.partition.as_deref(),
            time: o.time.as_deref(),
            logs: jobs.logs,
            extra: &o.extra,
        };
        if o.dry_run {
            show(&job.shown());
            t.submitted.push((node.clone(), String::new()));
            continue;
        }
        let id = job.run(jobs.script).with_context(|| {
            format!(
                "submitted {} job(s) before this one; run fleet submit again for the rest",
                t.submitted.len()
            )
        })?;
        t.submitted.push((node.clone(), id));
    }
    Ok(t)
}

/// Submits a job for every node that has no results and no job queued;
/// with `wait`, follows them to the end. `say` gets each progress line for
/// the user; `show` what a dry run would submit (its sbatch lines and the
/// job script), the output of a dry run. The error after waiting names the
/// nodes that failed; after a stop signal it is [`Interrupted`], once `say`
/// has told how many jobs go on.
pub(crate) fn submit(
    o: &SubmitOptions,
    say: &mut dyn FnMut(&str),
    show: &mut dyn FnMut(&str),
) -> Result<()> {
    slurm::set_limit(o.slurm_limit);
    let nodes = usable_nodes(o, say)?;
    let (dir, held) = results_folder(o)?;
    let name = slurm::job_name(&dir);
    let logs = dir.join(".fleet/logs");
    let queue = slurm::queue(&name).map_err(|e| before_submitting(e, say))?;
    let script = slurm::script(&o.numabench, &o.profile, &dir);
    let jobs = Jobs {
        dir: &dir,
        name: &name,
        logs: &logs,
        script: &script,
    };
    let tally = submit_missing(o, &jobs, &nodes, &queue, say, show)?;
    drop(held);
    if o.dry_run {
        show(&format!("# the script given to sbatch on stdin:\n{script}"));
    }
    say(&format!(
        "fleet: {} node(s): {} {}, {} with results already, {} queued already; results under {}",
        nodes.len(),
        tally.submitted.len(),
        if o.dry_run { "to submit" } else { "submitted" },
        tally.already,
        tally.queued,
        crate::text::escape(&dir.display().to_string())
    ));
    if !o.wait || o.dry_run {
        return Ok(());
    }
    let (_, shown_logs, _) = slurm::output(&logs, "");
    let going = tally.submitted.len() + tally.queued;
    wait(&dir, &name, &nodes, o.poll, going, &shown_logs, say)
}

/// Polls the queue and the folder until no node is running or pending,
/// a line each time the counts change.
fn wait(
    dir: &Path,
    name: &str,
    nodes: &[String],
    poll: Duration,
    mut going: usize,
    logs: &str,
    say: &mut dyn FnMut(&str),
) -> Result<()> {
    let mut last = String::new();
    let stop = |going: usize, say: &mut dyn FnMut(&str)| {
        interrupted(
            &format!(
                "fleet: stopped waiting; the {going} submitted job(s) go on (fleet submit --wait follows them again)"
            ),
            say,
        )
    };
    loop {
        let queue = match slurm::queue(name) {
            Ok(q) => q,
            Err(e) if stopped_by(&e) => return Err(stop(going, say)),
            Err(e) => return Err(e),
        };
        let s = states(dir, nodes, &queue);
        going = s
            .values()
            .filter(|x| matches!(x, State::Running | State::Pending))
            .count();
        let line = progress_line(&s);
        if line != last {
            say(&line);
            last = line;
        }
        if going == 0 {
            let failed: Vec<&str> = s
                .iter()
                .filter(|(_, x)| **x == State::Failed)
                .map(|(n, _)| n.as_str())
                .collect();
            if failed.is_empty() {
                return Ok(());
            }
            anyhow::bail!(
                "{} node(s) ended without results: {} (their logs: {})",
                failed.len(),
                failed.join(", "),
                crate::text::escape(logs)
            );
        }
        // Looked at often, so that a stop is answered at once, not after
        // a whole poll.
        let until = std::time::Instant::now() + poll;
        while std::time::Instant::now() < until {
            if crate::interrupt::requested().is_some() {
                return Err(stop(going, say));
            }
            std::thread::sleep(Duration::from_millis(50).min(poll));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_done_with_results_running_or_pending_in_the_queue_else_failed() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = crate::results::Document::new(&crate::topology::fixture("local-1node"));
        d.finish();
        std::fs::create_dir_all(dir.path().join("n1/h-1")).unwrap();
        d.save(&dir.path().join("n1/h-1/results.json")).unwrap();
        let q = slurm::parse_queue(
            b"5|RUNNING|j|n2\n6|PENDING|j|n3\n7|RUNNING|j|n1\n8|COMPLETING|j|n5\n9|PENDING|other|n4\n",
            "j",
        );
        let nodes: Vec<String> = ["n1", "n2", "n3", "n4", "n5"].map(String::from).to_vec();
        let s = states(dir.path(), &nodes, &q);
        assert_eq!(s["n1"], State::Done);
        assert_eq!(s["n2"], State::Running);
        assert_eq!(s["n3"], State::Pending);
        // Another folder's job is not this node's.
        assert_eq!(s["n4"], State::Failed);
        // Ending: judged once it has left the queue.
        assert_eq!(s["n5"], State::Running);
        assert_eq!(
            progress_line(&s),
            "fleet: 1 done, 2 running, 1 pending, 1 failed of 5 node(s)"
        );
    }
}
