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

mod command;
mod sbatch;

pub(crate) use command::{Stopped, set_limit};
pub(crate) use sbatch::{Submit, output, script};

use anyhow::Result;
use command::slurm;
use std::path::Path;

/// What every fleet job's name starts with; the rest ties it to one
/// results folder (see [`job_name`]).
pub(crate) const JOB_NAME: &str = "numabench-fleet";

/// Whether `name` can be a Slurm node name: letters, digits, `-`, `_` and
/// `.`, as host names are. Anything else (a shell metacharacter, a control
/// character, bytes that are no UTF-8) is not passed on to sbatch or shown
/// raw.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Characters of one string from Slurm shown in a message.
const SHOWN_CHARS: usize = 64;

/// Items of a list from Slurm shown in a message.
const SHOWN_ITEMS: usize = 20;

/// Bytes from Slurm as text fit for a message line: escaped, and only
/// their start where they are long, with their length.
pub(crate) fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(SHOWN_CHARS) {
        None => crate::text::escape(&text).into_owned(),
        Some((cut, _)) => format!(
            "{}... ({} bytes)",
            crate::text::escape(&text[..cut]),
            bytes.len()
        ),
    }
}

/// `items` joined with ", ", the first [`SHOWN_ITEMS`] of them only.
pub(crate) fn shown_list(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(SHOWN_ITEMS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN_ITEMS {
        text.push_str(&format!(" and {} more", items.len() - SHOWN_ITEMS));
    }
    text
}

/// Node names read from Slurm, and what was refused as no name or for a
/// state no Slurm version has.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Listed {
    pub nodes: Vec<Node>,
    /// Refused names, escaped for a message.
    pub refused: Vec<String>,
    /// Nodes in a state not known, and the state, escaped: left out.
    pub odd_states: Vec<(String, String)>,
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
pub(crate) struct Node {
    pub name: String,
    /// Slurm's short state (`idle`, `alloc`, `down*`, `drain`, ...).
    pub state: String,
}

/// The flags sinfo appends to a state: not responding, powered down,
/// powering up, rebooting, powering down, reservation, ...
const STATE_FLAGS: [char; 9] = ['*', '~', '#', '!', '%', '$', '@', '^', '-'];

/// Slurm's node states, short (`%t`) and long (`%T`), over its versions.
const KNOWN_STATES: &[&str] = &[
    "alloc",
    "allocated",
    "blocked",
    "boot",
    "comp",
    "completing",
    "down",
    "drain",
    "drained",
    "draining",
    "drng",
    "fail",
    "failg",
    "failing",
    "future",
    "futr",
    "idle",
    "inval",
    "invalid",
    "maint",
    "maintenance",
    "mix",
    "mixed",
    "npc",
    "perfctrs",
    "planned",
    "plnd",
    "pow_dn",
    "pow_up",
    "power_down",
    "power_up",
    "powered_down",
    "powering_down",
    "powering_up",
    "reboot",
    "rebooting",
    "reserved",
    "resv",
    "unk",
    "unknown",
];

/// Whether `state` is one Slurm prints: known states joined by `+`, each
/// with any of sinfo's flags after it.
pub(crate) fn known_state(state: &str) -> bool {
    state.split('+').all(|part| {
        let base = part.trim_end_matches(STATE_FLAGS).to_ascii_lowercase();
        KNOWN_STATES.contains(&base.as_str())
    })
}

impl Node {
    /// Down, drained, draining, failed, future or powered down nodes start
    /// no new job: a job pinned to one would pend for ever.
    pub(crate) fn usable(&self) -> bool {
        !self.state.split('+').any(|part| {
            let s = part.trim_end_matches(STATE_FLAGS).to_ascii_lowercase();
            [
                "down",
                "drain",
                "drng",
                "fail",
                "futr",
                "future",
                "inval",
                "npc",
                "perfctrs",
                "pow_dn",
                "power_down",
                "powered_down",
                "powering_down",
                "unk",
            ]
            .iter()
            .any(|bad| s.starts_with(bad))
        })
    }
}

/// `sinfo -h -N -o '%N %t'` lines: a node once even where it is in several
/// partitions; names that are no Slurm node name refused.
pub(crate) fn parse_nodes(text: &[u8]) -> Listed {
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
        // No state at all is read as Slurm's own "unknown".
        let raw = f.next().unwrap_or(b"unknown");
        let state = match std::str::from_utf8(raw) {
            Ok(s) if known_state(s) => s,
            _ => {
                if !out.odd_states.iter().any(|(n, _)| n == name) {
                    out.odd_states.push((name.to_string(), shown(raw)));
                }
                continue;
            }
        };
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
pub(crate) fn nodes(partition: Option<&str>, nodelist: Option<&str>) -> Result<Listed> {
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
    let odd = |name: &String| listed.odd_states.iter().any(|(n, _)| n == name);
    Ok(Listed {
        nodes: names
            .into_iter()
            .filter(|name| !odd(name))
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
        odd_states: listed.odd_states,
    })
}

/// The name of the fleet jobs writing into `dir` (a canonical path): a
/// stable hash of it, so that jobs for another folder, or of another
/// user's submission to it, are never taken for this one's.
pub(crate) fn job_name(dir: &Path) -> String {
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
pub(crate) struct Queued {
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
    pub(crate) fn live(&self) -> bool {
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
pub(crate) fn parse_queue(text: &[u8], name: &str) -> Vec<Queued> {
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
pub(crate) fn queue(name: &str) -> Result<Vec<Queued>> {
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
    fn slurms_states_are_known_with_their_flags_and_others_are_not() {
        for known in [
            "idle",
            "mix-",
            "alloc*",
            "drain~",
            "drng@",
            "comp#",
            "down$",
            "maint%",
            "resv!",
            "planned^",
            "powered_down",
            "powering_up~",
            "idle+drain",
            "INVAL",
            "unk*",
            "futr",
        ] {
            assert!(known_state(known), "{known}");
        }
        for odd in ["1", "weird$", "", "idle+", "idle+x", "x*"] {
            assert!(!known_state(odd), "{odd}");
        }
        let l = parse_nodes(b"n1 idle\nn2 1\nn2 1\nn3 weird$\nn4\n");
        let names: Vec<&str> = l.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["n1", "n4"]);
        assert_eq!(l.nodes[1].state, "unknown");
        assert_eq!(
            l.odd_states,
            [("n2".into(), "1".into()), ("n3".into(), "weird$".into())]
        );
    }

    #[test]
    fn a_long_string_or_list_is_shown_in_part() {
        let long = vec![b'a'; 1000];
        assert_eq!(shown(&long), format!("{}... (1000 bytes)", "a".repeat(64)));
        assert_eq!(shown(b"n\x1b"), "n\\x1b");
        let items: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        let text = shown_list(&items);
        assert!(
            text.starts_with("0, 1, ") && text.ends_with("19 and 5 more"),
            "{text}"
        );
    }
}
