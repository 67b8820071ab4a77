//! The command line a person types: sizes with units, one meaning per
//! short flag, one pair vocabulary, numactl's `all`, and mistakes answered
//! on one line with clap's suggestion.

use crate::util::{rejects, stdout_of};

#[test]
fn a_misspelt_command_or_flag_is_one_line_with_the_suggestion() {
    rejects(
        &["matrx"],
        ["unrecognized subcommand 'matrx'", "did you mean 'matrix'"].as_slice(),
    );
    rejects(
        &["sweep", "--thread", "2"],
        ["'--thread'", "did you mean '--threads'?"].as_slice(),
    );
}

#[test]
fn a_bare_size_is_refused_the_same_way_by_every_command() {
    for cmd in [
        "sweep", "latency", "mlp", "loaded", "peak", "matrix", "place",
    ] {
        rejects(
            &[cmd, "-s", "1024"],
            ["'--size <SIZE>'", "give a unit, e.g. 1024K or 1M"].as_slice(),
        );
    }
    rejects(
        &["matrix", "--latency-size", "100"],
        "give a unit, e.g. 100K or 100M",
    );
}

#[test]
fn a_size_with_a_unit_means_the_same_on_every_command() {
    // 2G is 2 GiB whichever command reads it: each plan shows its buffer.
    for cmd in ["latency", "mlp", "loaded"] {
        let plan = String::from_utf8(stdout_of([cmd, "-s", "2G", "--plan"])).unwrap();
        assert!(plan.contains("2 GiB"), "{cmd}: {plan}");
    }
    // sweep's -s is per thread, in the same units; --buffer-kib keeps
    // sc-membench's plain KiB under its own name.
    rejects(
        &["sweep", "-s", "3K"],
        "-s 3K: 3 KiB is below the smallest buffer",
    );
    rejects(
        &["sweep", "--buffer-kib", "3"],
        "--buffer-kib 3: 3 KiB is below the smallest buffer",
    );
}

#[test]
fn both_pair_names_select_the_same_pairs_in_loaded_and_mlp() {
    for cmd in ["loaded", "mlp"] {
        let near = stdout_of([cmd, "--pairs", "near-far", "--plan"]);
        let local = stdout_of([cmd, "--pairs", "local-far", "--plan"]);
        assert_eq!(near, local, "{cmd}");
        rejects(
            &[cmd, "--pairs", "far"],
            "--pairs far: use all or near-far (local-far is accepted for near-far)",
        );
    }
}

#[test]
fn interleave_all_is_every_memory_node_as_in_numactl() {
    let out = stdout_of(["place", "-m", "interleave:all", "-s", "1M", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let applied = v["policy_applied"].as_str().unwrap();
    assert!(
        applied.starts_with("interleave:") && !applied.contains("all"),
        "{applied}"
    );
    rejects(&["place", "-m", "interleave:al"], "--policy");
}
