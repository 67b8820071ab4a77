//! Record, param and metric names of the `mem` probe alone.

/// Record names.
pub(crate) mod record {
    /// A single run's record (perf's `main,`); suite records carry their
    /// test's name.
    pub(crate) const MAIN: &str = "main";
}

/// Params of a `mem` record, perf's options under their meaning.
pub(crate) mod param {
    pub(crate) const GLOBAL_BYTES: &str = "global_bytes";
    pub(crate) const PROCESS_BYTES: &str = "process_bytes";
    pub(crate) const PROCESS_LOCKED_BYTES: &str = "process_locked_bytes";
    pub(crate) const THREAD_BYTES: &str = "thread_bytes";
    /// `-l`; null for unlimited.
    pub(crate) const LOOPS: &str = "loops";
    pub(crate) const SECS: &str = "secs";
    /// `read+write`, `read`, `write`, `memset` or `none`.
    pub(crate) const ACCESS: &str = "access";
    pub(crate) const RANDOM_WALK: &str = "random_walk";
    pub(crate) const BACKWARDS: &str = "backwards";
    pub(crate) const INIT_RANDOM: &str = "init_random";
    pub(crate) const INIT_CPU0: &str = "init_cpu0";
    pub(crate) const THP: &str = "thp";
    pub(crate) const SERIALIZE_STARTUP: &str = "serialize_startup";
    pub(crate) const SLEEP_US: &str = "sleep_us";
    pub(crate) const PERTURB_SECS: &str = "perturb_secs";
    /// `-C` as given; null without it.
    pub(crate) const CPUS: &str = "cpus";
    /// `-M` as given; null without it.
    pub(crate) const MEMNODES: &str = "memnodes";
    /// With `-c` or `-m`: whether the run converged.
    pub(crate) const CONVERGED: &str = "converged";
    /// Where each area's pages were at the end: a list of objects with the
    /// [`super::area`] keys.
    pub(crate) const MEMORY_PLACEMENT: &str = "memory_placement";
}

/// The keys of each entry of [`param::MEMORY_PLACEMENT`].
pub(crate) mod area {
    pub(crate) const AREA: &str = "area";
    pub(crate) const BYTES: &str = "bytes";
    pub(crate) const PAGES_TOTAL: &str = "pages_total";
    pub(crate) const PAGES_CHECKED: &str = "pages_checked";
    pub(crate) const PAGES_NOT_PRESENT: &str = "pages_not_present";
    pub(crate) const PAGES_BY_NODE: &str = "pages_by_node";
    pub(crate) const BOUND_NODE: &str = "bound_node";
    pub(crate) const ON_BOUND_NODE_PCT: &str = "on_bound_node_pct";
    pub(crate) const HUGE_BYTES: &str = "huge_bytes";
}

/// perf's nine metrics, its convergence latency, and what numabench adds.
pub(crate) mod metric {
    pub(crate) const RUNTIME_MAX_S: &str = "runtime_max_s";
    pub(crate) const RUNTIME_MIN_S: &str = "runtime_min_s";
    pub(crate) const RUNTIME_AVG_S: &str = "runtime_avg_s";
    pub(crate) const SPREAD_RUNTIME_PCT: &str = "spread_runtime_pct";
    pub(crate) const DATA_PER_THREAD_GB: &str = "data_per_thread_gb";
    pub(crate) const DATA_TOTAL_GB: &str = "data_total_gb";
    pub(crate) const RUNTIME_PER_BYTE_PER_THREAD_NS: &str = "runtime_per_byte_per_thread_ns";
    pub(crate) const THREAD_SPEED_GB_S: &str = "thread_speed_gb_s";
    pub(crate) const TOTAL_SPEED_GB_S: &str = "total_speed_gb_s";
    /// With `-m`: perf's NUMA-convergence latency.
    pub(crate) const CONVERGENCE_LATENCY_S: &str = "convergence_latency_s";
    /// With `-c` or `-m`: when the run last converged.
    pub(crate) const CONVERGED_AT_S: &str = "converged_at_s";
    /// With `--memory-per-node`: from when on the memory stayed with the
    /// tasks, node by node (the memory side of convergence).
    pub(crate) const MEMORY_CONVERGED_AT_S: &str = "memory_converged_at_s";
    /// Fork to the last task through the startup barrier.
    pub(crate) const STARTUP_S: &str = "startup_s";
    /// /proc/vmstat counters over a run, under the kernel's own names (the
    /// other two are shared: `names::metric::NUMA_HINT_FAULTS`,
    /// `names::metric::NUMA_PAGES_MIGRATED`).
    pub(crate) const NUMA_PTE_UPDATES: &str = "numa_pte_updates";
    pub(crate) const NUMA_HUGE_PTE_UPDATES: &str = "numa_huge_pte_updates";
    pub(crate) const NUMA_HINT_FAULTS_LOCAL: &str = "numa_hint_faults_local";
}

/// Raw per-task samples of a `mem` record.
pub(crate) mod sample {
    pub(crate) const TASK_RUNTIME_S: &str = "task_runtime_s";
    pub(crate) const TASK_DATA_GB: &str = "task_data_gb";
    pub(crate) const TASK_LOOPS: &str = "task_loops";
}

/// Series of a `mem` record.
pub(crate) mod series {
    /// Tasks on each node, once a second (with `-c` or `-m`).
    pub(crate) const TASKS_PER_NODE: &str = "tasks_per_node";
    /// MiB of the tasks' memory on each node, once a second (with
    /// `--memory-per-node`): the series `autonuma` records.
    pub(crate) const MEMORY_PER_NODE: &str =
        crate::results::names::autonuma::series::MEMORY_PER_NODE;
}
