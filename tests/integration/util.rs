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

/// `numabench topo --json` of a fixture, parsed.
pub fn topo_json(root: &std::path::Path) -> serde_json::Value {
    let out = numabench()
        .args(["topo", "--json", "--sysfs-root"])
        .arg(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub fn topo_text(root: &std::path::Path) -> String {
    let out = numabench()
        .args(["topo", "--sysfs-root"])
        .arg(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
