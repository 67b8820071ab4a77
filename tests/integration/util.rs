use assert_cmd::Command;
use std::path::PathBuf;

pub fn numabench() -> Command {
    let mut cmd = Command::cargo_bin("numabench").unwrap();
    cmd.env_remove("NUMABENCH_SYSFS_ROOT");
    cmd
}

pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs")
}

/// Every fixture machine (a directory with an expected.json).
pub fn fixture_machines() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

pub fn fixture(name: &str) -> PathBuf {
    let dir = fixtures_dir().join(name);
    assert!(dir.is_dir(), "fixture {name} is missing");
    dir
}

/// Runs numabench with `args`, asserts it succeeded and returns stdout.
pub fn stdout_of<I, S>(args: I) -> Vec<u8>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    succeeded(numabench().args(args))
}

/// Runs `cmd`, asserts it succeeded (its stderr as the message) and
/// returns its stdout.
pub fn succeeded(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `numabench topo [extra]` against a root.
fn topo(root: &std::path::Path, extra: &[&str]) -> Vec<u8> {
    let mut args: Vec<std::ffi::OsString> = vec!["topo".into()];
    args.extend(extra.iter().map(Into::into));
    args.extend(["--sysfs-root".into(), root.as_os_str().to_owned()]);
    stdout_of(args)
}

/// `numabench topo --json` of a root, parsed.
pub fn topo_json(root: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&topo(root, &["--json"])).unwrap()
}

pub fn topo_text(root: &std::path::Path) -> String {
    String::from_utf8(topo(root, &[])).unwrap()
}

/// What a refusal must name: one string, or each of several.
pub trait Mentions {
    fn each(&self) -> Vec<&str>;
}

impl Mentions for &str {
    fn each(&self) -> Vec<&str> {
        vec![self]
    }
}

impl Mentions for &[&str] {
    fn each(&self) -> Vec<&str> {
        self.to_vec()
    }
}

impl<const N: usize> Mentions for &[&str; N] {
    fn each(&self) -> Vec<&str> {
        self.to_vec()
    }
}

/// Runs numabench with `args` in an empty directory and checks the bad-input
/// contract: exit code 2, one line `numabench: error: ...` on stderr that
/// names `must_mention`, nothing on stdout, no file left behind.
pub fn rejects(args: &[&str], must_mention: impl Mentions) {
    let tmp = tempfile::tempdir().unwrap();
    let out = numabench()
        .current_dir(tmp.path())
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.starts_with("numabench: error: "), "{args:?}: {err}");
    for word in must_mention.each() {
        assert!(err.contains(word), "{args:?}: '{word}' missing from: {err}");
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "{args:?} left files behind"
    );
}

/// The one run folder `numabench run --dir runs` made, and its results
/// document.
pub fn only_run_folder(runs: &std::path::Path) -> (PathBuf, serde_json::Value) {
    let folder = std::fs::read_dir(runs)
        .unwrap()
        .next()
        .expect("no run folder")
        .unwrap()
        .path();
    let doc = serde_json::from_slice(&std::fs::read(folder.join("results.json")).unwrap())
        .expect("results.json is not JSON");
    (folder, doc)
}
