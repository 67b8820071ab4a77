//! The suite mapped onto captured machines.

use super::*;
use crate::topology::fixture;

fn value_of<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn find(name: &str) -> Test {
    tests()
        .into_iter()
        .find(|t| t.short_name() == name)
        .unwrap()
}

fn opts() -> SuiteOptions {
    SuiteOptions {
        secs: None,
        rw: false,
        memory_pct: 100,
    }
}

#[test]
fn the_table_is_the_seeds() {
    let all = tests();
    assert_eq!(all.len(), 45);
    assert_eq!(all[0].name, "RAM-bw-local,");
    assert_eq!(
        all[0].args(),
        [
            "-p",
            "1",
            "-t",
            "1",
            "-P",
            "1024",
            "-C",
            "0",
            "-M",
            "0",
            "-s",
            "20",
            "-zZq",
            "--thp",
            " 1",
            "--no-data_rand_walk"
        ]
    );
    assert_eq!(all[1].args().last().map(String::as_str), Some("-1"));
    assert_eq!(find("2x3-convergence").args()[..4], ["-p", "3", "-t", "3"]);
    assert_eq!(all.last().unwrap().short_name(), "numa01-bw-thread-NOTHP");
    let mut names: Vec<_> = all.iter().map(Test::short_name).collect();
    names.dedup();
    assert_eq!(names.len(), 45);
}

#[test]
fn a_name_that_is_not_its_shape_is_said() {
    let topo = fixture("two-node");
    let t = plan(&find("2x3-convergence"), &topo, &opts());
    assert!(
        t.notes
            .iter()
            .any(|n| n.starts_with("2x3-convergence runs -p 3 -t 3 as in perf's table")),
        "{:?}",
        t.notes
    );
    let mismatched: Vec<&str> = tests()
        .iter()
        .filter(|t| name_mismatch(t).is_some())
        .map(Test::short_name)
        .collect();
    assert_eq!(mismatched, ["2x3-convergence"]);
}

#[test]
fn lists_map_by_meaning_on_two_nodes() {
    let topo = fixture("two-node");
    let n1 = topo.cores_first(&topo.usable_cpus_of(1))[0];
    let cross = plan(&find("RAM-bw-cross"), &topo, &opts());
    assert_eq!(cross.skip, None);
    assert_eq!(
        value_of(&cross.args, "-C"),
        Some(format!("0,{n1}").as_str())
    );
    assert_eq!(value_of(&cross.args, "-M"), Some("1,0"));
    let local2 = plan(&find("RAM-bw-local-2x"), &topo, &opts());
    let c = topo.cores_first(&topo.usable_cpus_of(0));
    assert_eq!(
        value_of(&local2.args, "-C"),
        Some(format!("{},{}", c[0], c[1]).as_str())
    );
    assert_eq!(value_of(&local2.args, "-M"), Some("0,0"));
    assert!(local2.memset);
    assert!(local2.notes.iter().any(|n| n.contains("memset")));
}

#[test]
fn one_node_skips_remote_and_convergence() {
    let topo = fixture("local-1node");
    let remote = plan(&find("RAM-bw-remote"), &topo, &opts());
    assert!(
        remote.skip.as_deref().unwrap().contains("2 nodes"),
        "{remote:?}"
    );
    let conv = plan(&find("4x4-convergence"), &topo, &opts());
    assert!(conv.skip.as_deref().unwrap().contains("convergence"));
    let local = plan(&find("RAM-bw-local"), &topo, &opts());
    assert_eq!(local.skip, None);
}

#[test]
fn under_a_memory_limit_scaling_names_it_and_skipped_tests_are_not_scaled() {
    let mut topo = fixture("local-1node");
    topo.memory_limit = Some(crate::topology::MemoryLimit {
        headroom_bytes: 62 << 20,
        limit_bytes: 64 << 20,
        source: "memory cgroup /x (memory.limit_in_bytes)".into(),
    });
    let local = plan(&find("RAM-bw-local"), &topo, &opts());
    let note = local.notes.iter().find(|n| n.contains("scaled down"));
    let note = note.expect("1024 MB cannot fit in 62 MiB");
    assert!(
        note.contains("62 MiB left under memory cgroup /x"),
        "{note}"
    );
    assert!(note.contains("node 0"), "{note}");
    assert_eq!(
        local.conditions,
        vec![crate::results::Condition::ScaledByMemoryLimit {
            source: "memory cgroup /x (memory.limit_in_bytes)".into()
        }]
    );
    // The seed's node 1 does not exist here: skipped, and no word of
    // its free memory.
    let remote = plan(&find("RAM-bw-remote"), &topo, &opts());
    assert!(remote.skip.is_some());
    assert!(
        !remote.notes.iter().any(|n| n.contains("node 1")),
        "{:?}",
        remote.notes
    );
}

#[test]
fn secs_rw_and_scaling() {
    let topo = fixture("two-node");
    let o = SuiteOptions {
        secs: Some(2),
        rw: true,
        memory_pct: 100,
    };
    let t = plan(&find("numa01-bw-thread"), &topo, &o);
    assert_eq!(value_of(&t.args, "-s"), Some("2"));
    assert!(t.args.contains(&"-z0q".to_string()), "{:?}", t.args);
    assert!(t.args.ends_with(&["-R".to_string(), "-W".to_string()]));
    assert_eq!(t.name, "numa01-bw-thread-rw,");
    assert!(!t.memset);
    // A tiny share of free memory forces scaling, and says so.
    let tight = SuiteOptions { memory_pct: 1, ..o };
    let free: u64 = topo
        .usable_memory_nodes()
        .iter()
        .map(|n| topo.node_free_bytes(n))
        .sum();
    let t = plan(&find("1x32-bw-thread"), &topo, &tight);
    let p: f64 = value_of(&t.args, "-P").unwrap().parse().unwrap();
    if (free as f64 / 100.0 / 1048576.0) < 2048.0 {
        assert!(p < 2048.0);
        assert!(
            t.notes.iter().any(|n| n.contains("scaled down")),
            "{:?}",
            t.notes
        );
        // Free memory, not a limit, was short: no condition.
        assert!(t.conditions.is_empty(), "{:?}", t.conditions);
    }
}

#[test]
fn with_init_on_cpu0_the_start_node_alone_must_hold_the_test() {
    let topo = crate::topology::fixture("two-node");
    let node0 = topo.node_free_bytes(0) as f64 / 1048576.0;
    let all: f64 = topo
        .usable_memory_nodes()
        .iter()
        .map(|n| topo.node_free_bytes(n) as f64 / 1048576.0)
        .sum();
    assert!(node0 < all, "the fixture needs memory on both nodes");
    // 4 processes x 512 MB: more than 1% of either node, or of both.
    let t = plan(
        &find("4x4-bw-thread"),
        &topo,
        &SuiteOptions {
            memory_pct: 1,
            ..opts()
        },
    );
    assert!(t.args.contains(&"-zZ0q".to_string()), "{:?}", t.args);
    let p: f64 = value_of(&t.args, "-P").unwrap().parse().unwrap();
    assert!(
        p * 4.0 <= node0 * 0.01 + 0.01,
        "-P {p} with {node0} MiB free"
    );
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("-0 places it all on node 0")),
        "{:?}",
        t.notes
    );
}
