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
    let out = numabench().args(args).output().unwrap();
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
