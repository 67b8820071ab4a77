//! Record, param and metric names of the `sched` probe alone.

/// The records of a run: one per task, then the summary.
pub(crate) mod record {
    /// The run's totals, burst and series.
    pub(crate) const SUMMARY: &str = "summary";
    /// In a series of runs each record's name starts `N=<tasks> `.
    pub(crate) const SERIES_PREFIX: &str = "N=";
    /// A task's record is named `task N`, N from 1.
    pub(crate) const TASK: &str = "task";
}

/// Params of a task's record.
pub(crate) mod task {
    /// Its number, from 1: what marks a task's record.
    pub(crate) const TASK: &str = "task";
    pub(crate) const PID: &str = "pid";
    pub(crate) const START_CPU: &str = "start_cpu";
    /// iSched: the node it started on.
    pub(crate) const START_NODE: &str = "start_node";
    /// MSched: the node with most of its time.
    pub(crate) const MOST_TIME_NODE: &str = "most_time_node";
    /// The node with most of its pages at the end of its work.
    pub(crate) const MEMORY_NODE: &str = "memory_node";
    /// MSched differs from iSched.
    pub(crate) const MOVED: &str = "moved";
    /// MSched differs from the memory node.
    pub(crate) const AWAY_FROM_MEMORY: &str = "away_from_memory";
    /// Node id (as a string) to the % of its time there.
    pub(crate) const TIME_PCT_BY_NODE: &str = "time_pct_by_node";
    /// What the shares were counted from (user time, runnable looks, ...).
    pub(crate) const SHARE_BASIS: &str = "share_basis";
    pub(crate) const USER_TICKS_BY_NODE: &str = "user_ticks_by_node";
    pub(crate) const SYSTEM_TICKS_BY_NODE: &str = "system_ticks_by_node";
    pub(crate) const RUNNABLE_LOOKS_BY_NODE: &str = "runnable_looks_by_node";
    pub(crate) const FINISHED: &str = "finished";
    /// Ticks accrued on a CPU of no known node.
    pub(crate) const UNPLACED_TICKS: &str = "unplaced_ticks";
}

/// Metrics of a task's record (besides the shared CPU times and run time).
pub(crate) mod task_metric {
    /// % of its time on the node of its memory.
    pub(crate) const LOCAL_TIME_PCT: &str = "local_time_pct";
}

/// Params of the summary.
pub(crate) mod param {
    pub(crate) const SIZE_ELEMENTS: &str = "size_elements";
    pub(crate) const PASSES: &str = "passes";
    pub(crate) const INTERVAL_MS: &str = "interval_ms";
    /// The node columns of the residency table.
    pub(crate) const NODES: &str = "nodes";
    /// Rounds of looks at the tasks.
    pub(crate) const ROUNDS: &str = "rounds";
    pub(crate) const CLOCK_TICKS_PER_S: &str = "clock_ticks_per_s";
    pub(crate) const FINISHED_TASKS: &str = "finished_tasks";
    pub(crate) const INTERRUPTED_BY_SIGNAL: &str = "interrupted_by_signal";
    /// What happened to the burst: one of [`super::burst_state`].
    pub(crate) const BURST: &str = "burst";
    pub(crate) const BURST_AT_S: &str = "burst_at_s";
    pub(crate) const BURST_GROUPS: &str = "burst_groups";
    pub(crate) const BURST_GROUP_SIZE: &str = "burst_group_size";
    pub(crate) const BURST_LOOPS: &str = "burst_loops";
    pub(crate) const BURST_MESSAGE_BYTES: &str = "burst_message_bytes";
    pub(crate) const BURST_MESSAGES_EXPECTED: &str = "burst_messages_expected";
    pub(crate) const BURST_PID: &str = "burst_pid";
    pub(crate) const BURST_PROCESSES: &str = "burst_processes";
    pub(crate) const BURST_FAILED: &str = "burst_failed";
    pub(crate) const BURST_MESSAGES_SENT: &str = "burst_messages_sent";
    pub(crate) const BURST_MESSAGES_RECEIVED: &str = "burst_messages_received";
    pub(crate) const BURST_COMPLETE: &str = "burst_complete";
    pub(crate) const BURST_FORKED_AT_S: &str = "burst_forked_at_s";
    pub(crate) const BURST_ENDED_AT_S: &str = "burst_ended_at_s";
    /// When the burst's processes were released.
    pub(crate) const BURST_GO_AT_S: &str = "burst_go_at_s";
    /// What carries the burst's messages: `socket` or `pipe`.
    pub(crate) const BURST_TRANSPORT: &str = "burst_transport";
    /// How the array size was chosen (absent: given by `--elements`).
    pub(crate) const SIZE_BASIS: &str = "size_basis";
    /// The last-level cache the size was scaled from.
    pub(crate) const LLC_BYTES: &str = "llc_bytes";
    /// How the passes were chosen (absent: given by `--passes`).
    pub(crate) const PASSES_BASIS: &str = "passes_basis";
    /// Seconds one pass took alone before the run.
    pub(crate) const PASS_S: &str = "pass_s";
    /// The run time the passes aim at.
    pub(crate) const TARGET_RUN_S: &str = "target_run_s";
    /// The task counts of a series this machine left out.
    pub(crate) const SERIES_LEFT_OUT: &str = "series_left_out";
}

/// Metrics of the summary.
pub(crate) mod metric {
    /// E: the first fork to the last task's end.
    pub(crate) const ELAPSED_S: &str = "elapsed_s";
    pub(crate) const TOTAL_USER_TIME_S: &str = "total_user_time_s";
    pub(crate) const TOTAL_SYSTEM_TIME_S: &str = "total_system_time_s";
    pub(crate) const AVERAGE_USER_TIME_S: &str = "average_user_time_s";
    pub(crate) const SAMPLER_CPU_S: &str = "sampler_cpu_s";
    pub(crate) const PARENT_CPU_S: &str = "parent_cpu_s";
    pub(crate) const SAMPLER_OVERHEAD_PCT: &str = "sampler_overhead_pct";
    pub(crate) const SAMPLER_US_PER_ROUND: &str = "sampler_us_per_round";
    pub(crate) const TASKS_MOVED: &str = "tasks_moved";
    pub(crate) const TASKS_AWAY_FROM_MEMORY: &str = "tasks_away_from_memory";
    pub(crate) const BURST_CPU_S: &str = "burst_cpu_s";
    /// H: the burst's release to its last process reaped.
    pub(crate) const BURST_S: &str = "burst_s";
    /// The part of H within E.
    pub(crate) const BURST_WITHIN_TASKS_S: &str = "burst_within_tasks_s";
    /// E - H.
    pub(crate) const ELAPSED_MINUS_BURST_S: &str = "elapsed_minus_burst_s";
}

/// Values of the summary's `burst` param.
pub(crate) mod burst_state {
    pub(crate) const DISABLED: &str = "disabled";
    /// The run stopped before the burst time.
    pub(crate) const NOT_STARTED: &str = "not started";
    /// Every task finished before the burst time.
    pub(crate) const NOT_REACHED: &str = "not reached";
    pub(crate) const RAN: &str = "ran";
}

/// The summary's series of runnable tasks on each node over the run.
pub(crate) const RUNNABLE_SERIES: &str = "runnable tasks per node";
