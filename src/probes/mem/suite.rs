//! perf's `-a` suite: the same test names and options, in the same order,
//! mapped onto this machine.
//!
//! The seed's table was written for a 4-node machine with 8 CPUs per node,
//! numbered contiguously (CPU c on node c / 8). Its CPU and node numbers are
//! read that way and mapped by meaning: seed node k is the k-th node here
//! that has both usable CPUs and memory; a seed CPU is the CPU of the same
//! rank among the CPUs the test uses on its node, taken one per core first.
//! So "-C 0 -M 1" stays "a CPU and memory on another node", "-C 0,8" stays
//! "the first CPU of two different nodes". A test this machine cannot map
//! (too few nodes or CPUs) is skipped with the reason; memory sizes are
//! scaled down, and said so, where free memory is short.

use super::lists::{self, ListKind};
use crate::topology::Topology;
use std::collections::BTreeMap;

/// Shared option groups of the seed's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opts {
    BwRam,
    BwRamNothp,
    Conv,
    ConvNothp,
    Bw,
    BwNothp,
}

impl Opts {
    fn args(self) -> Vec<&'static str> {
        let bw_ram = ["-s", "20", "-zZq", "--thp", " 1", "--no-data_rand_walk"];
        let conv = ["-s", "100", "-zZ0qcm", "--thp", " 1"];
        let bw = ["-s", "20", "-zZ0q", "--thp", " 1"];
        let nothp = ["--thp", "-1"];
        match self {
            Opts::BwRam => bw_ram.to_vec(),
            Opts::BwRamNothp => [&bw_ram[..], &nothp[..]].concat(),
            Opts::Conv => conv.to_vec(),
            Opts::ConvNothp => [&conv[..], &nothp[..]].concat(),
            Opts::Bw => bw.to_vec(),
            Opts::BwNothp => [&bw[..], &nothp[..]].concat(),
        }
    }
}

/// One test of the table: its name as perf prints it (with perf's
/// alignment space and trailing comma) and its arguments after `mem`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Test {
    pub name: &'static str,
    pub args: Vec<&'static str>,
}

impl Test {
    /// The name without alignment and comma, e.g. `1x3-convergence`.
    pub fn short_name(&self) -> &'static str {
        self.name.trim().trim_end_matches(',')
    }
}

