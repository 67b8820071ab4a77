//! perf's options, as typed, turned into the validated parameters of one
//! run: counts, byte sizes, access pattern and each task's CPU and node
//! binding on this machine.

use super::lists::{self, ListKind};
use crate::error::usage;
use crate::ids::CpuSet;
use crate::topology::Topology;
use anyhow::Result;

/// Options as given, with perf's defaults for those not given (see
/// [`RawOptions::seed_defaults`]). Booleans are already resolved from their
/// `--X` / `--no-X` pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct RawOptions {
    pub nr_proc: Option<i64>,
    pub nr_threads: Option<i64>,
    pub mb_global: Option<String>,
    pub mb_proc: Option<String>,
    pub mb_proc_locked: Option<String>,
    pub mb_thread: Option<String>,
    pub nr_loops: Option<u32>,
    pub nr_secs: u32,
    pub sleep_usecs: u32,
    pub data_reads: bool,
    pub data_writes: bool,
    pub data_backwards: bool,
    pub data_zero_memset: bool,
    pub data_rand_walk: bool,
    pub init_zero: bool,
    pub init_random: bool,
    pub init_cpu0: bool,
    pub perturb_secs: i64,
    pub show_details: i32,
    pub thp: i64,
    pub show_convergence: bool,
    pub measure_convergence: bool,
    pub quiet: bool,
    pub serialize_startup: bool,
    pub cpus: Option<String>,
    pub memnodes: Option<String>,
}

impl RawOptions {
    /// perf's defaults: everything zero or off except serialised startup,
    /// reads, writes, backwards passes, the random walk, random initial
    /// contents, and an unlimited loop count.
    pub fn seed_defaults() -> Self {
        RawOptions {
            nr_proc: None,
            nr_threads: None,
            mb_global: None,
            mb_proc: None,
            mb_proc_locked: None,
            mb_thread: None,
            nr_loops: None,
            nr_secs: 0,
            sleep_usecs: 0,
            data_reads: true,
            data_writes: true,
            data_backwards: true,
            data_zero_memset: false,
            data_rand_walk: true,
            init_zero: false,
            init_random: true,
            init_cpu0: false,
            perturb_secs: 0,
            show_details: 0,
            thp: 0,
            show_convergence: false,
            measure_convergence: false,
            quiet: false,
            serialize_startup: true,
            cpus: None,
            memnodes: None,
        }
    }
}

/// perf's "no loop limit": its `nr_loops` defaults to `(u32)-1`.
pub(crate) const UNLIMITED_LOOPS: u32 = u32::MAX;

/// Most tasks one run may start.
pub(crate) const MAX_TASKS: usize = 1 << 16;

/// One validated run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Params {
    pub nr_proc: usize,
    pub nr_threads: usize,
    pub nr_tasks: usize,
    /// Sizes in MB as given (perf's MB are MiB: bytes = MB x 2^20).
    pub mb_global: f64,
    pub mb_proc: f64,
    pub mb_proc_locked: f64,
    pub mb_thread: f64,
    pub bytes_global: u64,
    pub bytes_process: u64,
    pub bytes_process_locked: u64,
    pub bytes_thread: u64,
    pub nr_loops: u32,
    /// 0 = no time limit.
    pub nr_secs: u32,
    pub sleep_usecs: u32,
    pub data_reads: bool,
    pub data_writes: bool,
    pub data_backwards: bool,
    pub data_zero_memset: bool,
    pub data_rand_walk: bool,
    pub init_zero: bool,
    pub init_random: bool,
    pub init_cpu0: bool,
    pub perturb_secs: u32,
    /// -1 quiet, 0 normal, 1+ more detail (perf's `show_details`).
    pub show_details: i32,
    pub thp: i32,
    pub show_convergence: bool,
    pub measure_convergence: bool,
    pub quiet: bool,
    pub serialize_startup: bool,
    pub cpu_list: Option<String>,
    pub node_list: Option<String>,
    /// CPUs each task is bound to (`None`: unbound), one per task.
    pub cpu_bind: Vec<Option<CpuSet>>,
    /// Memory node each task is bound to, one per task.
    pub node_bind: Vec<Option<usize>>,
    /// The `-C` entries as perf prints them: (first CPU, mask length).
    pub cpu_entries: Vec<(usize, usize)>,
    pub node_entries: Vec<usize>,
    /// perf's "# NOTE:" lines about `-C` entries and tasks left unbound.
    pub cpu_notes: Vec<String>,
    /// The same for `-M`.
    pub node_notes: Vec<String>,
}

