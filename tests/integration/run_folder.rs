//! What a run leaves in its results folder besides the document.

use crate::util::{numabench, only_run_folder, succeeded};

/// Each part's log holds what the part printed: how it ran, its progress
/// and its results as its command shows them.
#[test]
fn a_runs_part_logs_hold_the_parts_output() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    succeeded(
        numabench()
            .args(["run", "--profile", "smoke", "--dir"])
            .arg(&runs),
    );
    let (folder, _) = only_run_folder(&runs);
    let log = std::fs::read_to_string(folder.join("matrix.log")).unwrap();
    assert!(
        log.starts_with("numabench run: matrix, measured in the run's own process\n"),
        "{log}"
    );
    assert!(
        log.contains("numabench: measuring cpu node 0 -> mem node 0"),
        "no progress: {log}"
    );
    assert!(
        log.contains("single-thread triad bandwidth, MB/s"),
        "no results: {log}"
    );
}