/// The seed's table, in order.
pub fn tests() -> Vec<Test> {
    use Opts::*;
    let t = |name: &'static str, base: &[&'static str], o: Opts| Test {
        name,
        args: [base, &o.args()[..]].concat(),
    };
    let pt = |p: &'static str, th: &'static str, mem: &'static str, mb: &'static str| {
        vec!["-p", p, "-t", th, mem, mb]
    };
    vec![
        t(
            "RAM-bw-local,",
            &[&pt("1", "1", "-P", "1024")[..], &["-C", "0", "-M", "0"]].concat(),
            BwRam,
        ),
        t(
            "RAM-bw-local-NOTHP,",
            &[&pt("1", "1", "-P", "1024")[..], &["-C", "0", "-M", "0"]].concat(),
            BwRamNothp,
        ),
        t(
            "RAM-bw-remote,",
            &[&pt("1", "1", "-P", "1024")[..], &["-C", "0", "-M", "1"]].concat(),
            BwRam,
        ),
        t(
            "RAM-bw-local-2x,",
            &[&pt("2", "1", "-P", "1024")[..], &["-C", "0,2", "-M", "0x2"]].concat(),
            BwRam,
        ),
        t(
            "RAM-bw-remote-2x,",
            &[&pt("2", "1", "-P", "1024")[..], &["-C", "0,2", "-M", "1x2"]].concat(),
            BwRam,
        ),
        t(
            "RAM-bw-cross,",
            &[&pt("2", "1", "-P", "1024")[..], &["-C", "0,8", "-M", "1,0"]].concat(),
            BwRam,
        ),
        t(" 1x3-convergence,", &pt("1", "3", "-P", "512"), Conv),
        t(" 1x4-convergence,", &pt("1", "4", "-P", "512"), Conv),
        t(" 1x6-convergence,", &pt("1", "6", "-P", "1020"), Conv),
        t(" 2x3-convergence,", &pt("3", "3", "-P", "1020"), Conv),
        t(" 3x3-convergence,", &pt("3", "3", "-P", "1020"), Conv),
        t(" 4x4-convergence,", &pt("4", "4", "-P", "512"), Conv),
        t(
            " 4x4-convergence-NOTHP,",
            &pt("4", "4", "-P", "512"),
            ConvNothp,
        ),
        t(" 4x6-convergence,", &pt("4", "6", "-P", "1020"), Conv),
        t(" 4x8-convergence,", &pt("4", "8", "-P", "512"), Conv),
        t(" 8x4-convergence,", &pt("8", "4", "-P", "512"), Conv),
        t(
            " 8x4-convergence-NOTHP,",
            &pt("8", "4", "-P", "512"),
            ConvNothp,
        ),
        t(" 3x1-convergence,", &pt("3", "1", "-P", "512"), Conv),
        t(" 4x1-convergence,", &pt("4", "1", "-P", "512"), Conv),
        t(" 8x1-convergence,", &pt("8", "1", "-P", "512"), Conv),
        t("16x1-convergence,", &pt("16", "1", "-P", "256"), Conv),
        t("32x1-convergence,", &pt("32", "1", "-P", "128"), Conv),
        t(" 2x1-bw-process,", &pt("2", "1", "-P", "1024"), Bw),
        t(" 3x1-bw-process,", &pt("3", "1", "-P", "1024"), Bw),
        t(" 4x1-bw-process,", &pt("4", "1", "-P", "1024"), Bw),
        t(" 8x1-bw-process,", &pt("8", "1", "-P", " 512"), Bw),
        t(
            " 8x1-bw-process-NOTHP,",
            &pt("8", "1", "-P", " 512"),
            BwNothp,
        ),
        t("16x1-bw-process,", &pt("16", "1", "-P", "256"), Bw),
        t(" 4x1-bw-thread,", &pt("1", "4", "-T", "256"), Bw),
        t(" 8x1-bw-thread,", &pt("1", "8", "-T", "256"), Bw),
        t("16x1-bw-thread,", &pt("1", "16", "-T", "128"), Bw),
        t("32x1-bw-thread,", &pt("1", "32", "-T", "64"), Bw),
        t(" 2x3-bw-thread,", &pt("2", "3", "-P", "512"), Bw),
        t(" 4x4-bw-thread,", &pt("4", "4", "-P", "512"), Bw),
        t(" 4x6-bw-thread,", &pt("4", "6", "-P", "512"), Bw),
        t(" 4x8-bw-thread,", &pt("4", "8", "-P", "512"), Bw),
        t(" 4x8-bw-thread-NOTHP,", &pt("4", "8", "-P", "512"), BwNothp),
        t(" 3x3-bw-thread,", &pt("3", "3", "-P", "512"), Bw),
        t(" 5x5-bw-thread,", &pt("5", "5", "-P", "512"), Bw),
        t("2x16-bw-thread,", &pt("2", "16", "-P", "512"), Bw),
        t("1x32-bw-thread,", &pt("1", "32", "-P", "2048"), Bw),
        t("numa02-bw,", &pt("1", "32", "-T", "32"), Bw),
        t("numa02-bw-NOTHP,", &pt("1", "32", "-T", "32"), BwNothp),
        t("numa01-bw-thread,", &pt("2", "16", "-T", "192"), Bw),
        t(
            "numa01-bw-thread-NOTHP,",
            &pt("2", "16", "-T", "192"),
            BwNothp,
        ),
    ]
}

/// How the suite is run here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SuiteOptions {
    /// Replaces every test's `-s`.
    pub secs: Option<u32>,
    /// Real reads and writes (-R -W) instead of -Z's memset.
    pub rw: bool,
    /// Share of a node's free memory a test may use, percent.
    pub memory_pct: u32,
}

/// A test made ready for this machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// Name as printed (perf's, with `-rw` before the comma under --rw).
    pub name: String,
    pub short_name: String,
    /// Arguments after `mem`, mapped, timed and scaled.
    pub args: Vec<String>,
    /// What was changed and why.
    pub notes: Vec<String>,
    /// Why the test cannot run here.
    pub skip: Option<String>,
    /// The test clears memory with memset (-Z) instead of reading and
    /// writing it.
    pub memset: bool,
}

/// The seed machine's CPUs per node.
const SEED_CPUS_PER_NODE: usize = 8;

fn value_of<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn set_value(args: &mut [String], flag: &str, value: String) {
    if let Some(i) = args.iter().position(|a| a == flag)
        && i + 1 < args.len()
    {
        args[i + 1] = value;
    }
}

