//! The process workload engine of perf's `perf bench numa mem` (2012):
//! perf's options resolved for this machine (`params`, `lists`), the
//! processes and threads of a run (`tasks`, `parent`, `child`, `worker`)
//! on global, per-process and per-thread memory (`layout`) with perf's
//! access patterns (`sweep`, `lfsr`), what a run reports as it goes and
//! hands back (`outcome`), NUMA convergence (`convergence`), where the
//! memory went (`areas`), the kernel's balancing counters (`vmstat`) and
//! the parent's looks at the running children (`watch`, `memwatch`).
//!
//! Not a probe: `mem` and `autonuma` run it and make their records and
//! views of what it measured; it knows neither of them.

pub(crate) mod areas;
mod child;
pub(crate) mod convergence;
pub(crate) mod layout;
pub(crate) mod lfsr;
pub(crate) mod lists;
pub(crate) mod memwatch;
pub(crate) mod outcome;
pub(crate) mod params;
mod parent;
mod sweep;
pub(crate) mod tasks;
pub(crate) mod vmstat;
pub(crate) mod watch;
pub(crate) mod worker;
