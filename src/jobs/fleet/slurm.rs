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
use std::path::Path;
use std::process::{Command, Stdio};

/// The name every fleet job carries, by which `squeue` finds them.
pub const JOB_NAME: &str = "numabench-fleet";

/// Runs a Slurm command and returns its stdout; the error names the
/// command and quotes its stderr.
fn slurm(cmd: &str, args: &[&str], stdin: Option<&str>) -> Result<String> {
    let mut c = Command::new(cmd);
    c.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().with_context(|| {
        format!("cannot run {cmd} (is Slurm installed and on PATH on this machine?)")
    })?;
    if let Some(text) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().context("no stdin pipe")?;
        pipe.write_all(text.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // sinfo and squeue only read; when they fail, Slurm is not usable
        // from this machine at all.
        let hint = if cmd == "sbatch" {
            ""
        } else {
            "; run fleet submit where Slurm's commands work (a login node), or copy the nodes' results folders under one folder and run 'numabench fleet report' on it"
        };
        bail!(
            "{cmd} {} failed ({}): {}{hint}",
            args.join(" "),
            out.status,
            crate::text::escape(err.trim())
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Distinct lines, in their order.
fn names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !out.iter().any(|o| o == l) {
            out.push(l.to_string());
        }
    }
    out
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
/// partitions.
pub fn parse_nodes(text: &str) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for l in text.lines() {
        let mut f = l.split_whitespace();
        let (Some(name), state) = (f.next(), f.next().unwrap_or("unknown")) else {
            continue;
        };
        if !out.iter().any(|n| n.name == name) {
            out.push(Node {
                name: name.to_string(),
                state: state.to_string(),
            });
        }
    }
    out
}

/// The nodes of a partition (every partition's where `None`), or those of
/// a node list such as `n[1-4],m7` as Slurm expands it, with their states.
pub fn nodes(partition: Option<&str>, nodelist: Option<&str>) -> Result<Vec<Node>> {
    let mut args = vec!["-h", "-N", "-o", "%N %t"];
    if let Some(p) = partition {
        args.extend(["-p", p]);
    }
    let listed = parse_nodes(&slurm("sinfo", &args, None)?);
    let Some(list) = nodelist else {
        return Ok(listed);
    };
    Ok(
        names(&slurm("scontrol", &["show", "hostnames", list], None)?)
            .into_iter()
            .map(|name| {
                let state = listed
                    .iter()
                    .find(|n| n.name == name)
                    .map_or_else(|| "unknown".to_string(), |n| n.state.clone());
                Node { name, state }
            })
            .collect(),
    )
}

/// A fleet job in the queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    pub id: String,
    /// Slurm's state: `PENDING`, `RUNNING`, `COMPLETING`, ...
    pub state: String,
    /// The node it asked for.
    pub node: String,
}

/// `squeue -o %i|%T|%n` lines.
pub fn parse_queue(text: &str) -> Vec<Queued> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.trim().split('|');
            let (id, state, node) = (f.next()?, f.next()?, f.next()?);
            (!id.is_empty()).then(|| Queued {
                id: id.to_string(),
                state: state.to_string(),
                node: node.to_string(),
            })
        })
        .collect()
}

/// This user's fleet jobs in the queue now.
pub fn queue() -> Result<Vec<Queued>> {
    let name = format!("--name={JOB_NAME}");
    Ok(parse_queue(&slurm(
        "squeue",
        &["-h", "--me", &name, "-o", "%i|%T|%n"],
        None,
    )?))
}

/// `s` as one shell word.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
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

/// What `sbatch` is given for one node besides the script.
pub struct Submit<'a> {
    pub node: &'a str,
    pub partition: Option<&'a str>,
    pub time: Option<&'a str>,
    pub logs: &'a Path,
    pub extra: &'a [String],
}

impl Submit<'_> {
    pub fn args(&self) -> Vec<String> {
        let mut a = vec![
            "--parsable".to_string(),
            format!("--job-name={JOB_NAME}"),
            format!("--nodelist={}", self.node),
            "--nodes=1".into(),
            "--ntasks=1".into(),
            "--exclusive".into(),
            format!(
                "--output={}/{}-%j.log",
                self.logs.display(),
                plain(self.node)
            ),
        ];
        if let Some(p) = self.partition {
            a.push(format!("--partition={p}"));
        }
        if let Some(t) = self.time {
            a.push(format!("--time={t}"));
        }
        a.extend(self.extra.iter().cloned());
        a
    }

    /// Submits the job; its id.
    pub fn run(&self, script: &str) -> Result<String> {
        let args = self.args();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = slurm("sbatch", &refs, Some(script))?;
        // --parsable: "id" or "id;cluster".
        let id = out.trim().split(';').next().unwrap_or("").to_string();
        if id.is_empty() {
            bail!("sbatch gave no job id for node {}", self.node);
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_lines_are_read() {
        let q = parse_queue("12|PENDING|n1\n13|RUNNING|n2\n\n");
        assert_eq!(q.len(), 2);
        assert_eq!(q[1].state, "RUNNING");
        assert_eq!(q[1].node, "n2");
    }

    #[test]
    fn the_script_quotes_every_path() {
        let s = script(Path::new("/opt/nb it's"), "quick", Path::new("/shared/f"));
        assert!(
            s.contains("exec '/opt/nb it'\\''s' run --profile 'quick' --dir '/shared/f'/\"$SLURMD_NODENAME\""),
            "{s}"
        );
    }

    #[test]
    fn one_exclusive_node_per_job() {
        let extra = ["--account=x".to_string()];
        let s = Submit {
            node: "n7",
            partition: Some("batch"),
            time: Some("10:00"),
            logs: Path::new("/d/.fleet/logs"),
            extra: &extra,
        };
        let a = s.args().join(" ");
        for want in [
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
    fn node_lines_are_distinct() {
        assert_eq!(names("n1\nn2\nn1\n\n"), ["n1", "n2"]);
        let n = parse_nodes("n1 idle\nn2 down*\nn1 idle\nn3 drain\nn4 alloc\nn5 mix~\n");
        let usable: Vec<&str> = n
            .iter()
            .filter(|x| x.usable())
            .map(|x| x.name.as_str())
            .collect();
        assert_eq!(usable, ["n1", "n4", "n5"]);
    }
}
