//! The fleet jobs: `submit` runs `numabench run` on every node of a Slurm
//! partition, one exclusive job per node, each writing its results folder
//! under `DIR/<node name>`; `scan` reads back every results document under
//! a folder for `fleet report` and `fleet compare`.

pub mod scan;
pub mod slurm;

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `fleet submit` was asked.
#[derive(Debug, Clone)]
pub struct SubmitOptions {
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
}

/// Where a node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
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
pub fn progress_line(states: &BTreeMap<String, State>) -> String {
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

/// The state of every node from the queue and the folder.
fn states(dir: &Path, nodes: &[String], queue: &[slurm::Queued]) -> BTreeMap<String, State> {
    nodes
        .iter()
        .map(|n| {
            let queued = queue.iter().find(|q| &q.node == n);
            let s = if done(dir, n) {
                State::Done
            } else {
                match queued.map(|q| q.state.as_str()) {
                    Some("RUNNING" | "COMPLETING" | "CONFIGURING") => State::Running,
                    Some(_) => State::Pending,
                    None => State::Failed,
                }
            };
            (n.clone(), s)
        })
        .collect()
}

/// Submits a job for every node that has no results and no job queued;
/// with `wait`, follows them to the end. `say` gets each progress line for
/// the user; `show` what a dry run would submit (its sbatch lines and the
/// job script), the output of a dry run. The error after waiting names the
/// nodes that failed.
pub fn submit(
    o: &SubmitOptions,
    say: &mut dyn FnMut(&str),
    show: &mut dyn FnMut(&str),
) -> Result<()> {
    let listed = slurm::nodes(o.partition.as_deref(), o.nodelist.as_deref())?;
    if listed.is_empty() {
        return Err(crate::error::usage(
            "Slurm lists no node for that partition or node list",
        ));
    }
    let unusable: Vec<String> = listed
        .iter()
        .filter(|n| !n.usable())
        .map(|n| format!("{} ({})", n.name, n.state))
        .collect();
    if !unusable.is_empty() {
        say(&format!(
            "fleet: left out, Slurm starts no job there: {}",
            unusable.join(", ")
        ));
    }
    let nodes: Vec<String> = listed
        .into_iter()
        .filter(slurm::Node::usable)
        .map(|n| n.name)
        .collect();
    // The jobs start elsewhere: the folder goes to them as an absolute path.
    let dir = if o.dry_run {
        std::path::absolute(&o.dir)?
    } else {
        std::fs::create_dir_all(o.dir.join(".fleet/logs"))
            .with_context(|| format!("cannot create {}", o.dir.display()))?;
        o.dir.canonicalize()?
    };
    let logs = dir.join(".fleet/logs");
    let queue = slurm::queue()?;
    let script = slurm::script(&o.numabench, &o.profile, &dir);
    // Complete documents anywhere under DIR count, whatever put them there
    // (an earlier submission, a copy by hand), as they do for the report.
    let have: std::collections::BTreeSet<String> = match scan::scan(&dir) {
        Ok(s) => s
            .machines
            .into_iter()
            .filter(|m| m.complete)
            .map(|m| m.name)
            .collect(),
        Err(_) => Default::default(),
    };
    let (mut already, mut queued, mut submitted) = (0, 0, Vec::new());
    for node in &nodes {
        if have.contains(node) || done(&dir, node) {
            already += 1;
            continue;
        }
        if queue.iter().any(|q| &q.node == node) {
            queued += 1;
            continue;
        }
        let job = slurm::Submit {
            node,
            partition: o.partition.as_deref(),
            time: o.time.as_deref(),
            logs: &logs,
            extra: &o.extra,
        };
        if o.dry_run {
            show(&format!("sbatch {}", job.args().join(" ")));
            submitted.push((node.clone(), String::new()));
            continue;
        }
        let id = job.run(&script).with_context(|| {
            format!(
                "submitted {} job(s) before this one; run fleet submit again for the rest",
                submitted.len()
            )
        })?;
        submitted.push((node.clone(), id));
    }
    if o.dry_run {
        show(&format!("# the script given to sbatch on stdin:\n{script}"));
    }
    say(&format!(
        "fleet: {} node(s): {} {}, {} with results already, {} queued already; results under {}",
        nodes.len(),
        submitted.len(),
        if o.dry_run { "to submit" } else { "submitted" },
        already,
        queued,
        dir.display()
    ));
    if !o.wait || o.dry_run {
        return Ok(());
    }
    wait(&dir, &nodes, o.poll, say)
}

/// Polls the queue and the folder until no node is running or pending,
/// a line each time the counts change.
fn wait(dir: &Path, nodes: &[String], poll: Duration, say: &mut dyn FnMut(&str)) -> Result<()> {
    let mut last = String::new();
    loop {
        let s = states(dir, nodes, &slurm::queue()?);
        let line = progress_line(&s);
        if line != last {
            say(&line);
            last = line;
        }
        if !s
            .values()
            .any(|x| matches!(x, State::Running | State::Pending))
        {
            let failed: Vec<&str> = s
                .iter()
                .filter(|(_, x)| **x == State::Failed)
                .map(|(n, _)| n.as_str())
                .collect();
            if failed.is_empty() {
                return Ok(());
            }
            anyhow::bail!(
                "{} node(s) ended without results: {} (their logs: {}/<node>-<job>.log)",
                failed.len(),
                failed.join(", "),
                dir.join(".fleet/logs").display()
            );
        }
        if crate::interrupt::requested().is_some() {
            anyhow::bail!(
                "stopped waiting; the jobs go on (fleet submit --wait follows them again)"
            );
        }
        std::thread::sleep(poll);
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
        let nodes: Vec<String> = ["n1", "n2", "n3", "n4"].map(String::from).to_vec();
        let q = slurm::parse_queue("5|RUNNING|n2\n6|PENDING|n3\n7|RUNNING|n1\n");
        let s = states(dir.path(), &nodes, &q);
        assert_eq!(s["n1"], State::Done);
        assert_eq!(s["n2"], State::Running);
        assert_eq!(s["n3"], State::Pending);
        assert_eq!(s["n4"], State::Failed);
        assert_eq!(
            progress_line(&s),
            "fleet: 1 done, 1 running, 1 pending, 1 failed of 4 node(s)"
        );
    }
}