impl Params {
    /// Bytes one loop of one task processes (perf's `work_done`).
    pub(crate) fn bytes_per_loop(&self) -> u64 {
        self.bytes_global + self.bytes_process + self.bytes_process_locked + self.bytes_thread
    }

    /// Memory the run maps: global once, process memory per process,
    /// thread memory per task (process-locked memory is part of the
    /// process memory).
    pub(crate) fn total_bytes(&self) -> u64 {
        self.bytes_global
            .saturating_add(self.bytes_process.saturating_mul(self.nr_proc as u64))
            .saturating_add(self.bytes_thread.saturating_mul(self.nr_tasks as u64))
    }

    /// How the data is accessed, in words.
    pub(crate) fn access(&self) -> &'static str {
        if self.data_zero_memset {
            "memset"
        } else {
            match (self.data_reads, self.data_writes) {
                (true, true) => "read+write",
                (true, false) => "read",
                (false, true) => "write",
                (false, false) => "none",
            }
        }
    }

    /// Every "# NOTE:" line, `-C`'s first.
    pub(crate) fn binding_notes(&self) -> impl Iterator<Item = &String> {
        self.cpu_notes.iter().chain(&self.node_notes)
    }
}

fn count(v: Option<i64>, flag: &str, what: &str) -> Result<usize> {
    match v {
        None => Err(usage(format!(
            "{flag} is required: give the number of {what} (at least 1)"
        ))),
        Some(n) if n <= 0 => Err(usage(format!(
            "{flag} {n}: the number of {what} must be at least 1"
        ))),
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|&n| n <= MAX_TASKS)
            .ok_or_else(|| usage(format!("{flag} {n}: at most {MAX_TASKS} {what}"))),
    }
}

/// perf reads sizes with `atof`: a decimal number of MB (2^20 bytes).
fn megabytes(v: &Option<String>, flag: &str) -> Result<f64> {
    let Some(text) = v else { return Ok(0.0) };
    let mb: f64 = text.trim().parse().map_err(|_| {
        usage(format!(
            "{flag} '{text}': not a number of MB (e.g. 512 or 0.5)"
        ))
    })?;
    if !mb.is_finite() || mb < 0.0 {
        return Err(usage(format!("{flag} '{text}': give 0 or more MB")));
    }
    if mb * 1048576.0 >= (1u64 << 56) as f64 {
        return Err(usage(format!("{flag} '{text}': too large")));
    }
    Ok(mb)
}

fn bytes_of(mb: f64) -> u64 {
    // perf: `mb * 1024L * 1024L` stored in a long, truncating.
    (mb * 1048576.0) as u64
}

