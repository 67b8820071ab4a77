//! Record, param and metric names of the `autonuma` probe alone.

/// Params of a run's record (and of a test's summary record).
pub(crate) mod param {
    /// Which run of its test (from 1).
    pub(crate) const RUN: &str = "run";
    /// Runs of a test (summary record).
    pub(crate) const RUNS: &str = "runs";
    /// Runs of a test that converged (summary record).
    pub(crate) const CONVERGED_RUNS: &str = "converged_runs";
    /// M as the benchmark has it, before scaling or `--mem`.
    pub(crate) const SEED_SIZE_BYTES: &str = "seed_size_bytes";
    /// Whose memory M is: [`MEMORY_THREAD`] or [`MEMORY_PROCESS`].
    pub(crate) const MEMORY: &str = "memory";
    pub(crate) const MEMORY_THREAD: &str = "thread";
    pub(crate) const MEMORY_PROCESS: &str = "process";
    pub(crate) const NR_CPUS: &str = "nr_cpus";
    pub(crate) const START_NODE: &str = "start_node";
    pub(crate) const CPU_NODES: &str = "cpu_nodes";
    pub(crate) const INTERVAL_S: &str = "interval_s";
    pub(crate) const TOLERANCE_PCT: &str = "tolerance_pct";
    pub(crate) const CONVERGED: &str = "converged";
    pub(crate) const LOOKS: &str = "looks";
    pub(crate) const LOOKS_DROPPED: &str = "looks_dropped";
    pub(crate) const UNREADABLE_FILES: &str = "unreadable_files";
    pub(crate) const LOOPS_MIN: &str = "loops_min";
    pub(crate) const LOOPS_MAX: &str = "loops_max";
    /// How the looks found the memory at the end: `sampled` or `exact`.
    pub(crate) const LOOK_METHOD: &str = "look_method";
    pub(crate) const FINAL_SHARE_PCT: &str = "final_share_pct";
    /// The work: passes per thread, or seconds.
    pub(crate) const LOOPS: &str = "loops";
    pub(crate) const SECS: &str = "secs";
    pub(crate) const SAMPLED_LOOKS: &str = "sampled_looks";
    pub(crate) const EXACT_LOOKS: &str = "exact_looks";
    /// `--sample-pages`; absent with `--exact`.
    pub(crate) const SAMPLE_PAGES: &str = "sample_pages";
    pub(crate) const SAMPLED_PAGES_MAX: &str = "sampled_pages_max";
    pub(crate) const SAMPLE_STRIDE_MAX: &str = "sample_stride_max";
    pub(crate) const CARRIED_PCT_MAX: &str = "carried_pct_max";
    pub(crate) const POLICIES_SEEN: &str = "policies_seen";
    /// How many of a run record's notes, from the first, are its plan's
    /// (the test's scaling and defaults); the notes on how the run was
    /// watched and how it went follow them.
    pub(crate) const PLAN_NOTES: &str = "plan_notes";
    /// How the run placed threads and memory: `hard_bind` or
    /// `inverse_bind` for a baseline; absent for the test itself.
    pub(crate) const BIND: &str = "bind";
    /// A baseline's tasks last seen outside the CPUs they were bound to.
    pub(crate) const TASKS_OFF_CPUS: &str = "tasks_off_cpus";
    /// Summary: what the position compares, `runtime_s` or `gb_s`.
    pub(crate) const POSITION_BY: &str = "position_by";
    /// Summary: the baselines' means, in the unit of `position_by`.
    pub(crate) const HARD_BIND_VALUE: &str = "hard_bind_value";
    pub(crate) const INVERSE_BIND_VALUE: &str = "inverse_bind_value";
}

/// Metrics of a run's record (and of a test's summary record).
pub(crate) mod metric {
    pub(crate) const USER_S: &str = "user_s";
    pub(crate) const SYSTEM_S: &str = "system_s";
    pub(crate) const SAMPLING_OVERHEAD_PCT: &str = "sampling_overhead_pct";
    pub(crate) const DATA_GB: &str = "data_gb";
    pub(crate) const CORES_WITH_TWO_THREADS_END: &str = "cores_with_two_threads_end";
    pub(crate) const CORES_WITH_TWO_THREADS_MAX: &str = "cores_with_two_threads_max";
    pub(crate) const RUNTIME_STDDEV_S: &str = "runtime_stddev_s";
    pub(crate) const CONVERGENCE_MEAN_S: &str = "convergence_mean_s";
    /// Summary: where the test lies from INVERSE_BIND (0%) to HARD_BIND
    /// (100%).
    pub(crate) const POSITION_PCT: &str = "position_pct";
}

/// Series of a run's record.
pub(crate) mod series {
    pub(crate) const MEMORY_PER_NODE: &str = "memory_per_node";
    pub(crate) const THREADS_PER_NODE: &str = "threads_per_node";
    pub(crate) const CORES_WITH_TWO_THREADS: &str = "cores_with_two_threads";
}