/// Entries of a seed list (one per task, up to `tasks`).
fn seed_entries(text: &str, kind: ListKind, tasks: usize) -> Vec<usize> {
    lists::parse(text, kind)
        .map(|t| {
            lists::expand(&t, tasks)
                .entries
                .iter()
                .map(|e| e.first)
                .collect()
        })
        .unwrap_or_default()
}

/// Maps one test onto `topo`.
pub fn plan(test: &Test, topo: &Topology, opts: &SuiteOptions) -> Planned {
    let mut args: Vec<String> = test.args.iter().map(|s| s.to_string()).collect();
    let mut notes = Vec::new();
    let mut skip = None;
    let num = |a: &[String], f: &str| {
        value_of(a, f)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let procs = num(&args, "-p").max(1.0) as usize;
    let threads = num(&args, "-t").max(1.0) as usize;
    let tasks = procs * threads;
    let convergence = args.iter().any(|a| a.starts_with("-z") && a.contains('m'));

    // Nodes that can hold a task and its memory.
    let full_nodes: Vec<usize> = topo
        .usable_cpu_nodes()
        .iter()
        .filter(|&n| topo.usable_memory_nodes().contains(n))
        .collect();
    if convergence && topo.usable_cpu_nodes().len() < 2 {
        skip = Some(format!(
            "convergence needs at least 2 nodes with CPUs; this machine has {}",
            topo.usable_cpu_nodes().len()
        ));
    }
    let map_node = |k: usize| -> Result<usize, String> {
        full_nodes.get(k).copied().ok_or_else(|| {
            format!(
                "needs {} nodes with CPUs and memory; this machine has {}",
                k + 1,
                full_nodes.len()
            )
        })
    };
    if skip.is_none()
        && let Some(c) = value_of(&args, "-C").map(str::to_string)
    {
        let seed = seed_entries(&c, ListKind::Cpus, tasks);
        // Ranks of the seed CPUs used on each seed node.
        let mut per_node: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &cpu in &seed {
            let v = per_node.entry(cpu / SEED_CPUS_PER_NODE).or_default();
            if !v.contains(&cpu) {
                v.push(cpu);
            }
        }
        let mut mapped = Vec::new();
        for &cpu in &seed {
            let k = cpu / SEED_CPUS_PER_NODE;
            let rank = per_node[&k].iter().filter(|&&c| c < cpu).count();
            match map_node(k) {
                Ok(node) => {
                    let cpus = topo.cores_first(&topo.usable_cpus_of(node));
                    match cpus.get(rank) {
                        Some(&here) => mapped.push(here),
                        None => {
                            skip = Some(format!(
                                "needs {} CPUs on node {node}; it has {}",
                                rank + 1,
                                cpus.len()
                            ));
                            break;
                        }
                    }
                }
                Err(e) => {
                    skip = Some(e);
                    break;
                }
            }
        }
        if skip.is_none() {
            let text = join(&mapped);
            if text != c {
                notes.push(format!(
                    "-C {c} (seed machine: 8 CPUs per node) mapped to -C {text}"
                ));
            }
            set_value(&mut args, "-C", text);
        }
    }
    if skip.is_none()
        && let Some(m) = value_of(&args, "-M").map(str::to_string)
    {
        let seed = seed_entries(&m, ListKind::Nodes, tasks);
        let mapped: Result<Vec<usize>, String> = seed.iter().map(|&k| map_node(k)).collect();
        match mapped {
            Ok(nodes) => {
                let text = join(&nodes);
                if text != m {
                    notes.push(format!("-M {m} mapped to -M {text}"));
                }
                set_value(&mut args, "-M", text);
            }
            Err(e) => skip = Some(e),
        }
    }

    // Memory: at most memory_pct of the free memory where it will live.
    let pct = f64::from(opts.memory_pct.clamp(1, 100)) / 100.0;
    let mb = |a: &[String], f: &str| num(a, f);
    let per_process = mb(&args, "-P") + mb(&args, "-T") * threads as f64;
    let need_total = mb(&args, "-G") + per_process * procs as f64;
    let mut factor: f64 = 1.0;
    let mut tightest = String::new();
    if let Some(m) = value_of(&args, "-M") {
        let nodes = seed_entries(m, ListKind::Nodes, tasks);
        let mut need: BTreeMap<usize, f64> = BTreeMap::new();
        for (t, n) in nodes.iter().enumerate() {
            if t % threads == 0 {
                *need.entry(*n).or_default() += per_process;
            }
        }
        for (n, want) in need {
            let budget = topo.node_free_bytes(n) as f64 * pct / 1048576.0;
            if want > 0.0 && budget / want < factor {
                factor = budget / want;
                tightest = format!("node {n} has {:.0} MiB free", budget / pct);
            }
        }
    } else if let Some(n) = init_cpu0(&args)
        .then(|| super::tasks::cpu0_target(topo))
        .flatten()
        .map(|(_, node)| node)
    {
        // -0 first places every area on one node; only later may the
        // kernel spread it, so that node alone must hold the test.
        let budget = topo.node_free_bytes(n) as f64 * pct / 1048576.0;
        if need_total > 0.0 && budget / need_total < factor {
            factor = budget / need_total;
            tightest = format!(
                "-0 places it all on node {n}, which has {:.0} MiB free",
                budget / pct
            );
        }
    } else {
        let free: f64 = topo
            .usable_memory_nodes()
            .iter()
            .map(|n| topo.node_free_bytes(n) as f64)
            .sum::<f64>()
            / 1048576.0;
        if need_total > 0.0 && free * pct / need_total < factor {
            factor = free * pct / need_total;
            tightest = format!("{free:.0} MiB free on the usable nodes");
        }
    }
    if factor < 1.0 {
        for f in ["-G", "-P", "-L", "-T"] {
            if let Some(v) = value_of(&args, f).and_then(|v| v.trim().parse::<f64>().ok()) {
                let scaled = ((v * factor * 1000.0).floor() / 1000.0).max(0.001);
                set_value(&mut args, f, format!("{scaled}"));
            }
        }
        notes.push(format!(
            "memory scaled down to {:.1}% ({need_total:.0} MB asked): {tightest}, and a test may use {}% of it",
            factor * 100.0,
            opts.memory_pct
        ));
    }

    if let Some(s) = opts.secs {
        if value_of(&args, "-s") != Some(&s.to_string()) {
            notes.push(format!(
                "run time {} s instead of the seed's {} s (--secs)",
                s,
                value_of(&args, "-s").unwrap_or("?")
            ));
        }
        set_value(&mut args, "-s", s.to_string());
    }
    let memset = !opts.rw && args.iter().any(|a| a.starts_with("-z") && a.contains('Z'));
    let mut name = test.name.to_string();
    let mut short = test.short_name().to_string();
    if opts.rw {
        for a in &mut args {
            if a.starts_with("-z") {
                *a = a.replace('Z', "");
            }
        }
        args.extend(["-R".to_string(), "-W".to_string()]);
        name = format!("{}-rw,", name.trim_end_matches(','));
        short.push_str("-rw");
        notes.push("--rw: real reads and writes (-R -W) instead of the seed's -Z memset".into());
    } else if memset {
        notes.push(
            "-Z: as in the seed, the data is cleared with glibc memset (bzero), not read and written; --all --rw measures reads and writes"
                .into(),
        );
    }
    let cpus = crate::probes::seats::max_threads(topo);
    if skip.is_none() && tasks > cpus {
        notes.push(format!("{tasks} tasks on {cpus} CPUs: oversubscribed"));
    }
    Planned {
        name,
        short_name: short,
        args,
        notes,
        skip,
        memset,
    }
}

/// Whether the arguments ask for `-0` (`--init_cpu0`), alone or among
/// other short flags (`-zZ0q`); option values are separate arguments.
fn init_cpu0(args: &[String]) -> bool {
    args.iter().any(|a| {
        a == "--init_cpu0"
            || (a.len() > 1
                && a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].chars().all(|c| c.is_ascii_alphanumeric())
                && a[1..].contains('0'))
    })
}

fn join(ids: &[usize]) -> String {
    ids.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

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
            all[0].args,
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
        assert_eq!(all[1].args.last(), Some(&"-1"));
        assert_eq!(find("2x3-convergence").args[..4], ["-p", "3", "-t", "3"]);
        assert_eq!(all.last().unwrap().short_name(), "numa01-bw-thread-NOTHP");
        let mut names: Vec<_> = all.iter().map(Test::short_name).collect();
        names.dedup();
        assert_eq!(names.len(), 45);
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
        assert!(init_cpu0(&t.args), "{:?}", t.args);
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

    #[test]
    fn init_cpu0_is_found_among_combined_flags_only() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(init_cpu0(&a(&["-p", "2", "-zZ0q"])));
        assert!(init_cpu0(&a(&["--init_cpu0"])));
        assert!(!init_cpu0(&a(&[
            "-C", "0", "-M", "0", "-zZq", "--thp", "-1"
        ])));
    }
}