/// Validates `raw` against `topo`.
pub(crate) fn resolve(raw: &RawOptions, topo: &Topology) -> Result<Params> {
    let nr_proc = count(raw.nr_proc, "-p/--nr_proc", "processes")?;
    let nr_threads = count(raw.nr_threads, "-t/--nr_threads", "threads per process")?;
    let nr_tasks = nr_proc
        .checked_mul(nr_threads)
        .filter(|&n| n <= MAX_TASKS)
        .ok_or_else(|| {
            usage(format!(
                "-p {nr_proc} x -t {nr_threads}: at most {MAX_TASKS} tasks"
            ))
        })?;
    if raw.mb_global.is_none() && raw.mb_proc.is_none() && raw.mb_thread.is_none() {
        return Err(usage(
            "some memory must be given: -G/--mb_global, -P/--mb_proc or -T/--mb_thread (MB)",
        ));
    }
    let mb_global = megabytes(&raw.mb_global, "-G/--mb_global")?;
    let mb_proc = megabytes(&raw.mb_proc, "-P/--mb_proc")?;
    let mb_proc_locked = megabytes(&raw.mb_proc_locked, "-L/--mb_proc_locked")?;
    let mb_thread = megabytes(&raw.mb_thread, "-T/--mb_thread")?;
    if mb_proc_locked > mb_proc {
        return Err(usage(format!(
            "-L {mb_proc_locked}: the process-locked memory is part of the process memory and cannot exceed -P ({mb_proc} MB)"
        )));
    }
    let (bytes_global, bytes_process, bytes_process_locked, bytes_thread) = (
        bytes_of(mb_global),
        bytes_of(mb_proc),
        bytes_of(mb_proc_locked),
        bytes_of(mb_thread),
    );
    if bytes_global / 8 + bytes_process / 8 + bytes_thread / 8 == 0 {
        return Err(usage(
            "-G/-P/-T: the working set is empty; give at least 8 bytes (e.g. -P 1 for 1 MB)",
        ));
    }
    if raw.perturb_secs < 0 {
        return Err(usage(format!(
            "-x {}: give the seconds between perturbations (0 = off)",
            raw.perturb_secs
        )));
    }
    let perturb_secs = u32::try_from(raw.perturb_secs)
        .map_err(|_| usage(format!("-x {}: too large", raw.perturb_secs)))?;
    let thp = i32::try_from(raw.thp.clamp(-1, 1)).unwrap_or(0);
    let show_details = if raw.quiet && raw.show_details == 0 {
        -1
    } else {
        raw.show_details
    };

    let mut p = Params {
        nr_proc,
        nr_threads,
        nr_tasks,
        mb_global,
        mb_proc,
        mb_proc_locked,
        mb_thread,
        bytes_global,
        bytes_process,
        bytes_process_locked,
        bytes_thread,
        nr_loops: raw.nr_loops.unwrap_or(UNLIMITED_LOOPS),
        nr_secs: raw.nr_secs,
        sleep_usecs: raw.sleep_usecs,
        data_reads: raw.data_reads,
        data_writes: raw.data_writes,
        data_backwards: raw.data_backwards,
        data_zero_memset: raw.data_zero_memset,
        data_rand_walk: raw.data_rand_walk,
        init_zero: raw.init_zero,
        init_random: raw.init_random,
        init_cpu0: raw.init_cpu0,
        perturb_secs,
        show_details,
        thp,
        show_convergence: raw.show_convergence,
        measure_convergence: raw.measure_convergence,
        quiet: raw.quiet,
        serialize_startup: raw.serialize_startup,
        cpu_list: raw.cpus.clone(),
        node_list: raw.memnodes.clone(),
        cpu_bind: vec![None; nr_tasks],
        node_bind: vec![None; nr_tasks],
        cpu_entries: Vec::new(),
        node_entries: Vec::new(),
        cpu_notes: Vec::new(),
        node_notes: Vec::new(),
    };
    if let Some(text) = &raw.cpus {
        bind_cpus(&mut p, text, topo)?;
    }
    if let Some(text) = &raw.memnodes {
        bind_nodes(&mut p, text, topo)?;
    }
    Ok(p)
}

fn cpu_exists(topo: &Topology, id: usize) -> Result<(), String> {
    if !topo.cpus_online.contains(id) {
        return Err(format!(
            "CPU {id} does not exist or is offline (online CPUs: {})",
            topo.cpus_online
        ));
    }
    if !topo.allowed.cpus.contains(id) {
        return Err(format!(
            "CPU {id} is outside this process's cpuset (allowed CPUs: {})",
            topo.allowed.cpus
        ));
    }
    Ok(())
}

fn node_exists(topo: &Topology, id: usize) -> Result<(), String> {
    let Some(node) = topo.node(id) else {
        return Err(format!(
            "node {id} does not exist (nodes: {})",
            topo.node_ids()
        ));
    };
    if !node.has_memory {
        return Err(format!(
            "node {id} has no memory (nodes with memory: {})",
            topo.usable_memory_nodes()
        ));
    }
    if !topo.allowed.nodes.contains(id) {
        return Err(format!(
            "node {id} is outside this process's cpuset (allowed nodes: {})",
            topo.allowed.nodes
        ));
    }
    Ok(())
}

