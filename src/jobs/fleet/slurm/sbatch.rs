//! The batch job of one node as sbatch is given it: the script, the
//! command line (quoted for a person to run it again) and sbatch's answer.

use super::command::slurm;
use super::shown;
use anyhow::{Context, Result, bail};
use std::path::Path;

/// `s` as one shell word.
pub(super) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `s` as one shell word, quoted only where the shell would read it
/// otherwise.
pub(super) fn shell_word(s: &str) -> String {
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
pub(crate) fn script(numabench: &Path, profile: &str, dir: &Path) -> String {
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
pub(crate) fn output(logs: &Path, node: &str) -> (String, String, bool) {
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
pub(crate) struct Submit<'a> {
    pub node: &'a str,
    /// The job's name, from [`job_name`](super::job_name).
    pub name: &'a str,
    pub partition: Option<&'a str>,
    pub time: Option<&'a str>,
    pub logs: &'a Path,
    pub extra: &'a [String],
}

impl Submit<'_> {
    pub(crate) fn args(&self) -> Vec<String> {
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
    pub(crate) fn shown(&self) -> String {
        std::iter::once("sbatch".to_string())
            .chain(self.args().iter().map(|a| shell_word(a)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Submits the job; its id.
    pub(crate) fn run(&self, script: &str) -> Result<String> {
        let args = self.args();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = slurm("sbatch", &refs, Some(script))?;
        parse_job_id(&out).with_context(|| format!("sbatch for node {}", self.node))
    }
}

/// `sbatch --parsable`'s answer, `id` or `id;cluster`; or, from an sbatch
/// without `--parsable` or a wrapper around it, the number after the last
/// "Submitted batch job". The id is a whole number either way.
pub(super) fn parse_job_id(out: &[u8]) -> Result<String> {
    const SAID: &[u8] = b"Submitted batch job ";
    let text = out.trim_ascii();
    let said = (0..text.len().saturating_sub(SAID.len() - 1))
        .rev()
        .find(|&i| text[i..].starts_with(SAID));
    let id: &[u8] = match said {
        Some(i) => {
            let rest = &text[i + SAID.len()..];
            let end = rest
                .iter()
                .position(|b| !b.is_ascii_digit())
                .unwrap_or(rest.len());
            // "12" or "12 on cluster x", never "12abc".
            let whole = rest.get(end).is_none_or(|b| b.is_ascii_whitespace());
            if whole { &rest[..end] } else { b"" }
        }
        None => text.split(|b| *b == b';').next().unwrap_or(b""),
    };
    if id.is_empty() || id.len() > 20 || !id.iter().all(u8::is_ascii_digit) {
        bail!("gave no job id but \"{}\"", shown(text));
    }
    Ok(String::from_utf8_lossy(id).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(parse_job_id(b"Submitted batch job 12\n").unwrap(), "12");
        assert_eq!(
            parse_job_id(b"sbatch: note: 3 GPUs\nSubmitted batch job 77 on cluster c2\n").unwrap(),
            "77"
        );
        for bad in [
            &b""[..],
            b"\n",
            b"abc",
            b"12 3",
            b"-1",
            b"\x1b[31m9\xff",
            b"Submitted batch job",
            b"Submitted batch job x12",
            b"Submitted batch job 12abc",
            b"\xff\x00Submitted batch job -3",
        ] {
            let e = parse_job_id(bad).unwrap_err().to_string();
            assert!(e.starts_with("gave no job id but \""), "{e}");
            assert!(!e.chars().any(char::is_control), "{e:?}");
        }
    }
}