fn bind_cpus(p: &mut Params, text: &str, topo: &Topology) -> Result<()> {
    let flag = format!("-C/--cpus {text}");
    let tokens = lists::parse(text, ListKind::Cpus).map_err(|e| usage(format!("{flag}: {e}")))?;
    lists::check(&tokens, ListKind::Cpus, topo.cpus.len(), &|id| {
        cpu_exists(topo, id)
    })
    .map_err(|e| usage(format!("{flag}: {e}")))?;
    let ex = lists::expand(&tokens, p.nr_tasks);
    if let Some(cpu) = ex.ignored_from {
        p.cpu_notes
            .push(format!("NOTE: ignoring bind CPUs starting at CPU#{cpu}"));
    }
    for (t, e) in ex.entries.iter().enumerate() {
        p.cpu_bind[t] = Some(CpuSet::from_ids(e.first..e.first + e.len));
        p.cpu_entries.push((e.first, e.len));
    }
    let bound = ex.entries.len();
    if bound < p.nr_tasks {
        p.cpu_notes.push(format!(
            "NOTE: {bound} tasks bound, {} tasks unbound",
            p.nr_tasks - bound
        ));
    }
    Ok(())
}

fn bind_nodes(p: &mut Params, text: &str, topo: &Topology) -> Result<()> {
    let flag = format!("-M/--memnodes {text}");
    let tokens = lists::parse(text, ListKind::Nodes).map_err(|e| usage(format!("{flag}: {e}")))?;
    lists::check(&tokens, ListKind::Nodes, topo.nodes.len(), &|id| {
        node_exists(topo, id)
    })
    .map_err(|e| usage(format!("{flag}: {e}")))?;
    let ex = lists::expand(&tokens, p.nr_tasks);
    if let Some(node) = ex.ignored_from {
        p.node_notes
            .push(format!("NOTE: ignoring bind NODEs starting at NODE#{node}"));
    }
    for (t, e) in ex.entries.iter().enumerate() {
        p.node_bind[t] = Some(e.first);
        p.node_entries.push(e.first);
    }
    let bound = ex.entries.len();
    if bound < p.nr_tasks {
        p.node_notes.push(format!(
            "NOTE: {bound} tasks mem-bound, {} tasks unbound",
            p.nr_tasks - bound
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;
    use proptest::prelude::*;

    proptest! {
        /// Any counts, megabytes and lists resolve to parameters or an
        /// error; what resolves has finite sizes and a task count that
        /// matches.
        #[test]
        fn any_options_resolve_or_are_refused(
            nr_proc in proptest::option::of(-3i64..5000),
            nr_threads in proptest::option::of(-3i64..5000),
            mb in proptest::collection::vec(proptest::option::of("-?[0-9]{0,20}(\\.[0-9]{0,6})?(e[0-9]{1,3})?|NaN|inf|\\PC{0,8}"), 4),
            lists in proptest::collection::vec(proptest::option::of("[0-9]{1,7}([-#_x][0-9]{1,7}){0,3}(,[0-9]{1,4}){0,2}|\\PC{0,8}"), 2),
            perturb in any::<i64>(),
            thp in any::<i64>(),
        ) {
            let raw = RawOptions {
                nr_proc,
                nr_threads,
                mb_global: mb[0].clone(),
                mb_proc: mb[1].clone(),
                mb_proc_locked: mb[2].clone(),
                mb_thread: mb[3].clone(),
                perturb_secs: perturb,
                thp,
                cpus: lists[0].clone(),
                memnodes: lists[1].clone(),
                ..RawOptions::seed_defaults()
            };
            if let Ok(p) = resolve(&raw, &fixture("two-node")) {
                prop_assert_eq!(p.nr_tasks, p.nr_proc * p.nr_threads);
                for mb in [p.mb_global, p.mb_proc, p.mb_proc_locked, p.mb_thread] {
                    prop_assert!(mb.is_finite() && mb >= 0.0);
                }
                prop_assert!(p.bytes_process_locked <= p.bytes_process);
            }
        }
    }

    fn raw() -> RawOptions {
        RawOptions {
            nr_proc: Some(2),
            nr_threads: Some(3),
            mb_proc: Some("512".into()),
            ..RawOptions::seed_defaults()
        }
    }

    #[test]
    fn defaults_are_perfs() {
        let d = RawOptions::seed_defaults();
        assert!(d.serialize_startup && d.data_reads && d.data_writes);
        assert!(d.data_backwards && d.data_rand_walk && d.init_random);
        assert!(!d.data_zero_memset && !d.init_zero && !d.init_cpu0);
        assert_eq!(
            (d.nr_secs, d.sleep_usecs, d.thp, d.perturb_secs),
            (0, 0, 0, 0)
        );
        let p = resolve(&raw(), &fixture("two-node")).unwrap();
        assert_eq!(p.nr_loops, u32::MAX);
        assert_eq!(p.nr_tasks, 6);
        assert_eq!(p.bytes_process, 512 << 20);
        assert_eq!(p.bytes_per_loop(), 512 << 20);
        assert_eq!(p.total_bytes(), 1024 << 20);
        assert_eq!(p.show_details, 0);
        assert!(p.cpu_bind.iter().all(Option::is_none));
        assert_eq!(p.access(), "read+write");
    }

    #[test]
    fn quiet_means_details_minus_one_unless_d() {
        let topo = fixture("two-node");
        let mut r = raw();
        r.quiet = true;
        assert_eq!(resolve(&r, &topo).unwrap().show_details, -1);
        r.show_details = 2;
        assert_eq!(resolve(&r, &topo).unwrap().show_details, 2);
    }

    #[test]
    fn sizes_follow_atof_and_mib() {
        let topo = fixture("two-node");
        let mut r = raw();
        r.mb_proc = Some(" 0.5".into());
        r.mb_proc_locked = Some("0.25".into());
        let p = resolve(&r, &topo).unwrap();
        assert_eq!(p.bytes_process, 512 << 10);
        assert_eq!(p.bytes_process_locked, 256 << 10);
        r.mb_proc_locked = Some("1".into());
        assert!(resolve(&r, &topo).is_err());
        r.mb_proc_locked = None;
        r.mb_proc = Some("x".into());
        assert!(resolve(&r, &topo).is_err());
    }

    #[test]
    fn counts_and_memory_are_required() {
        let topo = fixture("two-node");
        for bad in [
            RawOptions {
                nr_proc: None,
                ..raw()
            },
            RawOptions {
                nr_proc: Some(0),
                ..raw()
            },
            RawOptions {
                nr_threads: Some(-1),
                ..raw()
            },
            RawOptions {
                mb_proc: None,
                ..raw()
            },
            RawOptions {
                mb_proc: Some("0".into()),
                ..raw()
            },
            RawOptions {
                perturb_secs: -1,
                ..raw()
            },
        ] {
            let e = resolve(&bad, &topo).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{e}");
        }
    }

    #[test]
    fn cpu_and_node_lists_bind_the_first_tasks() {
        let topo = fixture("two-node");
        let first_node1_cpu = topo.usable_cpus_of(1).first().unwrap();
        let mut r = raw();
        r.cpus = Some(format!("0,{first_node1_cpu}"));
        r.memnodes = Some("1x3".into());
        let p = resolve(&r, &topo).unwrap();
        assert_eq!(p.cpu_bind[0], Some(CpuSet::from_ids([0])));
        assert_eq!(p.cpu_bind[1], Some(CpuSet::from_ids([first_node1_cpu])));
        assert_eq!(p.cpu_bind[2], None);
        assert_eq!(&p.node_bind[..4], &[Some(1), Some(1), Some(1), None]);
        assert!(
            p.cpu_notes
                .iter()
                .any(|n| n.contains("2 tasks bound, 4 tasks unbound"))
        );
        assert!(p.node_notes.iter().any(|n| n.contains("3 tasks mem-bound")));
        r.memnodes = Some("9".into());
        let e = resolve(&r, &topo).unwrap_err().to_string();
        assert!(e.contains("node 9 does not exist"), "{e}");
        r.memnodes = None;
        r.cpus = Some("4095".into());
        let e = resolve(&r, &topo).unwrap_err().to_string();
        assert!(e.contains("CPU 4095"), "{e}");
    }
}
